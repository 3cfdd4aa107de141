"""What each role shows in a static form, described once: the plain text, the Markdown and the saved HTML write it.

:func:`message_form` turns one AgentMessage (typed or Pi JSON) into a :class:`Form`: a header (a label of ours, a
name the message gives, marks such as visibility), the look a view gives the role, a list of parts (prose, blocks
shown exactly, single lines, code spans, thinking, tool calls) and an assistant's usage footer. The writers are
elsewhere: ``text/plain`` and ``text/markdown`` in :mod:`~pi_notebook.notebook.render`, the saved ``text/html`` in
:mod:`~pi_notebook.notebook.saved`; none reads another's output. A role this module does not know (one an app
registered, an :class:`~pi_notebook.agent_core.OpaqueMessage`) still gets a form: its name and its JSON.

Everything in a form but its labels and marks came from a model, a tool, a shell or an extension: it is untrusted,
and each writer escapes it for its own format. Timestamps and tool call ids are left out on purpose: they change
on every run, and strict nbval compares ``text/plain``. Pure functions, no I/O, no IPython.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ..agent_core import OpaqueMessage, from_pi_json, to_pi_json, visibility
from ..ai import AssistantMessage, ImageContent, TextContent, ThinkingContent
from ..ai.types import ToolCall, ToolResultMessage, UserMessage
from ..coding_agent import BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from ..coding_agent.secrets import has_masked
from ..coding_agent.tools.shell_output import sanitize_output
from .cell_message import NotebookCellMessage

__all__ = [
    "Block", "Call", "Codes", "Form", "Header", "Line", "Look", "Part", "Prose", "Thinking", "clean", "message_form",
    "one_line",
]  # fmt: skip

# --- cleaning: what no form shows ------------------------------------------------------------------------


def clean(s: Any) -> str:
    """Remove ANSI codes and every control character but ``\\n`` and ``\\t``, as the recorded shell output is cleaned
    (the rules are written once, in :mod:`~pi_notebook.coding_agent.tools.shell_output`)."""
    return sanitize_output(str(s))


def one_line(s: Any) -> str:
    """``s`` cleaned, its lines joined by spaces."""
    return " ".join(clean(s).split("\n"))


# --- the description -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    """A message's first line."""

    label: str
    """Ours: ``"User"``, ``"Tool result"`` (the plain text writes it in lower case); with ``caption``, the whole
    heading, which holds untrusted text (a summary's ``"Branch summary (from <id>)"``), written as it is."""
    name: str | None = None
    """Untrusted: a tool, custom type or role name, shown after the label."""
    marks: tuple[str, ...] = ()
    """Ours: ``"not sent to the LLM"``, ``"✗ error"``, ``"streaming…"``..."""
    caption: bool = False
    """Whether ``label`` is a caption (untrusted, kept in its case) rather than a role's label."""


@dataclass(frozen=True)
class Prose:
    """Markdown written by a model, a user or an extension (empty or blank: not shown)."""

    text: str


@dataclass(frozen=True)
class Block:
    """Text shown exactly, on lines of its own: a tool's or a shell's output, JSON, a long error."""

    text: str
    lang: str = ""
    """A hint for a Markdown fence's highlighting (``"sh"``, ``"json"``)."""


@dataclass(frozen=True)
class Line:
    """One line of untrusted text, after an optional label of ours (``"✗ error:"``, ``"Reason:"``)."""

    text: str
    label: str = ""


@dataclass(frozen=True)
class Codes:
    """Short untrusted texts on one line, each shown exactly (a command, a shell's status)."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Thinking:
    """An assistant's reasoning: its text, or that it was redacted (blank text: not shown)."""

    text: str
    redacted: bool = False


@dataclass(frozen=True)
class Call:
    """A tool call: the tool's name and its arguments as one line of JSON (its id is left out)."""

    name: str
    arguments: str


Part = Prose | Block | Line | Codes | Thinking | Call
"""One piece of a message's body; each writer has one rule per kind."""

Look = Literal["user", "assistant", "toolResult", "shell", "summary", "custom", "other"]


@dataclass(frozen=True)
class Form:
    """One message as every static view shows it."""

    look: Look
    """The family of the role, which gives it its look (a colour) where a view has one."""
    header: Header
    """Its first line."""
    parts: tuple[Part, ...]
    """What it holds, in order (ids, timestamps and a tool result's details left out)."""
    footer: str | None = None
    """A finished assistant message's model, stop reason and usage: a quiet last line, which the saved HTML
    leaves to the live view and the JSON."""


# --- small formatters -------------------------------------------------------------------------------------


def _num(n: Any) -> str:
    if not isinstance(n, (int, float)) or n != n or n in (float("inf"), float("-inf")):
        return "?"
    return f"{int(n):,}" if float(n).is_integer() else f"{n:,}"


