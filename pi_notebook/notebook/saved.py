"""The saved form of a transcript or an inspector: what a notebook keeps of them, small, and readable anywhere.

A finished ``%%agent`` or ``%bash`` cell replaces its live widget with a static display bundle:

- ``application/vnd.pi-notebook.transcript+json``: the transcript's state as plain JSON (``messages`` in Pi JSON,
  and where they differ from the defaults ``title``, ``visibility``, ``show_hidden``, ``renderers``: an installed
  plugin's renderers of its roles, and ``version``: absent means 1); the JupyterLab / Notebook 7 extension shipped
  in the wheel (``widgets/labextension``) draws it with the widget's own view, without a kernel (the renderers
  only in a trusted notebook). Each message's text is here once, in full;
- ``text/html``: a static rendering for nbconvert, GitHub, VS Code without the extension, written from each
  message's :class:`~pi_notebook.notebook.forms.Form` (its header and parts as in ``text/plain``, without an
  assistant's usage): class names give each role its look, from our one ``<style>`` block (:data:`STYLE`);
  everything else is escaped text, with no script, handler or URL at all, and long texts are cut (the JSON holds
  them whole);
- ``text/plain``: the same, as text, cut the same way.

The stylesheet is in the first transcript a front end gets from a kernel, not in every one
(:func:`~pi_notebook.notebook.static_display.carries_stylesheet` decides; the cell that carries it carries it
again when it is re-run, so re-running it does not take the looks away from the others). In every page that
draws the fallback, a ``<style>`` anywhere applies to the whole page: nbconvert's HTML, VS Code (whose outputs
share one document) and a trusted notebook in JupyterLab or Notebook 7 without the extension; GitHub, and
JupyterLab in an untrusted notebook, drop ``<style>`` anyway. It was 340 bytes in every cell, as much as a
one-line exchange's messages, and made a notebook of short exchanges more than 2× its session file. What a reader
loses: where the output that carries it is cleared or its cell deleted (or, in JupyterLab's "full" windowing
mode, scrolled out of the page), the other transcripts lose colours, borders and line wrapping, not a word: each
message keeps its bold label and its text in its own ``<pre>``, and a hidden one stays folded in ``<details>``.
Short inline attributes instead (a border on each message, wrapping on each ``<pre>``: about 90 bytes a message)
would still cost half the stylesheet in a one-line exchange and more than it from four messages on. The
inspector's fallback, one per ``inspect()`` and large anyway, always carries it.

No widget view and so no widget state: a saved output holds no copy of the widget code. The inspector stays a live
widget while open; its display bundle carries ``application/vnd.pi-notebook.inspector+json`` (with the request
body of the provider shown only) beside the widget view,
which the extension prefers, drawing the live view while the page has the widget's model and this snapshot
otherwise (the live view writes its later state back into the output, so a notebook saved later holds that).
Pure functions, no I/O, no IPython.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from .forms import Form, message_form
from .render import message_text, text_body, text_header
from .utf8 import utf8_safe

__all__ = [
    "INSPECTOR_MIME",
    "SAVED_VERSION",
    "TRANSCRIPT_MIME",
    "inspector_bundle",
    "transcript_bundle",
    "transcript_html",
]

TRANSCRIPT_MIME = "application/vnd.pi-notebook.transcript+json"
INSPECTOR_MIME = "application/vnd.pi-notebook.inspector+json"
SAVED_VERSION = 1
"""Version of the JSON shapes above (``widgets/src/snapshot.js`` reads the same). A transcript's JSON leaves
``version`` out while it is 1 (the reader takes a missing one as 1); a later shape writes its number."""

HTML_LIMIT = 2_000
"""Characters of one text shown by the ``text/html`` fallback (the JSON keeps all of it)."""
PLAIN_LIMIT = 1_000
"""Characters of one message shown by a terminal's ``text/plain``."""
SUMMARY_LIMIT = 200
"""Characters of the last message in a notebook's ``text/plain`` summary."""

INSPECTOR_KEYS = (
    "rows", "requests", "provider", "context_window", "total_tokens", "overhead_tokens", "reported_usage",
    "model_name", "notes", "compaction",
)  # fmt: skip

# The fallbacks' one small stylesheet (nbconvert, VS Code and GitHub show outputs without the extension's CSS): class
# names only, no url(), no @import, nothing that loads anything. Short names: it is in many saved outputs.
STYLE = (
    "<style>.pi-s>div,.pi-s>details{border-left:3px solid #999;padding:2px 8px;margin:0 0 6px}"
    ".pi-s pre{white-space:pre-wrap;margin:0;background:none}.pi-s .u{border-color:#1976d2}"
    ".pi-s .b pre{background:#222;color:#eee}.pi-s .s{border-color:#f57c00}.pi-s .c{border-color:#0097a7}"
    ".pi-s .h{border-style:dashed}.pi-s i{opacity:.7}</style>"
)
_LOOK_CLASS = {"user": "u", "shell": "b", "summary": "s", "custom": "c"}
"""The looks :data:`STYLE` has a rule for (an assistant's, a tool result's and any other message's are the plain
block: a class of their own would be bytes in every cell that change nothing)."""


def cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were left out."""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _cut_note(left_out: int) -> str:
    return f"… {left_out:,} more characters (the saved transcript holds all of them)"


def _esc(text: str) -> str:
    """Text for an element's content (never an attribute: no attribute holds anything but our class names)."""
    return html.escape(text, quote=False)


def _pre(text: str) -> str:
    # Newlines as character references: the fallback stays one line in the saved notebook, which stores a text
    # output as a list of its lines (each quoted and indented).
    return f"<pre>{_esc(text).replace(chr(10), '&#10;')}</pre>" if text else ""


def _message_html(form: Form, hidden: bool) -> str:
    """One message: its header in bold, its parts' plain text in one ``<pre>`` (cut), no footer (the live view
    and the JSON have an assistant's usage)."""
    label = text_header(form)
    shown, left_out = cut(text_body(form), HTML_LIMIT)
    inner = f"<b>{_esc(label)}</b>" + _pre(shown)
    inner += f"<i>{_esc(_cut_note(left_out))}</i>" if left_out else ""
    if hidden:
        return f"<details class=h><summary>{_esc(label)} (hidden in the UI)</summary>{inner}</details>"
    look = _LOOK_CLASS.get(form.look)
    return f"<div class={look}>{inner}</div>" if look else f"<div>{inner}</div>"


def transcript_html(
    messages: list[dict[str, Any]],
    visibility: list[str],
    title: str = "",
    show_hidden: bool = False,
    *,
    style: bool = True,
) -> str:
    """The static ``text/html`` of a transcript (Pi JSON messages): every text escaped, long ones cut; ``style``:
    with :data:`STYLE` (see the module's docstring for where it is left out)."""
    parts = ["<div class=pi-s>", STYLE if style else ""]
    if title:
        parts.append(f"<h4>{_esc(title)}</h4>")
    for i, message in enumerate(messages):
        level = visibility[i] if i < len(visibility) else "both"
        parts.append(_message_html(message_form(message), hidden=level in ("llm", "none") and not show_hidden))
    if not messages:
        parts.append("<pre>(no messages)</pre>")
    parts.append("</div>")
    return "".join(parts)


