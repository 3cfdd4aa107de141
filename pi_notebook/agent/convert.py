"""The LLM boundary: AgentMessage[] → (transform_context) → AgentMessage[] → (convert_to_llm) → Message[].

``transform_context`` works on the rich layer (prune, inject, compact) and ``convert_to_llm`` only
translates, one message at a time, through each role's registered converter. Keeping the stages apart lets
an app change one without touching the other. The coding agent's roles and their texts follow Pi exactly.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, NamedTuple

from ..ai import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from .messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    OpaqueMessage,
    as_agent_message,
    message_type,
    register_message_type,
)

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
# No newline before the closing tag, unlike the compaction suffix: Pi sends it so.
BRANCH_SUMMARY_SUFFIX = "</summary>"

_LLM_CLASSES = (UserMessage, AssistantMessage, ToolResultMessage)


def bash_execution_to_text(message: BashExecutionMessage | dict[str, Any]) -> str:
    """The text the LLM reads for a shell command the user ran."""
    m = as_agent_message(message)
    text = f"Ran `{m.command}`\n"
    text += f"```\n{m.output}\n```" if m.output else "(no output)"
    if m.cancelled:
        text += "\n\n(command cancelled)"
    elif m.exit_code is not None and m.exit_code != 0:
        text += f"\n\nCommand exited with code {m.exit_code}"
    if m.truncated and m.full_output_path:
        text += f"\n\n[Output truncated. Full output: {m.full_output_path}]"
    return text


def _user_text(text: str, timestamp: Any) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def _bash_to_llm(m: BashExecutionMessage) -> UserMessage | None:
    return None if m.exclude_from_context else _user_text(bash_execution_to_text(m), m.timestamp)


def _custom_to_llm(m: CustomMessage) -> UserMessage:
    # ``display`` is a UI setting only: hidden custom messages are still sent.
    if isinstance(m.content, str):
        content: Any = [TextContent(text=m.content)]
    else:
        content = [block.model_copy(deep=True) for block in m.content]
    return UserMessage(content=content, timestamp=m.timestamp)


def _branch_summary_to_llm(m: BranchSummaryMessage) -> UserMessage:
    return _user_text(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX, m.timestamp)


def _compaction_summary_to_llm(m: CompactionSummaryMessage) -> UserMessage:
    return _user_text(COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX, m.timestamp)


def _unchanged(m: Any) -> Any:
    return m


# Built-ins register through the same public call apps use.
for _cls in _LLM_CLASSES:
    register_message_type(_cls, to_llm=_unchanged)
register_message_type(BashExecutionMessage, to_llm=_bash_to_llm)
register_message_type(CustomMessage, to_llm=_custom_to_llm)
register_message_type(BranchSummaryMessage, to_llm=_branch_summary_to_llm)
register_message_type(CompactionSummaryMessage, to_llm=_compaction_summary_to_llm)


def _to_llm(message: Any) -> list[Any]:
    """What the LLM sees of one AgentMessage (possibly nothing)."""
    if isinstance(message, OpaqueMessage):
        return []
    registration = message_type(getattr(message, "role", None))
    if registration is None or registration.to_llm is None:
        return []
    out = registration.to_llm(message)
    if out is None:
        return []
    produced = [out] if isinstance(out, _LLM_CLASSES) else list(out)
    for item in produced:
        if not isinstance(item, _LLM_CLASSES):
            raise TypeError(
                f"the converter of role {registration.role!r} returned {type(item).__name__}, "
                "expected UserMessage, AssistantMessage or ToolResultMessage"
            )
    return produced


def convert_to_llm(messages: Iterable[Any]) -> list[Any]:
    """AgentMessage[] → Message[] with Pi's rules: LLM roles pass through, custom roles are translated,
    ``exclude_from_context`` and unknown roles are dropped. Accepts typed messages or Pi JSON dicts."""
    result: list[Any] = []
    for message in messages:
        result.extend(_to_llm(as_agent_message(message)))
    return result


# --- visibility ----------------------------------------------------------------------------------------


class Visibility(NamedTuple):
    """Who sees a message: the UI (transcript) and/or the LLM."""

    ui: bool
    llm: bool

    @property
    def level(self) -> str:
        """``"both"``, ``"ui"`` (e.g. ``%bash!``), ``"llm"`` (``display=False``) or ``"none"``."""
        return {(True, True): "both", (True, False): "ui", (False, True): "llm"}.get(self, "none")


def visibility(message: Any) -> Visibility:
    """The visibility of one AgentMessage: shown unless it has ``display=False``; sent if its converter
    produces anything."""
    m = as_agent_message(message)
    ui = getattr(m, "display", True) is not False
    return Visibility(ui=ui, llm=bool(_to_llm(m)))


# --- the two-stage pipeline ----------------------------------------------------------------------------


class ContextPipelineError(RuntimeError):
    """A stage of the LLM boundary failed; ``stage`` names it and ``__cause__`` holds the original error."""

    def __init__(self, stage: str, message: str):
        self.stage = stage
        super().__init__(f"{stage} failed: {message}")


TransformContext = Callable[[list[Any]], "list[Any] | Awaitable[list[Any]]"]
Convert = Callable[[list[Any]], "list[Any] | Awaitable[list[Any]]"]


def _checked_list(stage: str, value: Any) -> list[Any]:
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Sequence):
        raise ContextPipelineError(stage, f"expected a list of messages, got {type(value).__name__}")
    return list(value)


def _run_stage(stage: str, fn: Callable[..., Any], messages: list[Any], *extra: Any) -> Any:
    try:
        return fn(messages, *extra)
    except Exception as e:
        raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e


def _check_llm(value: Any) -> list[Any]:
    out = _checked_list("convert_to_llm", value)
    for m in out:
        if not isinstance(m, _LLM_CLASSES):
            raise ContextPipelineError("convert_to_llm", f"produced a {type(m).__name__}, not an LLM Message")
    return out


def prepare_llm_messages(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
) -> list[Any]:
    """Run ``transform_context`` (optional) then ``convert`` on a copy of ``messages``, in Pi's order.

    A stage that raises, returns something that is not a list, or produces non-Messages gives a
    :class:`ContextPipelineError` naming the stage. Use :func:`aprepare_llm_messages` for async stages.
    """
    staged = [as_agent_message(m) for m in messages]
    if transform_context is not None:
        out = _sync_stage("transform_context", transform_context, staged)
        staged = [as_agent_message(m) for m in _checked_list("transform_context", out)]
    return _check_llm(_sync_stage("convert_to_llm", convert, staged))


def _sync_stage(stage: str, fn: Callable[..., Any], messages: list[Any]) -> Any:
    out = _run_stage(stage, fn, messages)
    if inspect.isawaitable(out):
        if inspect.iscoroutine(out):
            out.close()  # never awaited: close it so Python does not warn
        raise ContextPipelineError(stage, "is async: use aprepare_llm_messages")
    return out


def takes_signal(fn: Callable[..., Any]) -> bool:
    """True if ``fn`` accepts a second positional argument: Pi's ``transformContext(messages, signal)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


async def _await_stage(stage: str, fn: Callable[..., Any], messages: list[Any], *extra: Any) -> Any:
    out = _run_stage(stage, fn, messages, *extra)
    if inspect.isawaitable(out):
        try:
            out = await out
        except Exception as e:
            raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e
    return out


async def aprepare_llm_messages(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
    *,
    signal: Any = None,
) -> list[Any]:
    """Async :func:`prepare_llm_messages`: either stage may be a coroutine function. A ``transform_context``
    that takes a second argument gets ``signal`` (the run's abort signal), as Pi's does: a compaction it
    starts can then be stopped."""
    staged = [as_agent_message(m) for m in messages]
    if transform_context is not None:
        extra = (signal,) if signal is not None and takes_signal(transform_context) else ()
        out = await _await_stage("transform_context", transform_context, staged, *extra)
        staged = [as_agent_message(m) for m in _checked_list("transform_context", out)]
    return _check_llm(await _await_stage("convert_to_llm", convert, staged))