def _cost(usd: float) -> str:
    return "<$0.0001" if usd < 0.0001 else f"${usd:.4f}" if usd < 1 else f"${usd:,.2f}"


def _image_label(block: ImageContent) -> str:
    data = "".join(block.data.split())
    size = len(data) * 3 // 4 - data[-2:].count("=")
    units = ((2**20, "MB", ".1f"), (1024, "KB", ".0f"), (1, "B", ".0f"))
    scale, unit, spec = next(u for u in units if size >= u[0] or u[0] == 1)
    return f"[image: {one_line(block.mime_type)}, {size / scale:{spec}} {unit}]"


def _visibility_mark(message: Any) -> tuple[str, ...]:
    try:
        level = visibility(message).level
    except Exception as e:  # an app's converter failed: say so rather than break the display
        return (f"visibility unknown: {type(e).__name__}",)
    mark = {"ui": "not sent to the LLM", "llm": "hidden — LLM only", "none": "not shown, not sent"}.get(level)
    return (mark,) if mark else ()


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _content(content: Any) -> list[Part]:
    """User-style content: a string, or text and image blocks."""
    blocks = [TextContent(text=content)] if isinstance(content, str) else content
    shown = [b for b in blocks if isinstance(b, (ImageContent, TextContent))]
    return [Line(_image_label(b)) if isinstance(b, ImageContent) else Prose(b.text) for b in shown]


# --- one form per role ------------------------------------------------------------------------------------


def _user(m: UserMessage) -> Form:
    return Form("user", Header("User"), tuple(_content(m.content)))


def _footer(m: AssistantMessage) -> str:
    u = m.usage
    parts = [m.model, m.stop_reason]
    parts += [f"{_num(u.input)} in / {_num(u.output)} out"] if u.input or u.output else []
    cache = ((u.cache_read, "cache read"), (u.cache_write, "cache write"))
    parts += [f"{_num(n)} {kind}" for n, kind in cache if n]
    parts += [_cost(u.cost.total)] if u.cost.total else []
    return " · ".join(str(p) for p in parts)


def _assistant(m: AssistantMessage, streaming: bool) -> Form:
    parts: list[Part] = []
    for block in m.content:
        if isinstance(block, ThinkingContent):
            parts.append(Thinking(block.thinking, bool(block.redacted)))
        elif isinstance(block, TextContent):
            parts.append(Prose(block.text))
        elif isinstance(block, ToolCall):
            arguments = json.dumps(block.arguments, ensure_ascii=False, separators=(", ", ": "), default=str)
            parts.append(Call(block.name, arguments))
    if m.stop_reason in ("error", "aborted") and not streaming:
        label = f"✗ {m.stop_reason}"
        message = (m.error_message or "").strip()
        if "\n" in message:
            parts += [Line("", label + ":"), Block(message)]
        else:
            parts.append(Line(message, label + (":" if message else "")))
    header = Header("Assistant", marks=("streaming…",) if streaming else ())
    return Form("assistant", header, tuple(parts), None if streaming else _footer(m))


_MASKED_MARK = "secrets masked"


def _tool_result(m: ToolResultMessage) -> Form:
    marks: tuple[str, ...] = ("✗ error",) if m.is_error else ()
    marks += (_MASKED_MARK,) if any(has_masked(getattr(block, "text", None)) for block in m.content) else ()
    if m.tool_name == "python":
        return Form("toolResult", Header("Tool result", m.tool_name, marks), _agent_cell_parts(m))
    parts = [Line(_image_label(b)) if isinstance(b, ImageContent) else Block(b.text) for b in m.content]
    return Form("toolResult", Header("Tool result", m.tool_name, marks), tuple(parts or [Line("(no output)")]))


_RULE = "-" * 75  # IPython's traceback opens with it


def _split_failure(text: str) -> tuple[str, str, str]:
    """A failed ``python`` result's text as (output, the error's line, traceback): the traceback after IPython's
    rule of dashes, else the last paragraph (a timeout, the stop button, a SyntaxError)."""
    at = 0 if text.startswith(_RULE) else text.find("\n" + _RULE)
    if at >= 0:
        output, tail = text[:at].rstrip("\n"), text[at:].lstrip("\n")
    else:
        output, _, tail = text.rpartition("\n\n")
    lines = tail.rstrip("\n").split("\n")
    return output, lines[-1], tail.rstrip("\n") if len(lines) > 1 else ""


