"""Readable text and Markdown for AgentMessages: the fallback that is always in a cell's mimebundle.

Rich widget views come and go (VS Code without widgets, GitHub, nbconvert, strict nbval); ``text/plain`` and
``text/markdown`` from this module are always there. Pure functions, no I/O, no IPython.

Everything a message holds came from a model, a tool, a shell or an extension, so it is untrusted. In
Markdown, ``<``, ``>`` and ``&`` outside code are HTML-escaped; code and outputs go in fences longer than any
backtick run they contain, so they cannot be closed from inside. A model's own fenced blocks are re-emitted
in such fences (their text stays exact), and an inline code span holding ``<``/``>``/``&`` becomes an escaped
``<code>`` element. A Markdown link, image or reference definition whose destination a renderer could read as a
URL with a scheme other than ``http``, ``https`` or ``mailto`` (``javascript:``, ``data:``, ``vbscript:`` ...,
also spelled with entities or backslash escapes) is shown as its text, not as a link: many renderers (nbconvert's
among them) do not filter link URLs. ANSI escape codes are removed from both forms. Timestamps and tool call ids
are left out on purpose: they change on every run, and strict nbval compares ``text/plain``.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..agent_core import OpaqueMessage, from_pi_json, to_pi_json, visibility
from ..ai import AssistantMessage, ImageContent, TextContent, ThinkingContent
from ..ai.types import ToolCall, ToolResultMessage, UserMessage
from ..coding_agent import BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from ..coding_agent.secrets import has_masked

__all__ = ["MessagesView", "message_markdown", "message_text", "messages_mimebundle"]

# --- cleaning and escaping -----------------------------------------------------------------------------

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS / SOS / PM / APC strings
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|$])")
_HTML_CHARS = re.compile(r"[<>&]")
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_TICK_RUN = re.compile(r"`+")
_LANG = re.compile(r"[^\w+#.-]")


def _clean(s: Any) -> str:
    """Remove ANSI codes and every control character but ``\\n`` and ``\\t``, as Pi's shell output does."""
    return _CONTROL.sub("", _ANSI.sub("", str(s)))


def _one_line(s: Any) -> str:
    return " ".join(_clean(s).split("\n"))


def _md_text(s: Any) -> str:
    """Untrusted text inside our own Markdown line: HTML escaped, Markdown syntax neutralised."""
    return html.escape(_MD_SPECIAL.sub(r"\\\1", _one_line(s).strip()), quote=False)


def _longest_run(s: str) -> int:
    return max((len(m) for m in _TICK_RUN.findall(s)), default=0)


