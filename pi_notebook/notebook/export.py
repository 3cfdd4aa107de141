"""A session exported as one file: a self-contained HTML page, a Pi session file, or a Markdown transcript.

The HTML page is what Pi's ``/export`` makes (a header with the session's id, date, models, message counts,
tokens and cost, its system prompt and tools; then the messages with their tool calls, results and thinking),
drawn by the notebook's own views: the transcript (every role, as in the notebook) and the inspector (its three
panes, the provider switch and the filters). The built bundles (``static/``) are inlined and loaded as ES
modules from ``blob:`` URLs, mounted over :file:`static_model.js` (an anywidget model without a kernel) with the
widgets' state, computed here for every provider (with the inspector's own functions, without making a widget:
nothing goes to a front end). So the page opens by double-click, offline, and fetches nothing.

The state holds each text once (:mod:`~.packed`): a message's text is in the transcript, in its inspector row
and in every provider's request body, and the page carries it once and refers to it, so the page stays within a
small constant of the session's size (at most 3× the session file, plus the views' code). It is written to the
file piece by piece as it is made: the provider bodies are built and packed one at a time, and the page is never
one string. The session's content is data only: a JSON ``<script>`` in which ``</`` and ``<!`` are escaped (no
text can close it) and lone surrogates too (UTF-8 cannot hold them), drawn by the views' sanitising renderers;
and the page's Content-Security-Policy lets run only its own boot script (by hash) and the ``blob:`` modules it
makes, and load no URL, so even a sanitiser miss could neither run nor fetch anything. Custom renderers
(:func:`~.widgets.register_renderer`) are kernel code, not exported: their roles are drawn by the default renderer;
except those registered ``saved`` (an installed plugin's), which the page carries for the roles it shows.

An existing file at the path is replaced, as Pi's ``/export`` does; every export is written to a temporary file
beside it and renamed into place, so a failure leaves nothing half-written. Every export is UTF-8: a lone
surrogate in the session is written as U+FFFD (in the page's data, as its ``\\uXXXX`` escape).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ..agent_core import as_agent_message, to_pi_json
from ..ai import AssistantMessage
from ..coding_agent.agent_session import AgentSession
from ..coding_agent.masking import mask_json, mask_message
from ..coding_agent.session import SessionFile
from ..coding_agent.session_entries import LabelEntry, SessionEntry
from .inspector_source import chosen_model, request_body, request_key, retrace, source_of, view_state
from .inspector_whatif import request_models, source_secrets
from .packed import Packer, script_json, unpack
from .render import messages_mimebundle
from .utf8 import utf8_text
from .widgets import STATIC, messages_of, transcript_state

__all__ = [
    "EXPORT_FORMATS", "ExportError", "export_html", "export_jsonl", "export_markdown", "export_session", "page_state",
]  # fmt: skip

EXPORT_FORMATS = (".html", ".jsonl", ".md")
"""The extensions :func:`export_session` knows."""

BUNDLES = {"static_model": "static_model.js", "transcript": "transcript.js", "inspector": "inspector.js"}
"""The ES modules the page loads (name → file in ``static/``)."""


class ExportError(ValueError):
    """An export that cannot be made (unknown format, no bundles, nothing to write a session file from)."""


# --- writing -------------------------------------------------------------------------------------------------


def _write_atomically(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` for a new file beside ``path``, then rename it to ``path`` (replacing a file there).
    On any failure the temporary file is removed and ``path`` is untouched."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"no folder {path.parent}")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _not_the_source(source: Any, path: str | os.PathLike[str]) -> None:
    """Refuse to replace the session's own file: its writer would go on appending to the replaced one, lost."""
    file = _file_of(source)
    target = Path(path).expanduser()
    if file is not None and target.exists() and target.resolve() == file.path.resolve():
        raise ExportError(f"{target} is the session's own file; export to another path")


def _write_text(tmp: Path, pieces: Iterable[str]) -> None:
    """Write ``pieces`` of text as UTF-8, one after the other (a lone surrogate as U+FFFD: :mod:`~.utf8`)."""
    # O_EXCL: never follow or reuse a file already there; mode 0o666 less the umask, as a plain open() gives.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    with os.fdopen(fd, "wb") as fh:
        for piece in pieces:
            fh.write(utf8_text(piece).encode("utf-8"))


# --- what the session is ------------------------------------------------------------------------------------


def _file_of(source: Any) -> SessionFile | None:
    if isinstance(source, AgentSession):
        return source.file
    return source if isinstance(source, SessionFile) else None


