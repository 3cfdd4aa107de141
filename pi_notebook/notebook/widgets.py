"""The transcript widget: a thin anywidget view over the Pi JSON of AgentMessages.

Everything the view needs is synced as JSON traits, so a saved notebook re-renders without a kernel; the
front end (``widgets/`` → ``static/transcript.js``) draws each message with the renderer registered for its
role. Next to the widget view every display carries ``text/plain`` and ``text/markdown`` (from
:mod:`pi_notebook.notebook.render`) and an escaped ``text/html`` fallback, so GitHub, nbconvert and front ends
without widget support still show a readable transcript.

Live updates are throttled: :meth:`TranscriptWidget.update` may be called for every token, but at most one
comm update goes out per ``min_interval`` (1/30 s); :meth:`TranscriptWidget.flush` and
:meth:`TranscriptWidget.finish` always write the exact latest state.
"""

from __future__ import annotations

import html
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from ..agent_core import Agent, as_agent_message, to_pi_json
from ..agent_core import visibility as _visibility
from ..coding_agent.session import SessionFile
from .kernel import NotebookSession
from .render import message_text, messages_mimebundle

__all__ = ["TranscriptWidget", "register_renderer", "registered_renderers", "show"]

STATIC = Path(__file__).parent / "static"
"""Where the built front end (``widgets/`` bundled) lives."""

FALLBACK_CSS = ".pi-fallback pre { white-space: pre-wrap; margin: 0.2em 0 0.8em; }"

# Used only when the built bundle is missing (a source checkout before the JS build): plain text, no HTML.
_FALLBACK_TRANSCRIPT_ESM = """
function text(m) {
  if (m.command !== undefined) return "$ " + m.command + "\\n" + (m.output || "");
  if (m.summary !== undefined) return m.summary;
  const c = m.content;
  if (typeof c === "string") return c;
  return (c || []).map((b) => b.text ?? b.thinking ?? (b.name ? "-> " + b.name : "[" + b.type + "]")).join("\\n");
}
export default {
  render({ model, el }) {
    const draw = () => {
      const pre = document.createElement("pre");
      const all = [...(model.get("messages") || [])];
      const vis = model.get("visibility") || [];
      const shown = all.filter((m, i) => model.get("show_hidden") || !["llm", "none"].includes(vis[i]));
      const live = model.get("streaming");
      if (live) shown.push(live);
      const title = model.get("title");
      const body = shown.map((m) => "[" + m.role + "] " + text(m)).join("\\n\\n");
      pre.textContent = (title ? title + "\\n\\n" : "") + body;
      el.replaceChildren(pre);
    };
    draw();
    model.on("change", draw);
  },
};
"""


def static_asset(name: str, fallback: str) -> Path | str:
    """``static/<name>`` when the built file exists (anywidget reads it), else the inline ``fallback``, so
    importing the widgets never fails in a checkout without the JS build."""
    path = STATIC / name
    return path if path.is_file() else fallback


def fallback_html(title: str, sections: Iterable[tuple[str, str, bool]], css_class: str) -> str:
    """Static HTML of ``(label, text, hidden)`` sections: everything escaped, no scripts, no styles beyond
    wrapping, so it is safe wherever a notebook is rendered. Hidden sections are collapsed."""
    parts = [f'<div class="pi-fallback {css_class}">']
    if title:
        parts.append(f"<h4>{html.escape(title)}</h4>")
    for label, text, hidden in sections:
        pre = f'<pre style="white-space: pre-wrap">{html.escape(text)}</pre>'
        if hidden:
            parts.append(f"<details><summary>{html.escape(label)}</summary>{pre}</details>")
        else:
            parts.append(f"<div><b>{html.escape(label)}</b>{pre}</div>" if label else f"<div>{pre}</div>")
    parts.append("</div>")
    return "\n".join(parts)


def filter_bundle(data: dict[str, Any], include: Any, exclude: Any) -> dict[str, Any]:
    """IPython's ``include`` / ``exclude`` applied to a mimebundle."""
    return {k: v for k, v in data.items() if (include is None or k in include) and k not in (exclude or ())}


# --- renderer registry ---------------------------------------------------------------------------------

_renderers: dict[str, str] = {}


def register_renderer(role: str, module: str | os.PathLike[str]) -> None:
    """Draw messages of ``role`` with a custom front-end renderer in every transcript created from now on.

    ``module`` is the source of an ES module whose default export is ``render(message, el, helpers)``
    (``message`` is Pi JSON, ``el`` the element to fill), or the path of a ``.js``/``.mjs`` file holding
    it. Registering a role again replaces its renderer.
    """
    if not isinstance(role, str) or not role:
        raise ValueError("role must be a non-empty string, e.g. 'bashExecution'")
    is_path = isinstance(module, os.PathLike) or (
        isinstance(module, str) and "\n" not in module and module.strip().endswith((".js", ".mjs"))
    )
    if is_path:
        path = Path(module).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no renderer module at {path}")
        source = path.read_text(encoding="utf-8")
    elif isinstance(module, str):
        source = module
    else:
        raise TypeError(f"module must be ES module source or a path, got {type(module).__name__}")
    if not source.strip():
        raise ValueError(f"the renderer module for {role!r} is empty")
    _renderers[role] = source


