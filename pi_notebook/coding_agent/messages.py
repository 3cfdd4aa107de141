"""The coding agent's four roles, and what the LLM reads of each: Pi's texts, exactly.

The agent core knows only ``user``, ``assistant`` and ``toolResult``. This module declares the roles a coding
agent adds (a shell command the user ran, an extension's note, a branch summary, a compaction summary) and
registers each with :func:`~pi_notebook.agent_core.register_message_type`, the same public call any app
uses; the converter given there is what :func:`~pi_notebook.agent_core.convert_to_llm` sends for it. Importing
this module is what teaches the kernel these roles.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..agent_core import as_agent_message, register_message_type
from ..ai import ImageContent, Number, PiModel, TextContent, UserMessage, now_ms
from ..ai.jstext import js_number


class BashExecutionMessage(PiModel):
    """A shell command the user ran (Pi's ``!cmd``; ``!!cmd`` sets ``exclude_from_context``)."""

    role: Literal["bashExecution"] = "bashExecution"
    """Message tag, always ``"bashExecution"``."""
    command: str
    """The command as typed."""
    output: str = ""
    """Combined stdout+stderr, sanitised, possibly tail-truncated."""
    exit_code: Number | None = None
    """Exit status; ``None`` when the command was killed or cancelled (Pi types it as a number)."""
    cancelled: bool = False
    """True when the user interrupted the command."""
    truncated: bool = False
    """True when ``output`` holds only the tail of the full output."""
    full_output_path: str | None = None
    """Temp file holding the full output, when it was truncated."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""
    exclude_from_context: bool | None = None
    """True for ``!!`` / ``%bash!``: shown and stored, never sent to the LLM."""


class CustomMessage(PiModel):
    """A message injected by an extension; sent to the LLM as a user message even when hidden."""

    role: Literal["custom"] = "custom"
    """Message tag, always ``"custom"``."""
    custom_type: str
    """Id of the extension that made it."""
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator="type")]]
    """What the LLM reads: a string or text/image blocks."""
    display: bool = True
    """UI only: False hides it from the transcript (it is still sent to the LLM)."""
    details: Any = None
    """Structured data for the UI; never sent to the LLM."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


class BranchSummaryMessage(PiModel):
    """A summary of a conversation branch the user navigated away from."""

    role: Literal["branchSummary"] = "branchSummary"
    """Message tag, always ``"branchSummary"``."""
    summary: str
    """The summary text."""
    from_id: str
    """Entry id the branch summary hangs from (``"root"`` for a new root)."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


class CompactionSummaryMessage(PiModel):
    """A summary that replaces the compacted part of the history."""

    role: Literal["compactionSummary"] = "compactionSummary"
    """Message tag, always ``"compactionSummary"``."""
    summary: str
    """The summary text."""
    tokens_before: Number | None
    """Context tokens before compaction (Pi types it as a number: extensions write fractions; JavaScript writes a
    non-finite number as ``null``, which Pi loads and sends all the same, so it loads here too)."""
    timestamp: Number = Field(default_factory=now_ms)
    """Unix milliseconds."""


# --- what the LLM reads ---------------------------------------------------------------------------------

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
# No newline before the closing tag, unlike the compaction suffix: Pi sends it so.
BRANCH_SUMMARY_SUFFIX = "</summary>"


def bash_execution_to_text(message: BashExecutionMessage | dict[str, Any]) -> str:
    """The text the LLM reads for a shell command the user ran."""
    m = as_agent_message(message)
    text = f"Ran `{m.command}`\n"
    text += f"```\n{m.output}\n```" if m.output else "(no output)"
    if m.cancelled:
        text += "\n\n(command cancelled)"
    elif m.exit_code is not None and m.exit_code != 0:
        text += f"\n\nCommand exited with code {js_number(m.exit_code)}"
    if m.truncated and m.full_output_path:
        text += f"\n\n[Output truncated. Full output: {m.full_output_path}]"
    return text


def _llm_timestamp(timestamp: Any) -> Any:
    # A summary or custom message built from an entry without a readable timestamp has ``None`` (Pi: NaN);
    # the LLM message needs a number, and no provider request carries it: 0.
    return 0 if timestamp is None else timestamp


def _user_text(text: str, timestamp: Any) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=_llm_timestamp(timestamp))


def _bash_to_llm(m: BashExecutionMessage) -> UserMessage | None:
    return None if m.exclude_from_context else _user_text(bash_execution_to_text(m), m.timestamp)


def _custom_to_llm(m: CustomMessage) -> UserMessage:
    # ``display`` is a UI setting only: hidden custom messages are still sent.
    if isinstance(m.content, str):
        content: Any = [TextContent(text=m.content)]
    else:
        content = [block.model_copy(deep=True) for block in m.content]
    return UserMessage(content=content, timestamp=_llm_timestamp(m.timestamp))


def _branch_summary_to_llm(m: BranchSummaryMessage) -> UserMessage:
    return _user_text(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX, m.timestamp)


def _compaction_summary_to_llm(m: CompactionSummaryMessage) -> UserMessage:
    return _user_text(COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX, m.timestamp)


register_message_type(BashExecutionMessage, to_llm=_bash_to_llm)
register_message_type(CustomMessage, to_llm=_custom_to_llm)
register_message_type(BranchSummaryMessage, to_llm=_branch_summary_to_llm)
register_message_type(CompactionSummaryMessage, to_llm=_compaction_summary_to_llm)

CodingAgentMessage = BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage
"""For type hints: the four roles this app adds to the core's AgentMessage."""