def _about(source: Any, messages: list[Any], context: Any = None) -> dict[str, Any]:
    """What the page's header says, as Pi's export does: the session, its models, counts, tokens and cost, and
    the system prompt and tools of its next request (``context``: the inspector's preview of it)."""
    file = _file_of(source)
    header = file.header if file is not None else None
    roles = Counter(m.role for m in messages)
    models: dict[str, None] = {}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost, calls = 0.0, 0
    for m in messages:
        if isinstance(m, AssistantMessage):
            models[f"{m.provider}/{m.model}" if m.provider else m.model] = None
            u = m.usage
            for key, value in (("input", u.input), ("output", u.output), ("cacheRead", u.cache_read),
                               ("cacheWrite", u.cache_write)):  # fmt: skip
                tokens[key] += int(value or 0)
            cost += float(u.cost.total or 0)
            calls += sum(1 for block in m.content if getattr(block, "type", None) == "toolCall")
    tools = list(context.tools or []) if context is not None else []
    return {
        "id": header.id if header is not None else None,
        "name": file.session_name if file is not None else None,
        "timestamp": header.timestamp if header is not None else None,
        "cwd": header.cwd if header is not None else None,
        "file": str(file.path) if file is not None else None,
        "messages": dict(roles),
        "models": list(models),
        "toolCalls": calls,
        "tokens": tokens,
        "cost": cost,
        "systemPrompt": (context.system_prompt or "") if context is not None else "",
        "tools": [{"name": t.name, "description": t.description} for t in tools],
    }


def _typed(source: Any) -> list[Any]:
    return [as_agent_message(m) for m in messages_of(source)]


# --- HTML ---------------------------------------------------------------------------------------------------


def _bundle(name: str) -> str:
    path = STATIC / name
    if not path.is_file():
        raise ExportError(f"the widget bundle {name} is not built ({path}); run: cd widgets && npm run build")
    return path.read_text("utf-8")


def _private(data: Any) -> bool:
    """A message (Pi JSON) shown and stored but never sent: a ``%bash!`` command, a cell marked
    ``%agent_private`` (``excludeFromContext``)."""
    return isinstance(data, dict) and data.get("excludeFromContext") is True


def _inspector_state(source: Any, pack: Callable[[Any], Any], *, private: bool = True) -> tuple[dict[str, Any], Any]:
    """The inspector's state for ``source`` as :class:`~.inspector.InspectorWidget` computes it (the source's own
    preview, its trace and the providers' request builders, every secret redacted), without making the widget:
    nothing is sent to a front end. Packed as it is made: the provider bodies are built, cleaned and packed one
    at a time, so one of them is in memory at once. Also the next request's context (for the header). Without
    ``private``, the rows of messages never sent are left out (the request bodies never hold them)."""
    src = source_of(source)
    trace = retrace(src, None, first_only=False)
    chosen = chosen_model(src)
    view = view_state(src, trace, chosen)
    if not private:
        view["rows"] = [row for row in view["rows"] if not _private(row.get("agent"))]
    state: dict[str, Any] = {key: pack(value) for key, value in view.items()}
    state.update(requests={}, provider=request_key(chosen), busy=False, requests_before={})
    del trace  # its rows are packed
    secrets = source_secrets(source)
    for key, model in request_models(chosen, src.model).items():
        state["requests"][key] = pack(request_body(src, model, secrets)[1])
    return state, src.call.context