def _agent_cell_parts(m: ToolResultMessage) -> tuple[Part, ...]:
    """The ``python`` tool's result as a notebook cell's outputs: what it printed, its pictures, its error (the
    code is in the call, just above)."""
    text = "\n".join(b.text for b in m.content if isinstance(b, TextContent))
    output, error, traceback = _split_failure(text) if m.is_error else (text, "", "")
    parts: list[Part] = [Block(output)] if output and output != "(no output)" else []
    parts += [Line(_image_label(b)) for b in m.content if isinstance(b, ImageContent)]
    if m.is_error:
        parts.append(Line(one_line(error), "✗ error:"))
        parts += [Block(traceback)] if traceback else []
    return tuple(parts or [Line("(no output)")])


def _bash(m: BashExecutionMessage) -> Form:
    command = clean(m.command).strip("\n")
    parts: list[Part] = [Block("$ " + command, "sh") if "\n" in command else Codes(("$ " + command,))]
    parts.append(Block(m.output) if m.output else Line("(no output)"))
    status = ["cancelled"] if m.cancelled else [] if m.exit_code is None else [f"exit {m.exit_code}"]
    if m.truncated:
        status.append(f"truncated — full output: {m.full_output_path}" if m.full_output_path else "truncated")
    if has_masked(m.output) or has_masked(m.command):
        status.append(_MASKED_MARK)
    parts += [Codes(tuple(status))] if status else []
    return Form("shell", Header("Shell", marks=_visibility_mark(m)), tuple(parts))


def _notebook_cell(m: NotebookCellMessage) -> Form:
    """A cell the user ran, as Jupyter shows one: its source, what it printed, its pictures, its error."""
    parts: list[Part] = [Block(clean(m.source).strip("\n"), "python")]
    if m.output:
        parts.append(Block(m.output))
    parts += [Line(_image_label(image)) for image in m.images]
    if m.error is not None:
        head = f"{m.error.name}: {m.error.value}" if m.error.value else m.error.name
        parts.append(Line(one_line(head), "✗ error:"))
        parts += [Block(m.error.traceback)] if m.error.traceback else []
    if not (m.output or m.images or m.error):
        parts.append(Line("(no output)"))
    parts += [Line(one_line(line)) for line in m.omitted]
    status = ["cancelled"] if m.cancelled else []
    if m.truncated:
        status.append(f"truncated — full output: {m.full_output_path}" if m.full_output_path else "truncated")
    if has_masked(m.output) or has_masked(m.source):
        status.append(_MASKED_MARK)
    parts += [Codes(tuple(status))] if status else []
    marks = _visibility_mark(m) + (("✗ error",) if m.error is not None else ())
    count = f"In [{m.execution_count}]" if m.execution_count is not None else None
    return Form("shell", Header("Notebook cell", count, marks), tuple(parts))


def _custom(m: CustomMessage) -> Form:
    return Form("custom", Header("Custom", m.custom_type, _visibility_mark(m)), tuple(_content(m.content)))


def _branch_summary(m: BranchSummaryMessage) -> Form:
    return Form("summary", Header(f"Branch summary (from {m.from_id})", caption=True), (Prose(m.summary),))


def _compaction_summary(m: CompactionSummaryMessage) -> Form:
    caption = f"Compaction summary ({_num(m.tokens_before)} tokens before)"
    return Form("summary", Header(caption, caption=True), (Prose(m.summary),))


def _opaque(m: OpaqueMessage) -> Form:
    reason = m.reason.strip()
    parts: list[Part] = [Line("" if "\n" in reason else reason, "Reason:")]
    parts += [Block(reason)] if "\n" in reason else []
    parts.append(Block(_json(m.raw), "json"))
    return Form("other", Header("Unknown message", repr(m.role), _visibility_mark(m)), tuple(parts))


def _other(m: Any) -> Form:
    """A role an app registered: its name and its JSON."""
    header = Header("Message", str(getattr(m, "role", type(m).__name__)), _visibility_mark(m))
    return Form("other", header, (Block(_json(to_pi_json(m) if hasattr(m, "to_pi_json") else repr(m)), "json"),))


_FORMS: dict[type, Any] = {
    UserMessage: _user,
    ToolResultMessage: _tool_result,
    BashExecutionMessage: _bash,
    NotebookCellMessage: _notebook_cell,
    CustomMessage: _custom,
    BranchSummaryMessage: _branch_summary,
    CompactionSummaryMessage: _compaction_summary,
    OpaqueMessage: _opaque,
}


def message_form(message: Any, *, streaming: bool = False) -> Form:
    """The :class:`Form` of one AgentMessage (typed or Pi JSON). ``streaming`` marks a partial assistant message
    and leaves out its footer and error line (its stop reason and usage are not known yet)."""
    m = from_pi_json(message) if isinstance(message, dict) else message
    if isinstance(m, AssistantMessage):
        return _assistant(m, streaming)
    return next((f for cls, f in _FORMS.items() if isinstance(m, cls)), _other)(m)
