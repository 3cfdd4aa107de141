"""What the summarising model reads during compaction: Pi's prompt texts, the conversation flattened to text,
and the lists of files the compacted part touched.

The literal texts are Pi's (``packages/coding-agent/src/core/compaction/compaction.ts`` and ``utils.ts``),
byte for byte: a summary written by this kernel and one written by Pi come from the same request. Lengths and
cuts count UTF-16 code units, as JavaScript strings do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..ai.jstext import js_json_stringify, js_length, js_slice

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and an AI "
    "coding assistant, then produce a structured summary following the exact format specified.\n\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the "
    "structured summary."
)
"""System prompt of every summarisation call."""

SUMMARIZATION_PROMPT = """\
The messages above are a conversation to summarize. Create a structured context checkpoint summary that \
another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""
"""Instructions for a first summary."""

UPDATE_SUMMARIZATION_PROMPT = """\
The messages above are NEW conversation messages to incorporate into the existing summary provided in \
<previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."""
"""Instructions for folding new messages into a previous summary."""

TURN_PREFIX_SUMMARIZATION_PROMPT = """\
This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""
"""Instructions for the start of a turn cut in two (the rest of the turn is kept verbatim)."""

NO_PRIOR_HISTORY = "No prior history."
SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
TOOL_RESULT_MAX_CHARS = 2000


_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def _js_entries(args: dict[str, Any]) -> list[tuple[str, Any]]:
    # ``Object.entries`` lists integer-like keys first, ascending, then the others in insertion order.
    def is_index(key: str) -> bool:
        return _ARRAY_INDEX.fullmatch(key) is not None and int(key) < 2**32 - 1

    indices = sorted((k for k in args if is_index(k)), key=int)
    return [(k, args[k]) for k in indices] + [(k, v) for k, v in args.items() if not is_index(k)]


# --- the conversation as text --------------------------------------------------------------------------


def _texts(content: Any, sep: str = "") -> str:
    if isinstance(content, str):
        return content
    return sep.join(block.text for block in content if block.type == "text")


def _truncate_for_summary(text: str, max_chars: int) -> str:
    length = js_length(text)
    if length <= max_chars:
        return text
    return f"{js_slice(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def serialize_conversation(llm_messages: Iterable[Any]) -> str:
    """LLM messages (after ``convert_to_llm``) as one text, so the summariser reads the conversation instead
    of continuing it: ``[User]: ``, ``[Assistant thinking]: ``, ``[Assistant]: ``,
    ``[Assistant tool calls]: `` and ``[Tool result]: `` parts (tool results cut to 2000 characters),
    separated by blank lines."""
    parts: list[str] = []
    for message in llm_messages:
        if message.role == "user":
            text = _texts(message.content)
            if text:
                parts.append(f"[User]: {text}")
        elif message.role == "assistant":
            thinking = [b.thinking for b in message.content if b.type == "thinking"]
            texts = [b.text for b in message.content if b.type == "text"]
            calls = [
                f"{b.name}({', '.join(f'{k}={js_json_stringify(v)}' for k, v in _js_entries(b.arguments))})"
                for b in message.content
                if b.type == "toolCall"
            ]
            if thinking:
                parts.append(f"[Assistant thinking]: {chr(10).join(thinking)}")
            if texts:
                parts.append(f"[Assistant]: {chr(10).join(texts)}")
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif message.role == "toolResult":
            text = _texts(message.content)
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def summarization_prompt(
    conversation: str, previous_summary: str | None = None, custom_instructions: str | None = None
) -> str:
    """The user message of a summary request: the conversation in ``<conversation>`` tags, the previous
    summary (if any) in ``<previous-summary>`` tags, then the instructions (the update prompt when there is a
    previous summary) with ``Additional focus: ...`` appended for custom instructions."""
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        instructions = f"{instructions}\n\nAdditional focus: {custom_instructions}"
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return text + instructions


def turn_prefix_prompt(conversation: str) -> str:
    """The user message of a turn-prefix summary request."""
    return f"<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"


# --- files the compacted part touched ------------------------------------------------------------------


def file_lists(messages: Iterable[Any], previous_details: dict[str, Any] | None = None) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``: the ``path`` argument of ``read`` / ``write`` / ``edit`` tool calls
    in assistant messages, plus the lists of a previous compaction's details. A file both read and modified
    is listed as modified only; both lists are sorted."""
    read: set[str] = set()
    modified: set[str] = set()
    if isinstance(previous_details, dict):
        for key, target in (("readFiles", read), ("modifiedFiles", modified)):
            if isinstance(previous_details.get(key), list):
                target.update(f for f in previous_details[key] if isinstance(f, str))
    for message in messages:
        if getattr(message, "role", None) != "assistant":
            continue
        for block in message.content:
            if block.type != "toolCall":
                continue
            path = block.arguments.get("path") if isinstance(block.arguments, dict) else None
            if not isinstance(path, str) or not path:
                continue
            if block.name == "read":
                read.add(path)
            elif block.name in ("write", "edit"):
                modified.add(path)
    # JS ``Array.prototype.sort`` compares UTF-16 code units; sorting by the UTF-16 encoding matches it.
    order = lambda f: f.encode("utf-16-be", "surrogatepass")  # noqa: E731
    return sorted(read - modified, key=order), sorted(modified, key=order)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The text appended to a summary: ``\\n\\n<read-files>...</read-files>`` and/or
    ``<modified-files>...</modified-files>`` blocks, or ``""`` when both lists are empty."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
