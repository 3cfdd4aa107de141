"""Summaries of an abandoned conversation branch (Pi's branch summarization), with or without a model.

When the user goes back to an earlier point and continues from there, the branch left behind becomes one
``branchSummary`` message, so the model still knows what was tried. With a model, the summary follows Pi's
structured prompt; without one (offline, tests, a failing provider), a deterministic digest of the prompts,
commands, tool calls and answers is written instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import convert_to_llm
from ..ai import Context, Model, TextContent, UserMessage, complete
from .compaction import estimate_tokens
from .compaction_prompts import SUMMARIZATION_SYSTEM_PROMPT, file_lists, format_file_operations, serialize_conversation
from .digest import digest

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)

BRANCH_SUMMARY_PROMPT = """\
Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

NOTHING_TO_SUMMARIZE = "No content to summarize"


class BranchSummaryError(RuntimeError):
    """The model could not summarise the branch (the text says why)."""


@dataclass
class BranchSummary:
    """A summary text (preamble included) and the files the branch read or changed."""

    summary: str
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)

    @property
    def details(self) -> dict[str, list[str]]:
        """Pi's ``branch_summary`` entry details."""
        return {"readFiles": self.read_files, "modifiedFiles": self.modified_files}


def _within_budget(messages: Sequence[Any], budget: int) -> list[Any]:
    # Newest first, as Pi does: when the branch is long, its end matters most. Tool results are left out
    # (the assistant's call says what ran).
    kept: list[Any] = []
    total = 0
    for message in reversed([m for m in messages if getattr(m, "role", None) != "toolResult"]):
        tokens = estimate_tokens(message)
        if budget > 0 and total + tokens > budget:
            if getattr(message, "role", None) in ("branchSummary", "compactionSummary") and total < budget * 0.9:
                kept.insert(0, message)
            break
        kept.insert(0, message)
        total += tokens
    return kept


async def summarize_branch(
    messages: Sequence[Any],
    model: Model,
    *,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    previous_details: dict[str, Any] | None = None,
    **stream_options: Any,
) -> BranchSummary:
    """Summarise abandoned AgentMessages (chronological) with ``model``, as Pi's ``generateBranchSummary``;
    the file lists also take ``previous_details`` (those of summaries inside the branch).

    Raises :class:`BranchSummaryError` if the call fails or is aborted.
    """
    chosen = _within_budget(messages, (model.context_window or 128_000) - reserve_tokens)
    read, modified = file_lists(messages, previous_details)
    if not chosen:
        return BranchSummary(NOTHING_TO_SUMMARIZE, read, modified)
    conversation = serialize_conversation(convert_to_llm(chosen))
    prompt = f"<conversation>\n{conversation}\n</conversation>\n\n{custom_instructions or BRANCH_SUMMARY_PROMPT}"
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=prompt)])]
    )
    try:
        response = await complete(model, context, max_tokens=2048, **stream_options)
    except Exception as e:  # e.g. no provider for this api: a failed summary, never a crash
        raise BranchSummaryError(f"Branch summarization failed: {e}") from e
    if response.stop_reason in ("error", "aborted"):
        raise BranchSummaryError(f"Branch summarization failed: {response.error_message or response.stop_reason}")
    text = "\n".join(b.text for b in response.content if b.type == "text")
    summary = BRANCH_SUMMARY_PREAMBLE + text + format_file_operations(read, modified)
    return BranchSummary(summary, read, modified)


def describe_branch(messages: Sequence[Any], previous_details: dict[str, Any] | None = None) -> BranchSummary:
    """A summary written without a model: the prompts, shell commands, tool calls and answers, clipped. The file
    lists also take ``previous_details`` (those of summaries inside the branch)."""
    read, modified = file_lists(messages, previous_details)
    body = digest(messages) or NOTHING_TO_SUMMARIZE
    return BranchSummary(BRANCH_SUMMARY_PREAMBLE + body + format_file_operations(read, modified), read, modified)