def transcript_plain(messages: list[dict[str, Any]], title: str = "", *, full: bool = False) -> str:
    """``text/plain`` of a transcript. ``full``: every message (each cut to :data:`PLAIN_LIMIT` characters), for a
    terminal; else a summary (the roles, ``user, assistant ×2, toolResult``, and the last message cut to a few
    lines), for a notebook, where the other forms are shown and a stable, short text is what tools such as nbval
    compare (and what a PDF of the notebook shows)."""
    if not full:
        roles = Counter(str(m.get("role", "?")) for m in messages)
        head = ", ".join(f"{r} ×{n}" if n > 1 else r for r, n in roles.items())
        lines = [title] if title else []
        lines.append(head if messages else "(no messages)")
        if messages:
            last, left_out = cut(text_body(message_form(messages[-1])), SUMMARY_LIMIT)
            lines.append(last + (" …" if left_out else ""))
        return "\n".join(lines)
    out = [title] if title else []
    for message in messages:
        text, left_out = cut(message_text(message), PLAIN_LIMIT)
        out.append(text + (f"\n{_cut_note(left_out)}" if left_out else ""))
    return "\n\n".join(out or ["(no messages)"])


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def transcript_data(
    messages: list[dict[str, Any]],
    visibility: list[str],
    title: str = "",
    show_hidden: bool = False,
    renderers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The transcript's JSON: its synced state, without what only a live view has (streaming, the renderers not
    registered ``saved``). ``renderers``: role → ES module source of the saved renderers of its roles (an installed
    plugin's), which the JupyterLab extension runs only in a trusted notebook.

    Each message is its Pi JSON on one line, as in the session file: a notebook is saved with every nested value
    on a line of its own, indented, which makes short messages twice their size; one string per message keeps
    them about the session file's size, and a diff of the notebook one line per message. ``visibility`` lists
    only the messages not shown and sent alike (``"both"``), by index; ``version`` only past 1."""
    data: dict[str, Any] = {"messages": [_line(m) for m in messages]}
    data.update({"version": SAVED_VERSION} if SAVED_VERSION != 1 else {})
    hidden = {str(i): level for i, level in enumerate(visibility) if level != "both"}
    data.update({"title": title} if title else {}, **({"visibility": hidden} if hidden else {}))
    data.update({"renderers": dict(renderers)} if renderers else {})
    return {**data, "show_hidden": True} if show_hidden else data


def transcript_bundle(
    messages: list[dict[str, Any]],
    visibility: list[str],
    title: str = "",
    show_hidden: bool = False,
    *,
    full_text: bool = False,
    renderers: dict[str, str] | None = None,
    style: bool = True,
) -> dict[str, Any]:
    """The static display bundle of a transcript: its JSON (with ``renderers``, see :func:`transcript_data`),
    ``text/html`` (``style``: with the stylesheet) and ``text/plain`` (``full_text``: every message, for a
    terminal; else a short summary). UTF-8 encodable (:func:`~.utf8.utf8_safe`)."""
    return utf8_safe(
        {
            TRANSCRIPT_MIME: transcript_data(messages, visibility, title, show_hidden, renderers),
            "text/html": transcript_html(messages, visibility, title, show_hidden, style=style),
            "text/plain": transcript_plain(messages, title, full=full_text),
        }
    )


# --- the inspector --------------------------------------------------------------------------------------------


def _cell(text: str, limit: int = HTML_LIMIT) -> str:
    shown, left_out = cut(text, limit)
    note = f"<i>{_esc(_cut_note(left_out))}</i>" if left_out else ""
    return f"{_pre(shown) or '<pre></pre>'}{note}"


def llm_text(messages: list[Any]) -> str:
    """What the LLM reads of ``messages`` (Pi JSON), exactly: each text block as sent (line breaks, spaces and
    fences kept), a tool call as its name and JSON arguments, blocks one blank line apart; images are left out
    (the live view shows them)."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and block.get("text"):
                parts.append(str(block["text"]))
            elif block.get("type") == "thinking":
                parts.append("[thinking] " + str(block.get("thinking", "")))
            elif block.get("type") == "toolCall":
                arguments = json.dumps(block.get("arguments") or {}, ensure_ascii=False, separators=(",", ":"))
                parts.append(f"→ {block.get('name', '?')}({arguments})")
    return "\n\n".join(parts)


def inspector_html(state: dict[str, Any], summary: str) -> str:
    """The static ``text/html`` of an inspector's state: a two-column table and the request body shown, cut."""
    parts = ["<div class=pi-s>", STYLE, f"<h4>{_esc(summary)}</h4>"]
    parts += [f"<p><i>{_esc(note)}</i></p>" for note in state.get("notes", [])]
    parts.append("<table><thead><tr><th>#</th><th>AgentMessage</th><th>What the LLM got</th></tr></thead><tbody>")
    for row in state.get("rows", []):
        agent = message_text(row["agent"]) if row.get("agent") else "(added by transform_context)"
        if row.get("status") in ("translated", "injected"):
            got = str(row.get("produced_text", ""))
        elif row.get("status") == "passed":
            got = llm_text(row.get("llm") or []) or "(the same message, without text)"
        else:
            got = "(nothing)"
        status = f"{row.get('status')}: {row.get('reason')} (~{row.get('tokens')} tokens)"
        index = "+" if row.get("index") is None else str(row["index"])
        parts.append(
            f"<tr><td>{_esc(index)}</td><td>{_cell(agent, HTML_LIMIT // 4)}</td>"
            f"<td><b>{_esc(status)}</b>{_cell(got, HTML_LIMIT // 4)}</td></tr>"
        )
    parts.append("</tbody></table>")
    provider = state.get("provider", "")
    body = state.get("requests", {}).get(provider)
    if body is not None:
        text = json.dumps(body, indent=2, ensure_ascii=False)
        summary_line = f"<summary>Request body: {_esc(provider)}</summary>"
        parts.append(f"<details>{summary_line}{_cell(text, HTML_LIMIT * 2)}</details>")
    parts.append("</div>")
    return "".join(parts)


def inspector_data(state: dict[str, Any]) -> dict[str, Any]:
    """The inspector's JSON: its synced state (``busy`` and the widget's own traits left out), with the request
    body of the provider shown only: each body repeats the whole history (pictures included), and the saved form
    is in the notebook once per ``inspect()``. The live inspector offers every provider's."""
    data = {"version": SAVED_VERSION, **{key: state[key] for key in INSPECTOR_KEYS if key in state}}
    requests, shown = data.get("requests"), data.get("provider")
    if isinstance(requests, dict) and shown in requests:
        data["requests"] = {shown: requests[shown]}
    return data


def inspector_bundle(state: dict[str, Any], summary: str) -> dict[str, Any]:
    """The saved-form part of an inspector's display bundle: its JSON and ``text/html``, UTF-8 encodable
    (:func:`~.utf8.utf8_safe`)."""
    return utf8_safe({INSPECTOR_MIME: inspector_data(state), "text/html": inspector_html(state, summary)})