def _packed_state(
    source: Any, title: str | None, packer: Packer, *, private: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The page's views' state, packed (:mod:`~.packed`: each text once), and the header's facts. The
    transcript is packed first, so the parts are the session's own strings, not copies. Known secrets are masked
    as it is packed: a session's messages already are, a session file or a list given here may not be. Without
    ``private``, the messages never sent to the LLM are left out before anything is packed: none of their text
    is in the page."""
    masker = _masker_of(source)

    def pack(value: Any) -> Any:
        return packer.pack(mask_json(value, masker))

    shown = transcript_state(source, title=title)
    if not private:
        kept = [i for i, m in enumerate(shown["messages"]) if not _private(m)]
        shown.update(messages=[shown["messages"][i] for i in kept], visibility=[shown["visibility"][i] for i in kept])
    transcript = {key: pack(value) for key, value in shown.items()}
    inspector, context = _inspector_state(source, pack, private=private)
    typed = _typed(source)
    about = _about(source, typed if private else [m for m in typed if not _private(to_pi_json(m))], context)
    about["private"] = {"count": sum(1 for m in typed if _private(to_pi_json(m))), "shown": private}
    return {"transcript": transcript, "inspector": inspector}, mask_json(about, masker)


def page_state(source: Any, *, title: str | None = None, private: bool = True) -> dict[str, Any]:
    """The data of an export page, unpacked: the transcript's and the inspector's widget state (the inspector's
    request bodies for every provider it offers, so its switch works without a kernel) and the header's facts."""
    packer = Packer()
    state, about = _packed_state(source, title, packer, private=private)
    data = json.loads(f'{{"parts":{"".join(packer.parts_json())},"state":{script_json(state)}}}')
    return {**unpack(data), "about": about}


_BOOT = """
const read = (id) => JSON.parse(document.getElementById(id).textContent);
const code = read("pi-export-code");
const load = async (name) => {
  const url = URL.createObjectURL(new Blob([code[name]], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
};
const fail = (el, text) => {
  const p = document.createElement("p");
  p.className = "pi-export-error";
  p.textContent = text;
  el.replaceChildren(p);
};
try {
  const [{ staticModel, unpack }, transcript, inspector] = await Promise.all(
    ["static_model", "transcript", "inspector"].map(load),
  );
  const state = unpack(read("pi-export-state"));
  for (const [name, view] of [["transcript", transcript], ["inspector", inspector]]) {
    const el = document.getElementById(`pi-${name}`);
    try {
      const model = staticModel(state[name]);
      await view.default.initialize?.({ model });
      await view.default.render({ model, el });
    } catch (e) {
      fail(el, `The ${name} could not be drawn: ${e}`);
    }
  }
} catch (e) {
  fail(document.getElementById("pi-transcript"), `The views could not be loaded: ${e}`);
}
document.body.dataset.ready = "true";
"""

_PAGE_CSS = """
:root { color-scheme: light dark; }
body { margin: 0 auto; max-width: 1180px; padding: 16px 24px 48px; font: 14px/1.45 system-ui, sans-serif; }
.pi-export-head h1 { font-size: 1.35em; margin: 0.2em 0 0.4em; overflow-wrap: anywhere; }
.pi-export-head dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 0.6em; }
.pi-export-head dt { opacity: 0.7; }
.pi-export-head dd { margin: 0; overflow-wrap: anywhere; }
.pi-export-head pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.4em 0; }
.pi-export-head details { margin: 0.3em 0; }
.pi-export-nav { display: flex; gap: 16px; margin: 0.8em 0; }
.pi-export-section h2 { font-size: 1.15em; margin: 1.2em 0 0.5em; }
.pi-export-error { color: #b3261e; font-weight: 600; }
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(_BOOT.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}' blob:; style-src 'unsafe-inline'; img-src data: blob:; "
        "base-uri 'none'; form-action 'none'"
    )


def _fmt_tokens(n: int) -> str:
    return f"{n / 1_000_000:.1f}M" if n >= 1_000_000 else f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _date(timestamp: str | None) -> str:
    if not timestamp:
        return "unknown"
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return timestamp


def _header_html(about: dict[str, Any], title: str) -> str:
    """The page's header, escaped: Pi's export header (session, date, models, messages, tool calls, tokens,
    cost), then the working directory, the system prompt and the tools when known."""
    e = html.escape
    counts = ", ".join(f"{n} {role}" for role, n in about["messages"].items()) or "0"
    tokens = about["tokens"]
    token_text = " ".join(
        f"{mark}{_fmt_tokens(tokens[key])}"
        for mark, key in (("↑", "input"), ("↓", "output"), ("R", "cacheRead"), ("W", "cacheWrite"))
        if tokens[key]
    )  # fmt: skip
    rows = [
        ("Date", _date(about["timestamp"])),
        ("Models", ", ".join(about["models"]) or "unknown"),
        ("Messages", counts),
        ("Tool calls", str(about["toolCalls"])),
        ("Tokens", token_text or "0"),
        ("Cost", f"${about['cost']:.3f}"),
    ]
    if about["cwd"]:
        rows.append(("Directory", about["cwd"]))
    if about["file"]:
        rows.append(("Session file", about["file"]))
    parts = [f"<h1>{e(title)}</h1>", "<dl>", *(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows), "</dl>"]
    if about["systemPrompt"]:
        parts.append(f"<details><summary>System prompt</summary><pre>{e(about['systemPrompt'])}</pre></details>")
    if about["tools"]:
        items = "".join(f"<li><b>{e(t['name'])}</b> — {e(t['description'])}</li>" for t in about["tools"])
        parts.append(f"<details><summary>Tools ({len(about['tools'])})</summary><ul>{items}</ul></details>")
    note = _private_note(about["private"])
    if note:
        shown = "shown" if about["private"]["shown"] else "left-out"
        parts.append(f'<p class="pi-export-private" data-private="{shown}">{e(note)}</p>')
    return "\n".join(parts)


def _private_note(private: dict[str, Any]) -> str:
    """What the header says of the messages never sent to the LLM (``%bash!``, ``%agent_private``)."""
    n = private["count"]
    if not n:
        return ""
    what = f"{n} message{'s' if n > 1 else ''} you kept from the LLM (%bash!, %agent_private)"
    if private["shown"]:
        return f"This page shows {what}, each marked “not sent to the LLM”; export with --no-private to leave them out."
    return f"{what[0].upper()}{what[1:]} {'are' if n > 1 else 'is'} left out of this page (--no-private)."


def _page_title(about: dict[str, Any], title: str | None) -> str:
    if title:
        return title
    if about.get("notebook"):
        return f"{about['notebook']} — agent session"
    if about["name"]:
        return f"Session: {about['name']}"
    return f"Session: {about['id']}" if about["id"] else "Session"


def _page_pieces(source: Any, title: str | None, *, private: bool = True, notebook: str | None = None) -> Iterator[str]:
    """The export page of ``source``, in pieces: its state is never one string (a long session's page is written
    as it is made, its parts one by one). ``notebook``: the name of the notebook the session belongs to, the page's
    title unless ``title`` is given."""
    code = {name: _bundle(file) for name, file in BUNDLES.items()}
    css = _bundle("pi_notebook.css")
    if "</style" in css.lower():  # it would end the <style> element early
        raise ExportError("pi_notebook.css contains '</style'; it cannot be inlined")
    packer = Packer()
    state, about = _packed_state(source, title, packer, private=private)
    about["notebook"] = notebook
    heading = _page_title(about, title)
    yield f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_csp()}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pi_notebook">
<title>{html.escape(heading)}</title>
<style>{css}</style>
<style>{_PAGE_CSS}</style>
</head>
<body>
<header class="pi-export-head">
{_header_html(about, heading)}
</header>
<nav class="pi-export-nav"><a href="#transcript">Transcript</a><a href="#inspector">Inspector</a></nav>
<section class="pi-export-section" id="transcript"><h2>Transcript</h2><div id="pi-transcript"></div></section>
<section class="pi-export-section" id="inspector"><h2>Inspector</h2><div id="pi-inspector"></div></section>
<noscript><p class="pi-export-error">This page draws the session with JavaScript; it runs none of the
session's content.</p></noscript>
<script type="application/json" id="pi-export-state">{{"parts":"""
    yield from packer.parts_json()
    yield f""","state":{script_json(state)}}}</script>
<script type="application/json" id="pi-export-code">{script_json(code)}</script>
<script type="module">{_BOOT}</script>
</body>
</html>
"""


def html_page(source: Any, *, title: str | None = None, private: bool = True, notebook: str | None = None) -> str:
    """The export page of ``source`` (see :func:`export_html`), as a string."""
    return utf8_text("".join(_page_pieces(source, title, private=private, notebook=notebook)))


def export_html(
    session_or_messages: Any,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    private: bool = True,
    notebook: str | None = None,
) -> Path:
    """Write one self-contained HTML page of a session (a notebook session, an Agent, a
    :class:`~pi_notebook.coding_agent.session.SessionFile` or a list of AgentMessages): its transcript and its
    inspector, which opens offline, fetches nothing and runs none of the session's content. Each text of the
    session is in the page once (:mod:`~.packed`), and the page is written as it is made. The messages never sent
    to the LLM (``%bash!``, ``%agent_private``) are shown marked, and the header says how many; ``private=False``
    leaves them out. ``notebook``: the notebook's name, which titles the page (``title`` wins). Replaces a file at
    ``path``; returns the path written."""
    _not_the_source(session_or_messages, path)
    pieces = _page_pieces(session_or_messages, title, private=private, notebook=notebook)
    return _write_atomically(path, lambda tmp: _write_text(tmp, pieces))


# --- Markdown -----------------------------------------------------------------------------------------------


def export_markdown(
    session_or_messages: Any,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    private: bool = True,
    notebook: str | None = None,
) -> Path:
    """Write a readable Markdown transcript (the notebook's ``text/markdown`` rendering: links other than
    http(s) and mailto defanged, raw HTML escaped); ``private=False`` leaves out the messages never sent to the
    LLM. Replaces a file at ``path``; returns the path written."""
    _not_the_source(session_or_messages, path)
    masker = _masker_of(session_or_messages)
    typed = [m for m in _typed(session_or_messages) if private or not _private(to_pi_json(m))]
    messages = [mask_message(m, masker)[0] for m in typed]
    about = mask_json(_about(session_or_messages, messages), masker)
    about["notebook"] = notebook
    text = messages_mimebundle(messages, title=_page_title(about, title))["text/markdown"] + "\n"
    return _write_atomically(path, lambda tmp: _write_text(tmp, [text]))


# --- Pi session file ----------------------------------------------------------------------------------------


def _entry_json(entry: SessionEntry) -> dict[str, Any]:
    """An entry's Pi JSON with its ids as this file's tree has them (a damaged file's clashing ids repaired)."""
    return {**entry.to_pi_json(), "id": entry.id, "parentId": entry.parent_id}


def _masker_of(source: Any) -> Any:
    """The secrets an export masks: the session's (none when its ``mask_secrets`` is off), else the
    environment's."""
    if isinstance(source, AgentSession):
        return source.masker()
    from ..coding_agent.secrets import SecretMasker

    return SecretMasker.from_environment() or None


def export_jsonl(session: Any, path: str | os.PathLike[str], *, tree: bool = False) -> Path:
    """Write a Pi session file (v3) that Pi and ``%agent_session open`` open: a new header (a new id,
    ``parentSession`` naming the source file) and the entries of the current branch, root to leaf, with the
    labels of its entries (as Pi's fork writes them); ``tree``: every entry of the file, all branches (the copy
    continues from its last entry, as any reopened file does). ``session``: a notebook session, a
    :class:`~pi_notebook.coding_agent.session.SessionFile`, or AgentMessages (written as a new session).
    Replaces a file at ``path``; returns the path written."""
    _not_the_source(session, path)
    file = _file_of(session)
    masker = _masker_of(session)  # a file written before masking, or by Pi, may hold a secret: not its copy
    if file is None:
        messages = [mask_message(m, masker)[0] for m in _typed(session)]
        if tree:
            raise ExportError("a list of messages has no tree; export it without tree=True")

        def write_messages(tmp: Path) -> None:
            with SessionFile.create(tmp) as out:
                for message in messages:
                    out.append_message(message)

        return _write_atomically(path, write_messages)
    if file.header is None:
        raise ExportError(f"{file.path} has no session header: there is no session to export")
    entries = list(file.entries) if tree else file.get_branch()

    def write(tmp: Path) -> None:
        with SessionFile.create(tmp, file.cwd, parent_session=str(file.path)) as out:
            out.import_entries(mask_json(_entry_json(e), masker) for e in entries)
            if tree:
                return
            # Labels written off the branch still name its entries: carry them over, as Pi's fork does. (A label
            # entry that did not validate is an UnknownEntry, copied as written: it labels nothing.)
            labelled = {e.target_id: e.label for e in entries if isinstance(e, LabelEntry)}
            for entry in entries:
                label = file.get_label(entry.id) if entry.type != "label" else None
                if label and labelled.get(entry.id) != label:
                    out.append_label_change(entry.id, label)

    return _write_atomically(path, write)


# --- any format -----------------------------------------------------------------------------------------------


def export_session(
    source: Any,
    path: str | os.PathLike[str],
    *,
    tree: bool = False,
    title: str | None = None,
    private: bool = True,
    notebook: str | None = None,
) -> Path:
    """Export ``source`` to ``path`` in the format its extension names: ``.html`` (:func:`export_html`),
    ``.jsonl`` (:func:`export_jsonl`; ``tree``: all branches) or ``.md`` (:func:`export_markdown`). ``private=False``
    leaves out what was never sent to the LLM (the page and the Markdown); ``notebook`` titles them."""
    suffix = Path(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        known = ", ".join(EXPORT_FORMATS)
        raise ExportError(f"cannot export to {suffix or 'a file without extension'!r}: use {known}")
    if tree and suffix != ".jsonl":
        raise ExportError("--tree is for a .jsonl session file (the page and the Markdown show the current branch)")
    if not private and suffix == ".jsonl":
        raise ExportError(
            "--no-private is for a .html page or .md transcript (a session file keeps every entry of its branch)"
        )
    if suffix == ".html":
        return export_html(source, path, title=title, private=private, notebook=notebook)
    if suffix == ".md":
        return export_markdown(source, path, title=title, private=private, notebook=notebook)
    return export_jsonl(source, path, tree=tree)