def _code(s: Any) -> str:
    """An inline code span that shows ``s`` exactly and cannot be broken out of."""
    s = _one_line(s)
    if _HTML_CHARS.search(s) or not s.strip():
        # Entities are not decoded inside a Markdown code span, so escaped text goes in a <code> element.
        return f"<code>{_md_text(s)}</code>"
    ticks = "`" * (_longest_run(s) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def _fence(text: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so the content cannot close it."""
    text = _clean(text).rstrip("\n")
    ticks = "`" * max(3, _longest_run(text) + 1)
    return f"{ticks}{_LANG.sub('', lang)[:30]}\n{text}\n{ticks}"


_LINK_OPENER = re.compile(r"\]([(:])")  # "](" starts an inline destination, "]:" a reference definition's
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME_CHARS = re.compile(r"[a-z][a-z0-9+.-]*")
_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_URL_DROPPED = re.compile(r"[\t\n\r]")  # browsers drop these anywhere in a URL
_URL_LEADING = "".join(map(chr, range(0x21)))  # and these at its start
_CHECKED = (40, 400)  # characters of a destination read to find its scheme: a few, then more if undecided
_TOKEN_START = re.compile(r"[^ \t\n]")  # a destination holds no whitespace (the <...> form needs a raw "<")
_TOKEN = re.compile(r"[^ \t\n]*")
_CUT_REFERENCE = re.compile(r"(?:&(?:#[0-9]*|#[xX][0-9a-fA-F]*|[A-Za-z][A-Za-z0-9]*)?|\\)\Z")


def _scheme_of(dest: str, cut: bool) -> str | None:
    """The scheme ``dest`` is read with (``""``: none), or ``None`` when the text read cannot tell."""
    url = dest
    for _ in range(8):
        if cut:  # an entity or escape cut off at the end would decode to another character
            url = _CUT_REFERENCE.sub("", url)
        decoded = _BACKSLASH_ESCAPE.sub(r"\1", html.unescape(url))
        if decoded == url:
            break
        url = decoded
    else:
        return None  # still decoding: no renderer goes that deep, but say nothing is known
    url = _URL_DROPPED.sub("", url).lstrip(_URL_LEADING).lstrip("<").lower()
    name = _SCHEME_CHARS.match(url)
    if name is None:  # no scheme: a path, a fragment, a query (or nothing)
        return None if cut and not url else ""
    if name.end() == len(url):  # letters to the end: a scheme may follow past what was read
        return None if cut else ""
    return name[0] if url[name.end()] == ":" else ""


def _unsafe_destination(text: str, start: int) -> bool:
    """Whether the link destination at ``text[start:]``, as written in our Markdown, could be read by a renderer
    and then a browser as a URL with a scheme other than http(s)/mailto. Entities are decoded until nothing
    changes (mistune decodes a URL twice, a browser once more) and backslash escapes removed, so
    ``&#106;avascript:`` and ``javascript\\:`` count; so does a start too long to tell."""
    for size in _CHECKED:
        dest = _TOKEN.match(text[start : start + size + 1])[0]  # one character more tells it goes on
        scheme = _scheme_of(dest[:size], len(dest) > size)
        if scheme is not None:
            return bool(scheme) and scheme not in _SAFE_SCHEMES
    return True


def _defang_links(line: str, start: int, end: int, next_line: str) -> str:
    """``line[start:end]`` (prose outside code, not yet HTML-escaped) with the opener of every link destination
    that could be read as an unsafe URL (:func:`_unsafe_destination`) backslash-escaped. A destination may go on
    past ``end`` (into what follows on the line) or start on ``next_line``. An escaped opener renders as the
    same characters: the reader sees what was written, as text, not as a link."""
    out, last = [], start
    for m in _LINK_OPENER.finditer(line, start, end):
        found = _TOKEN_START.search(line, m.end())
        if found is None:  # nothing more on this line: the destination may start on the next one
            found = _TOKEN_START.search(next_line)
        unsafe = found is not None and _unsafe_destination(found.string, found.start())
        out.append(line[last : m.start()])
        out.append(f"]\\{m[1]}" if unsafe else m[0])
        last = m.end()
    out.append(line[last:end])
    return "".join(out)


def _escape_line(line: str, next_line: str = "") -> str:
    """HTML-escape one line of prose, keeping inline code spans readable; neutralise unsafe link destinations
    (``next_line`` is where a destination that the line's last opener starts may continue)."""
    out: list[str] = []
    pos = 0

    def prose(start: int, end: int) -> str:
        return html.escape(_defang_links(line, start, end, next_line), quote=False)

    for run in _TICK_RUN.finditer(line):
        if run.start() < pos:
            continue  # inside a span already emitted
        before = line[: run.start()]
        closer = next((m for m in _TICK_RUN.finditer(line, run.end()) if len(m[0]) == len(run[0])), None)
        if closer is None or (len(before) - len(before.rstrip("\\"))) % 2:
            continue  # no closing run, or an escaped backtick: literal text
        out.append(prose(pos, run.start()))
        inner = line[run.end() : closer.start()]
        if _HTML_CHARS.search(inner):
            if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
                inner = inner[1:-1]
            out.append(f"<code>{_md_text(inner)}</code>")
        else:
            out.append(line[run.start() : closer.end()])
        pos = closer.end()
    out.append(prose(pos, len(line)))
    escaped = "".join(out)
    # Turning a span into <code> may drop the backtick that kept "```x`y`" from opening a fence.
    return re.sub(r"^( {0,3})`(?=``)", r"\1\\`", escaped) if _FENCE_OPEN.match(escaped) else escaped


def _prose(text: str) -> str:
    """Markdown written by a model, user or extension, made safe: HTML escaped outside code, every fenced
    block re-emitted in our own fence (an unclosed one, common while streaming, is closed)."""
    blocks: list[str] = []
    prose: list[str] = []
    code: list[str] | None = None
    indent = char = lang = ""
    lines = _clean(text).split("\n")
    for number, line in enumerate(lines):
        if code is None:
            m = _FENCE_OPEN.match(line)
            if m is None or (m[2][0] == "`" and "`" in m[3]):
                prose.append(_escape_line(line, lines[number + 1] if number + 1 < len(lines) else ""))
                continue
            blocks.append("\n".join(prose))
            prose, code, indent, char = [], [], m[1], m[2]
            lang = (m[3].split() or [""])[0]
        elif re.fullmatch(rf" {{0,3}}{re.escape(char[0])}{{{len(char)},}}[ \t]*", line):
            blocks.append(_fence("\n".join(code), lang))
            code = None
        else:
            code.append(line[len(indent) :] if line.startswith(indent) else line.lstrip(" "))
    blocks.append("\n".join(prose) if code is None else _fence("\n".join(code), lang))
    return "\n\n".join(b for b in blocks if b.strip())


# --- small formatters ----------------------------------------------------------------------------------


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
    return f"[image: {_one_line(block.mime_type)}, {size / scale:{spec}} {unit}]"


def _visibility_mark(message: Any) -> str | None:
    try:
        level = visibility(message).level
    except Exception as e:  # an app's converter failed: say so rather than break the display
        return f"visibility unknown: {type(e).__name__}"
    return {"ui": "not sent to the LLM", "llm": "hidden — LLM only", "none": "not shown, not sent"}.get(level)


class _Out:
    """Collects one message's blocks in Markdown or plain text, so each role is written once."""

    def __init__(self, md: bool):
        self.md = md
        self.blocks: list[str] = []

    def header(self, label: str, name: str | None = None, marks: Iterable[str | None] = ()) -> None:
        """``label`` is ours; ``name`` (a tool, type or role name) is untrusted; ``marks`` are ours too."""
        marks = [m for m in marks if m]
        if self.md:
            line = f"**{label}**" + (f" · {_code(name)}" if name is not None else "")
            self.blocks.append(line + "".join(f" · *{html.escape(m, quote=False)}*" for m in marks))
        else:
            line = f"[{label.lower()}" + (f": {_one_line(name)}" if name is not None else "") + "]"
            self.blocks.append(" ".join([line, *(f"({m})" for m in marks)]))

    def prose(self, text: str) -> None:
        body = _prose(text) if self.md else _clean(text).strip("\n")
        if body.strip():
            self.blocks.append(body)

    def output(self, text: str, lang: str = "") -> None:
        self.blocks.append(_fence(text, lang) if self.md else _clean(text).rstrip("\n"))

    def line(self, text: str, *, bold: str = "") -> None:
        """One line of untrusted text, optionally after a bold label of ours."""
        label = (f"**{bold}** " if self.md else f"{bold} ") if bold else ""
        self.blocks.append((label + (_md_text(text) if self.md else _one_line(text))).rstrip())

    def quiet(self, text: str) -> None:
        self.blocks.append(f"<sub>{_md_text(text)}</sub>" if self.md else f"· {_one_line(text)}")

    def content(self, content: Any) -> None:
        """User-style content: a string, or text and image blocks."""
        for block in [TextContent(text=content)] if isinstance(content, str) else content:
            if isinstance(block, ImageContent):
                self.line(_image_label(block))
            elif isinstance(block, TextContent):
                self.prose(block.text)


# --- one renderer per role -----------------------------------------------------------------------------


def _user(out: _Out, m: UserMessage) -> None:
    out.header("User")
    out.content(m.content)


def _thinking(out: _Out, block: ThinkingContent) -> None:
    lines = _clean(block.thinking).strip("\n").split("\n")
    if block.redacted:
        out.blocks.append("*\\[Reasoning redacted\\]*" if out.md else "    (thinking) [Reasoning redacted]")
    elif "".join(lines).strip() and out.md:
        out.blocks.append(f"<details><summary>Thinking</summary>\n\n{_prose(block.thinking)}\n\n</details>")
    elif "".join(lines).strip():
        out.blocks.append("\n".join(["    (thinking) " + lines[0], *(" " * 15 + x for x in lines[1:])]))


def _tool_call(out: _Out, call: ToolCall) -> None:
    args = json.dumps(call.arguments, ensure_ascii=False, separators=(", ", ": "), default=str)
    if out.md:
        out.blocks.append(f"**→ {_md_text(call.name)}** {_code(args)}")
    else:
        out.blocks.append(f"→ {_one_line(call.name)} {_one_line(args)}")


def _footer(m: AssistantMessage) -> str:
    u = m.usage
    parts = [m.model, m.stop_reason]
    parts += [f"{_num(u.input)} in / {_num(u.output)} out"] if u.input or u.output else []
    cache = ((u.cache_read, "cache read"), (u.cache_write, "cache write"))
    parts += [f"{_num(n)} {kind}" for n, kind in cache if n]
    parts += [_cost(u.cost.total)] if u.cost.total else []
    return " · ".join(str(p) for p in parts)


def _assistant(out: _Out, m: AssistantMessage, streaming: bool) -> None:
    out.header("Assistant", marks=["streaming…"] if streaming else ())
    for block in m.content:
        if isinstance(block, ThinkingContent):
            _thinking(out, block)
        elif isinstance(block, TextContent):
            out.prose(block.text)
        elif isinstance(block, ToolCall):
            _tool_call(out, block)
    if m.stop_reason in ("error", "aborted") and not streaming:
        label = f"✗ {m.stop_reason}"
        message = (m.error_message or "").strip()
        if "\n" in message:
            out.line("", bold=label + ":")
            out.output(message)
        else:
            out.line(message, bold=label + (":" if message else ""))
    if not streaming:
        out.quiet(_footer(m))


_MASKED_MARK = "secrets masked"


def _tool_result(out: _Out, m: ToolResultMessage) -> None:
    masked = any(has_masked(getattr(block, "text", None)) for block in m.content)
    out.header("Tool result", m.tool_name, ["✗ error" if m.is_error else None, _MASKED_MARK if masked else None])
    if not m.content:
        out.line("(no output)")
    for block in m.content:
        out.line(_image_label(block)) if isinstance(block, ImageContent) else out.output(block.text)


def _bash(out: _Out, m: BashExecutionMessage) -> None:
    out.header("Shell", marks=[_visibility_mark(m)])
    command = _clean(m.command).strip("\n")
    if "\n" in command:
        out.output("$ " + command, "sh")
    else:
        out.blocks.append(_code("$ " + command) if out.md else "$ " + command)
    out.output(m.output) if m.output else out.line("(no output)")
    status = ["cancelled"] if m.cancelled else [] if m.exit_code is None else [f"exit {m.exit_code}"]
    if m.truncated:
        status.append(f"truncated — full output: {m.full_output_path}" if m.full_output_path else "truncated")
    if has_masked(m.output) or has_masked(m.command):
        status.append(_MASKED_MARK)
    if status:
        out.blocks.append(" · ".join(_code(s) if out.md else s for s in status))


def _custom(out: _Out, m: CustomMessage) -> None:
    out.header("Custom", m.custom_type, [_visibility_mark(m)])
    out.content(m.content)


def _summary(out: _Out, label: str, summary: str) -> None:
    out.blocks.append(f"**{_md_text(label)}**" if out.md else f"[{_one_line(label)}]")
    out.prose(summary)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _opaque(out: _Out, m: OpaqueMessage) -> None:
    out.header("Unknown message", repr(m.role), [_visibility_mark(m)])
    reason = m.reason.strip()
    out.line("" if "\n" in reason else reason, bold="Reason:" if out.md else "reason:")
    if "\n" in reason:
        out.output(reason)
    out.output(_json(m.raw), "json")


def _other(out: _Out, m: Any) -> None:
    """A role an app registered: its name and its JSON."""
    out.header("Message", str(getattr(m, "role", type(m).__name__)), [_visibility_mark(m)])
    out.output(_json(to_pi_json(m) if hasattr(m, "to_pi_json") else repr(m)), "json")


def _render(message: Any, md: bool, streaming: bool = False) -> str:
    m = from_pi_json(message) if isinstance(message, dict) else message
    out = _Out(md)
    if isinstance(m, AssistantMessage):
        _assistant(out, m, streaming)
    elif isinstance(m, BranchSummaryMessage):
        _summary(out, f"Branch summary (from {m.from_id})", m.summary)
    elif isinstance(m, CompactionSummaryMessage):
        _summary(out, f"Compaction summary ({_num(m.tokens_before)} tokens before)", m.summary)
    else:
        renderer = next((f for cls, f in _RENDERERS.items() if isinstance(m, cls)), _other)
        renderer(out, m)
    return ("\n\n" if md else "\n").join(out.blocks)


_RENDERERS: dict[type, Any] = {
    UserMessage: _user,
    ToolResultMessage: _tool_result,
    BashExecutionMessage: _bash,
    CustomMessage: _custom,
    OpaqueMessage: _opaque,
}


# --- public API ----------------------------------------------------------------------------------------


def message_markdown(message: Any, *, streaming: bool = False) -> str:
    """Safe Markdown for one AgentMessage (typed or Pi JSON). ``streaming`` marks a partial assistant
    message and leaves out its footer (its stop reason and usage are not known yet)."""
    return _render(message, md=True, streaming=streaming)


def message_text(message: Any, *, streaming: bool = False) -> str:
    """Plain text for one AgentMessage (typed or Pi JSON), ANSI codes removed."""
    return _render(message, md=False, streaming=streaming)


def messages_mimebundle(messages: Iterable[Any], *, title: str | None = None, streaming: Any = None) -> dict[str, str]:
    """``{"text/plain": ..., "text/markdown": ...}`` for a list of messages, plus ``streaming`` (the partial
    assistant message still arriving, shown last) when given."""
    items = [(m, False) for m in messages] + ([(streaming, True)] if streaming is not None else [])
    text = [_render(m, md=False, streaming=s) for m, s in items] or ["(no messages)"]
    md = [_render(m, md=True, streaming=s) for m, s in items] or ["*(no messages)*"]
    if title is not None:
        text.insert(0, _one_line(title))
        md.insert(0, f"### {_md_text(title)}")
    return {"text/plain": "\n\n".join(text), "text/markdown": "\n\n".join(md)}


def _role_name(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
    return role if isinstance(role, str) else "?"


class MessagesView:
    """A list of messages that displays itself in a cell as text and Markdown.

    ``repr`` is stable (no memory address) so strict nbval can compare it, e.g.
    ``<3 messages: user, assistant, toolResult>``.
    """

    def __init__(self, messages: Iterable[Any], *, title: str | None = None):
        self.messages = list(messages)
        """The messages shown (typed or Pi JSON)."""
        self.title = title
        """An optional heading."""

    def __len__(self) -> int:
        return len(self.messages)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The bundle for IPython's display machinery, filtered by ``include`` / ``exclude``."""
        bundle = messages_mimebundle(self.messages, title=self.title)
        keep = [k for k in bundle if (include is None or k in include) and k not in (exclude or ())]
        return {k: bundle[k] for k in keep}

    def __repr__(self) -> str:
        roles = [_role_name(m) for m in self.messages]
        noun = "message" if len(roles) == 1 else "messages"
        if len(roles) > 8:  # a long history: counts per role, in order of first appearance
            roles = [f"{n} {role}" for role, n in Counter(roles).items()]
        return f"<{len(self.messages)} {noun}: {', '.join(roles)}>" if roles else "<0 messages>"