def registered_renderers() -> dict[str, str]:
    """A copy of the registered renderers: role → ES module source."""
    return dict(_renderers)


# --- the widget ----------------------------------------------------------------------------------------

_UNSET: Any = object()


def _visibility_level(message: Any) -> str:
    try:
        return _visibility(message).level
    except Exception:  # an app's converter failed: it will fail the run too, so nothing is provably sent
        return "ui"


def _state_of(messages: Iterable[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    typed = [as_agent_message(m) for m in messages]
    return [to_pi_json(m) for m in typed], [_visibility_level(m) for m in typed]


class TranscriptWidget(anywidget.AnyWidget):
    """A transcript of AgentMessages, drawn per role by the front end.

    Create it with :func:`show`, or directly: ``TranscriptWidget(messages, title="Run 1")``. Feed a live
    run with :meth:`update` (throttled) or :meth:`on_event` (``agent.subscribe(w.on_event)``) and end it with
    :meth:`finish`.
    """

    _esm = static_asset("transcript.js", _FALLBACK_TRANSCRIPT_ESM)
    _css = static_asset("pi_notebook.css", FALLBACK_CSS)

    messages = t.List(t.Dict()).tag(sync=True)
    """The messages, as Pi JSON."""
    visibility = t.List(t.Unicode()).tag(sync=True)
    """Per message: ``both``, ``ui`` (not sent to the LLM), ``llm`` (hidden, still sent) or ``none``."""
    streaming = t.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The assistant message still arriving (Pi JSON), or ``None``."""
    show_hidden = t.Bool(False).tag(sync=True)
    """Show messages hidden from the UI (``display=False``)."""
    title = t.Unicode("").tag(sync=True)
    """An optional heading."""
    renderers = t.Dict().tag(sync=True)
    """Role → ES module source of a custom renderer (see :func:`register_renderer`)."""

    def __init__(
        self,
        messages: Iterable[Any] = (),
        *,
        streaming: Any = None,
        title: str | None = None,
        show_hidden: bool = False,
        min_interval: float = 1 / 30,
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ):
        data, levels = _state_of(messages)
        kwargs.setdefault("renderers", registered_renderers())
        super().__init__(
            messages=data, visibility=levels, streaming=None if streaming is None else to_pi_json(streaming),
            title=title or "", show_hidden=show_hidden, **kwargs,
        )  # fmt: skip
        self.min_interval = min_interval
        """Least time in seconds between two throttled updates (1/30 s: at most 30 per second)."""
        self.updates = 0
        """How many throttled writes went out (``update``/``flush``/``finish``)."""
        self._clock = clock
        self._last: float | None = None
        self._pending_messages: Any = _UNSET
        self._pending_streaming: Any = _UNSET
        self._run_messages: list[Any] = list(data)
        self._lock = threading.RLock()  # agent events may arrive on the agent's loop thread

    # --- immediate updates ------------------------------------------------------------------------------

    def set_messages(self, messages: Iterable[Any]) -> None:
        """Show ``messages`` now (typed AgentMessages or Pi JSON)."""
        data, levels = _state_of(messages)
        with self._lock:
            self._pending_messages = _UNSET
            self._run_messages = list(data)
            self._write(data, levels, _UNSET)

    def set_streaming(self, message: Any) -> None:
        """Show ``message`` as the partial assistant message still arriving; ``None`` clears it."""
        with self._lock:
            self._pending_streaming = _UNSET
            self._write(_UNSET, _UNSET, message)

    def _write(self, data: Any, levels: Any, streaming: Any) -> None:
        # Only changed traits are sent; hold_sync batches them into one comm message.
        with self.hold_sync():
            if data is not _UNSET and data != self.messages:
                self.messages = data
            if levels is not _UNSET and levels != self.visibility:
                self.visibility = levels
            if streaming is not _UNSET:
                value = None if streaming is None else to_pi_json(streaming)
                if value != self.streaming:
                    self.streaming = value

    # --- throttled live updates -----------------------------------------------------------------------

    def update(self, messages: Iterable[Any] | None = None, streaming: Any = _UNSET) -> None:
        """Remember the newest state (``messages`` and/or ``streaming``; omitted = unchanged) and write it if
        the last write is at least ``min_interval`` old. Call as often as tokens arrive."""
        with self._lock:
            if messages is not None:
                self._pending_messages = list(messages)
            if streaming is not _UNSET:
                self._pending_streaming = streaming
            now = self._clock()
            due = self._last is None or now - self._last >= self.min_interval
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the pending state now, if any."""
        with self._lock:
            messages, streaming = self._pending_messages, self._pending_streaming
            self._pending_messages = self._pending_streaming = _UNSET
            if messages is _UNSET and streaming is _UNSET:
                return
            if messages is not _UNSET:
                data, levels = _state_of(messages)
                self._run_messages = list(data)
            else:
                data = levels = _UNSET
            self._write(data, levels, streaming)
            self._last = self._clock()
            self.updates += 1

    def finish(self, messages: Iterable[Any] | None = None) -> None:
        """End a live run: drop anything pending, show exactly ``messages`` (default: the messages shown or
        pending) and clear the streaming message."""
        with self._lock:
            if messages is None:
                pending = self._pending_messages
                messages = self._run_messages if pending is _UNSET else pending
            self._pending_messages = messages
            self._pending_streaming = None
        self.flush()

    def on_event(self, event: Any) -> None:
        """Follow an agent's events: ``agent.subscribe(widget.on_event)``."""
        kind = getattr(event, "type", None)
        if kind in ("message_start", "message_update"):
            self.update(streaming=event.message)
        elif kind == "message_end":
            with self._lock:
                pending = self._pending_messages
                base = self._run_messages if pending is _UNSET else pending
            self.update([*base, event.message], streaming=None)
            self.flush()  # a finished message is shown at once, not left behind the throttle
        elif kind == "agent_end":
            self.finish()

    # --- display ----------------------------------------------------------------------------------------

    def view_bundle(self) -> dict[str, Any]:
        """Only the widget view, without the text fallbacks: for a live display that is replaced when the run
        ends (so tools that compare outputs, like nbval, see only the final one)."""
        result = super()._repr_mimebundle_()
        data = result[0] if isinstance(result, tuple) else result
        return {k: v for k, v in (data or {}).items() if k == "application/vnd.jupyter.widget-view+json"}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
        """The widget view plus ``text/plain``, ``text/markdown`` and an escaped ``text/html`` fallback."""
        result = super()._repr_mimebundle_(**kwargs)
        data, metadata = result if isinstance(result, tuple) else (result or {}, {})
        data = dict(data)
        title = self.title or None
        data.update(messages_mimebundle(self.messages, title=title, streaming=self.streaming))
        data["text/html"] = self._fallback_html()
        return filter_bundle(data, include, exclude), metadata

    def _fallback_html(self) -> str:
        sections = []
        for message, level in zip(self.messages, self.visibility, strict=False):
            hidden = level in ("llm", "none") and not self.show_hidden
            label = f"{message.get('role', '?')} (hidden in the UI)" if hidden else ""
            sections.append((label, message_text(message), hidden))
        if self.streaming is not None:
            sections.append(("", message_text(self.streaming, streaming=True), False))
        if not sections:
            sections.append(("", "(no messages)", False))
        return fallback_html(self.title, sections, "pi-transcript-fallback")

    def __repr__(self) -> str:
        n = len(self.messages)
        extra = ", streaming" if self.streaming is not None else ""
        return f"<TranscriptWidget: {n} message{'' if n == 1 else 's'}{extra}>"


def messages_of(source: Any) -> list[Any]:
    """The AgentMessages of a :class:`~pi_notebook.notebook.kernel.NotebookSession`, an
    :class:`~pi_notebook.agent_core.Agent`, a :class:`~pi_notebook.coding_agent.session.SessionFile` (at its leaf), one
    message, or an iterable of messages (typed or Pi JSON)."""
    if isinstance(source, NotebookSession):
        return list(source.messages)
    if isinstance(source, Agent):
        return list(source.state.messages)
    if isinstance(source, SessionFile):
        return list(source.build_session_context().messages)
    if isinstance(source, dict) or hasattr(source, "to_pi_json"):
        return [source]
    if isinstance(source, (str, bytes)) or not isinstance(source, Iterable):
        raise TypeError(
            f"expected messages, a session or a SessionFile, got {type(source).__name__}; "
            "e.g. show(pi_notebook.current_session())"
        )
    return list(source)


def collapse_repeated_errors(messages: list[Any]) -> list[Any]:
    """For display: a failed reply repeated right after itself (a retry that failed the same way: same error
    and content) is shown once, its error counted (``… (2×)``). The session keeps every attempt, as Pi's does."""
    out: list[Any] = []
    first: Any = None  # the failed reply the last card shows, while repeats of it may follow
    count = 0
    for message in messages:
        failed = getattr(message, "role", None) == "assistant" and message.stop_reason == "error"
        if (
            failed
            and first is not None
            and (message.error_message, message.content)
            == (
                first.error_message,
                first.content,
            )
        ):
            count += 1
            out[-1] = first.model_copy(update={"error_message": f"{first.error_message} ({count}×)"})
            continue
        first, count = (message, 1) if failed else (None, 0)
        out.append(message)
    return out


def show(messages_or_session: Any, *, show_hidden: bool = False, title: str | None = None) -> TranscriptWidget:
    """A transcript of a list of AgentMessages (typed or Pi JSON), a notebook session, an Agent or a
    :class:`~pi_notebook.coding_agent.session.SessionFile`. Hidden messages (``display=False``) are collapsed
    unless ``show_hidden``; a retry that failed the same way again is shown once, counted."""
    return TranscriptWidget(
        collapse_repeated_errors(messages_of(messages_or_session)), title=title, show_hidden=show_hidden
    )
