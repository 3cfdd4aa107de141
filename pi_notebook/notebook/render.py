"""Readable text and Markdown for AgentMessages: the fallback that is always in a cell's mimebundle.

Rich widget views come and go (VS Code without widgets, GitHub, nbconvert, strict nbval); ``text/plain`` and
``text/markdown`` from this module are always there. Both are written from a message's
:class:`~pi_notebook.notebook.forms.Form` (what each role shows, described once). Pure functions, no I/O, no IPython.

Everything a message holds came from a model, a tool, a shell or an extension, so it is untrusted. In
Markdown, ``<``, ``>`` and ``&`` outside code are HTML-escaped; code and outputs go in fences longer than any
backtick run they contain, so they cannot be closed from inside. A model's own fenced blocks are re-emitted
in such fences (their text stays exact), and an inline code span holding ``<``/``>``/``&`` becomes an escaped
``<code>`` element. A Markdown link, image or reference definition whose destination a renderer could read as a
URL with a scheme other than ``http``, ``https`` or ``mailto`` (``javascript:``, ``data:``, ``vbscript:`` ...,
also spelled with entities or backslash escapes) is shown as its text, not as a link: many renderers (nbconvert's
among them) do not filter link URLs. ANSI escape codes are removed from both forms.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .forms import Block, Codes, Form, Line, Part, Prose, Thinking, clean, message_form, one_line
from .utf8 import utf8_safe

__all__ = ["MessagesView", "message_markdown", "message_text", "messages_mimebundle", "text_body", "text_header"]

# --- escaping ----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|$])")
_HTML_CHARS = re.compile(r"[<>&]")
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_TICK_RUN = re.compile(r"`+")
_LANG = re.compile(r"[^\w+#.-]")


def _md_text(s: Any) -> str:
    """Untrusted text inside our own Markdown line: HTML escaped, Markdown syntax neutralised."""
    return html.escape(_MD_SPECIAL.sub(r"\\\1", one_line(s).strip()), quote=False)


def _longest_run(s: str) -> int:
    return max((len(m) for m in _TICK_RUN.findall(s)), default=0)


def _code(s: Any) -> str:
    """An inline code span that shows ``s`` exactly and cannot be broken out of."""
    s = one_line(s)
    if _HTML_CHARS.search(s) or not s.strip():
        # Entities are not decoded inside a Markdown code span, so escaped text goes in a <code> element.
        return f"<code>{_md_text(s)}</code>"
    ticks = "`" * (_longest_run(s) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def _fence(text: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so the content cannot close it."""
    text = clean(text).rstrip("\n")
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
        token = _TOKEN.match(text[start : start + size + 1])  # one character more tells it goes on
        assert token is not None  # `*`: it matches, if only the empty string
        dest = token[0]
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
    lines = clean(text).split("\n")
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


# --- the two writers of a form ---------------------------------------------------------------------------


def text_header(form: Form) -> str:
    """The first line of a message's plain text: ``[user]``, ``[shell] (not sent to the LLM)``..."""
    h = form.header
    if h.caption:
        return f"[{one_line(h.label)}]"
    line = f"[{h.label.lower()}" + (f": {one_line(h.name)}" if h.name is not None else "") + "]"
    return " ".join([line, *(f"({m})" for m in h.marks)])


def _text_part(part: Part) -> str | None:
    """A part as plain text (``None``: nothing to show). The labels of ours are written in lower case."""
    if isinstance(part, Prose):
        body = clean(part.text).strip("\n")
        return body if body.strip() else None
    if isinstance(part, Block):
        return clean(part.text).rstrip("\n")
    if isinstance(part, Line):
        return ((f"{part.label.lower()} " if part.label else "") + one_line(part.text)).rstrip()
    if isinstance(part, Codes):
        return " · ".join(part.items)
    if isinstance(part, Thinking):
        if part.redacted:
            return "    (thinking) [Reasoning redacted]"
        lines = clean(part.text).strip("\n").split("\n")
        return "\n".join(["    (thinking) " + lines[0], *(" " * 15 + x for x in lines[1:])]) if _shown(part) else None
    return f"→ {one_line(part.name)} {one_line(part.arguments)}"


def _text_blocks(form: Form) -> list[str]:
    return [t for t in map(_text_part, form.parts) if t is not None]


def text_body(form: Form) -> str:
    """The plain text of a message's parts, without its header and footer."""
    return "\n".join(_text_blocks(form))


def _text(form: Form) -> str:
    footer = [] if form.footer is None else [f"· {one_line(form.footer)}"]
    return "\n".join([text_header(form), *_text_blocks(form), *footer])


def _md_part(part: Part) -> str | None:
    """A part as safe Markdown (``None``: nothing to show)."""
    if isinstance(part, Prose):
        body = _prose(part.text)
        return body if body.strip() else None
    if isinstance(part, Block):
        return _fence(part.text, part.lang)
    if isinstance(part, Line):
        return ((f"**{part.label}** " if part.label else "") + _md_text(part.text)).rstrip()
    if isinstance(part, Codes):
        return " · ".join(_code(s) for s in part.items)
    if isinstance(part, Thinking):
        if part.redacted:
            return "*\\[Reasoning redacted\\]*"
        return f"<details><summary>Thinking</summary>\n\n{_prose(part.text)}\n\n</details>" if _shown(part) else None
    return f"**→ {_md_text(part.name)}** {_code(part.arguments)}"


def _md_header(form: Form) -> str:
    h = form.header
    if h.caption:
        return f"**{_md_text(h.label)}**"
    line = f"**{h.label}**" + (f" · {_code(h.name)}" if h.name is not None else "")
    return line + "".join(f" · *{html.escape(m, quote=False)}*" for m in h.marks)


def _markdown(form: Form) -> str:
    blocks = [_md_header(form), *(md for md in map(_md_part, form.parts) if md is not None)]
    blocks += [] if form.footer is None else [f"<sub>{_md_text(form.footer)}</sub>"]
    return "\n\n".join(blocks)


def _shown(thinking: Thinking) -> bool:
    return bool(clean(thinking.text).strip())


# --- public API ----------------------------------------------------------------------------------------


def message_markdown(message: Any, *, streaming: bool = False) -> str:
    """Safe Markdown for one AgentMessage (typed or Pi JSON). ``streaming`` marks a partial assistant
    message and leaves out its footer (its stop reason and usage are not known yet)."""
    return _markdown(message_form(message, streaming=streaming))


def message_text(message: Any, *, streaming: bool = False) -> str:
    """Plain text for one AgentMessage (typed or Pi JSON), ANSI codes removed."""
    return _text(message_form(message, streaming=streaming))


def messages_mimebundle(messages: Iterable[Any], *, title: str | None = None, streaming: Any = None) -> dict[str, str]:
    """``{"text/plain": ..., "text/markdown": ...}`` for a list of messages, plus ``streaming`` (the partial
    assistant message still arriving, shown last) when given; UTF-8 encodable (:func:`~.utf8.utf8_safe`)."""
    forms = [message_form(m) for m in messages]
    forms += [message_form(streaming, streaming=True)] if streaming is not None else []
    text = [_text(f) for f in forms] or ["(no messages)"]
    md = [_markdown(f) for f in forms] or ["*(no messages)*"]
    if title is not None:
        text.insert(0, one_line(title))
        md.insert(0, f"### {_md_text(title)}")
    return utf8_safe({"text/plain": "\n\n".join(text), "text/markdown": "\n\n".join(md)})


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
