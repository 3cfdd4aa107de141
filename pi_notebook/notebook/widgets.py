"""The transcript widget: a thin anywidget view over the Pi JSON of AgentMessages.

Everything the view needs is synced as JSON traits; the front end (``widgets/`` → ``static/transcript.js``)
draws each message with the renderer registered for its role. Next to the widget view every display carries its
saved form (:mod:`pi_notebook.notebook.saved`: the state as JSON, which the JupyterLab extension draws without a
kernel, an escaped ``text/html`` and ``text/plain``), so a saved notebook, GitHub, nbconvert and front ends
without widget support still show the transcript. A finished cell shows only the saved form.

Live updates are throttled: :meth:`TranscriptWidget.update` may be called for every token, but at most one
comm update goes out per ``min_interval`` (1/30 s); :meth:`TranscriptWidget.flush` and
:meth:`TranscriptWidget.finish` always write the exact latest state. A live update carries only what changed
(the new messages, the characters the streaming reply grew by: :func:`json_patch`), as a custom comm message
the front end applies to its model, so a long reply costs the same per update at its end as at its start.
:meth:`TranscriptWidget.release` lets the kernel forget a finished widget while the page keeps showing it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anywidget
import comm as _comm
import traitlets as t
from ipywidgets.widgets import widget as _ipywidget  # its instance registry, to let a finished widget go

from ..agent_core import Agent, as_agent_message, to_pi_json
from ..agent_core import visibility as _visibility
from ..ai.jstext import js_length
from ..coding_agent.agent_session import AgentSession
from ..coding_agent.session import SessionFile
from .saved import transcript_bundle
from .static_display import DISCARDED_ESM, StaticWhenHeadless, carries_stylesheet, headless_kernel, interactive_frontend
from .utf8 import utf8_safe

__all__ = [
    "TranscriptWidget", "json_patch", "register_renderer", "registered_renderers", "saved_renderers", "show",
    "transcript_state",
]  # fmt: skip

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
  initialize({ model }) {
    // Live updates come as deltas this fallback does not apply: it asks for the whole state instead.
    const onMsg = (msg) => {
      if (msg && msg.pi === "delta") model.send({ pi: "resync" });
      if (msg && msg.pi === "state") for (const k of ["messages", "visibility", "streaming"]) model.set(k, msg[k]);
    };
    model.on("msg:custom", onMsg);
    return () => model.off("msg:custom", onMsg);
  },
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


def asset_text(asset: Path | str) -> Path | str:
    """The text of a :func:`static_asset`, for a widget's ``_esm`` / ``_css``. Not the path: anywidget ties every
    widget of a class whose ``_esm`` is a file to that file's change signal, which keeps each one alive for good
    (and :meth:`TranscriptWidget.release` could free nothing). The path is kept when anywidget's hot reloading
    is on (``ANYWIDGET_HMR=1``, widget development)."""
    if isinstance(asset, Path) and os.environ.get("ANYWIDGET_HMR", "") not in ("1", "true"):
        return asset.read_text(encoding="utf-8")
    return asset


def json_patch(old: Any, new: Any) -> list[list[Any]]:
    """The edits that turn JSON value ``old`` into ``new``, as the front end applies them (``live.js``):

    - ``["a", path, text, at]``: append ``text`` to the string at ``path``, which is ``at`` characters long (in
      UTF-16 code units, as JavaScript counts them: an emoji is two);
    - ``["s", path, value]``: set the key or index at ``path`` (one past a list's end appends);
    - ``["t", path, n]``: cut the list at ``path`` to ``n`` items;
    - ``["d", path]``: delete the key at ``path``.

    ``path`` is a list of keys and indices (``[]``: the whole value). What did not change costs nothing (equal
    parts are compared, not walked), so a reply that grew by a few words is a few words to send."""
    ops: list[list[Any]] = []
    _diff(old, new, [], ops)
    return ops


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def _diff(old: Any, new: Any, path: list[Any], ops: list[list[Any]]) -> None:
    if _same(old, new):
        return
    if type(old) is str and type(new) is str and old and new.startswith(old):
        ops.append(["a", path, new[len(old) :], len(old) if old.isascii() else js_length(old)])
    elif type(old) is dict and type(new) is dict:
        for key, value in new.items():
            if key not in old:
                ops.append(["s", [*path, key], value])
            elif not _same(old[key], value):
                _diff(old[key], value, [*path, key], ops)
        ops.extend(["d", [*path, key]] for key in old if key not in new)
    elif type(old) is list and type(new) is list:
        common = min(len(old), len(new))
        for i in range(common):
            if not _same(old[i], new[i]):
                _diff(old[i], new[i], [*path, i], ops)
        if len(new) < len(old):
            ops.append(["t", path, len(new)])
        ops.extend(["s", [*path, i], new[i]] for i in range(common, len(new)))
    else:
        ops.append(["s", path, new])


class LiveWidget(StaticWhenHeadless, anywidget.AnyWidget):
    """An anywidget whose kernel-owned traits can change quietly, the front end being told by a delta message
    instead of the whole value; and which the kernel can forget while the page keeps showing it. Displayed in a
    headless kernel, it shows its saved form only (:class:`~.static_display.StaticWhenHeadless`)."""

    _kernel_owned: frozenset[str] = frozenset()
    """Traits only the kernel writes: a front end's copy sent back (with another trait it saves) is ignored."""

    def __init__(self, *, static: bool = False, **kwargs: Any):
        """``static``: never open a comm (a headless kernel's ``show()``/``inspect()``): the object works, its
        displays are its saved form (:class:`~.static_display.StaticWhenHeadless`), no runner records its state."""
        self._quiet: frozenset[str] = frozenset()
        self._detached = static
        super().__init__(**kwargs)
        self.on_msg(self._on_front_end_message)

    def _set_quietly(self, **values: Any) -> None:
        """Set traits without syncing them: the caller sends the change itself, as a delta."""
        self._quiet = frozenset(values)
        try:
            for name, value in values.items():
                setattr(self, name, value)
        finally:
            self._quiet = frozenset()

    def _should_send_property(self, key: str, value: Any) -> bool:
        if key in self._quiet:
            return False
        return super()._should_send_property(key, value)

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        """The synced state as it goes to the front end: UTF-8 encodable (:func:`~.utf8.utf8_safe`; Jupyter
        sends it as UTF-8 JSON, which a lone surrogate would fail). The traits keep what they hold."""
        return utf8_safe(super().get_state(key, drop_defaults))

    def send(self, content: Any, buffers: Any = None) -> None:
        """A custom message to the front end, UTF-8 encodable as :meth:`get_state` is."""
        super().send(utf8_safe(content), buffers)

    def set_state(self, sync_data: dict[str, Any]) -> None:
        """State from the front end, without the kernel-owned traits (a front end saving another trait sends its
        copy of them along; the kernel's own are newer)."""
        sync_data = {k: v for k, v in sync_data.items() if k not in self._kernel_owned}
        if sync_data:
            super().set_state(sync_data)

    def _on_front_end_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("pi") == "resync":  # the front end missed something
            self.send({"pi": "state", **{name: getattr(self, name) for name in sorted(self._kernel_owned)}})

    def release(self) -> None:
        """Forget this widget in the kernel, leaving its model and views in the page as they are (no
        ``comm_close``, which would take them away): a finished display costs the kernel nothing any more. The
        front end keeps the last state; the saved notebook keeps it too. Nothing can change it after this."""
        for widget in (self, getattr(self, "layout", None)):
            channel = getattr(widget, "comm", None)
            if widget is None or channel is None:
                continue
            _ipywidget._instances.pop(channel.comm_id, None)
            channel.publish_msg = lambda *args, **kwargs: None  # closed here only: the page keeps its model
            channel.close()
            manager = _comm.get_comm_manager()
            if manager is not None:
                manager.comms.pop(channel.comm_id, None)
            widget.comm = None

    def discard(self) -> None:
        """Close this widget and its layout for good, after emptying its synced code and data: a headless runner
        (nbclient, so ``nbconvert --execute`` and papermill) keeps the last state of a closed widget and saves it
        with the notebook, which JupyterLab, disposing of the model, does not. The code left is
        :data:`DISCARDED_ESM`, a module that does nothing: a notebook opened later makes a model of every saved
        state, and anywidget fails one whose code is empty ("Failed to initialize model", in the console)."""
        if self.comm is None and self._detached:  # never had a front end (``static``): nothing to empty or close
            return  # (its layout, made on first use, would open a comm of its own)
        if self.comm is not None:
            with self.hold_sync():
                for name in ("_esm", "_css", *sorted(self._kernel_owned)):
                    if not self.has_trait(name):
                        continue
                    empty = DISCARDED_ESM if name == "_esm" else ""
                    self.set_trait(name, self.trait_defaults(name) if name in self._kernel_owned else empty)
        layout = getattr(self, "layout", None)
        self.close()
        if layout is not None:
            layout.close()

    def _widget_bundle(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """anywidget's display of the view (data, metadata), also after :meth:`release` (the page still has the
        model, under the same id); only ``text/plain`` for a widget that never had a comm (``static``)."""
        if self.comm is None and self._model_id is None:
            return {"text/plain": repr(self)}, {}
        if self.comm is not None:
            result = anywidget.AnyWidget._repr_mimebundle_(self)
            data, metadata = result if isinstance(result, tuple) else (result or {}, {})
            return dict(data), dict(metadata)
        view = {"version_major": 2, "version_minor": 1, "model_id": self._model_id}
        return {"text/plain": repr(self), "application/vnd.jupyter.widget-view+json": view}, {}

    def _widget_view(self) -> dict[str, Any]:
        """Only the widget-view entry of a display."""
        data, _ = self._widget_bundle()
        return {k: v for k, v in data.items() if k == "application/vnd.jupyter.widget-view+json"}


def filter_bundle(data: dict[str, Any], include: Any, exclude: Any) -> dict[str, Any]:
    """IPython's ``include`` / ``exclude`` applied to a mimebundle."""
    return {k: v for k, v in data.items() if (include is None or k in include) and k not in (exclude or ())}


# --- renderer registry ---------------------------------------------------------------------------------

_renderers: dict[str, str] = {}
_saved: dict[str, str] = {}  # role → source of the renderers saved outputs and exported pages carry


def register_renderer(role: str, module: str | os.PathLike[str], *, saved: bool = False) -> None:
    """Draw messages of ``role`` with a custom front-end renderer in every transcript created from now on.

    ``module`` is the source of an ES module whose default export is ``render(message, el, helpers)``
    (``message`` is Pi JSON, ``el`` the element to fill), or the path of a ``.js``/``.mjs`` file holding
    it. Registering a role again replaces its renderer. ``saved``: the module also goes with the transcript's
    saved form (drawn by the JupyterLab extension in a trusted notebook) and into exported pages, for the roles a
    transcript holds; an installed plugin's renderers are registered so (:mod:`.plugins`).
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
    if saved:
        _saved[role] = source
    else:
        _saved.pop(role, None)


def registered_renderers() -> dict[str, str]:
    """A copy of the registered renderers: role → ES module source."""
    return dict(_renderers)


def saved_renderers(renderers: dict[str, str], messages: Iterable[Any]) -> dict[str, str]:
    """Of ``renderers`` (role → source), those registered with ``saved=True`` that draw one of ``messages`` (Pi
    JSON): what a saved form or an exported page carries."""
    roles = {m.get("role") for m in messages if isinstance(m, dict)}
    return {role: source for role, source in renderers.items() if role in roles and _saved.get(role) == source}


# --- the widget ----------------------------------------------------------------------------------------

_UNSET: Any = object()


def _visibility_level(message: Any) -> str:
    try:
        return _visibility(message).level
    except Exception:  # an app's converter failed: it will fail the run too, so nothing is provably sent
        return "ui"


def _pi_json_and_level(message: Any) -> tuple[dict[str, Any], str]:
    """A message's Pi JSON and its visibility level, as the transcript shows it."""
    typed = as_agent_message(message)
    return to_pi_json(typed), _visibility_level(typed)


def first_change(old: list[Any], new: list[Any], old_levels: list[str], new_levels: list[str]) -> int:
    """The first index where two message lists (with their visibilities) differ."""
    n = min(len(old), len(new), len(old_levels), len(new_levels))
    i = 0
    while i < n and _same(old[i], new[i]) and old_levels[i] == new_levels[i]:
        i += 1
    return i


class TranscriptWidget(LiveWidget):
    """A transcript of AgentMessages, drawn per role by the front end.

    Create it with :func:`show`, or directly: ``TranscriptWidget(messages, title="Run 1")``. Feed a live
    run with :meth:`update` (throttled) or :meth:`on_event` (``agent.subscribe(w.on_event)``) and end it with
    :meth:`finish`. Live writes send only what changed (see the module's docstring); :meth:`set_messages` and
    :meth:`set_streaming` sync the traits as they are.
    """

    _esm = asset_text(static_asset("transcript.js", _FALLBACK_TRANSCRIPT_ESM))
    _css = asset_text(static_asset("pi_notebook.css", FALLBACK_CSS))
    _kernel_owned = frozenset({"messages", "visibility", "streaming", "status"})

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
    status = t.Unicode("").tag(sync=True)
    """What a running cell is doing while nothing else shows it (``"running for {elapsed}"``, ``"loading the
    model ({elapsed})"``), or ``""``. The view puts the time since the text last changed in ``{elapsed}``, counting
    on its own: the kernel sends nothing while it waits."""

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
        self._converted: dict[int, tuple[Any, dict[str, Any], str]] = {}
        given = list(messages)
        data, levels = self._convert(given)
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
        self._run_messages: list[Any] = given  # as given (typed or Pi JSON): what finish() shows by default
        self._live = False  # deltas went out since the traits were last synced whole
        self._lock = threading.RLock()  # agent events may arrive on the agent's loop thread

    def _convert(self, messages: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
        """Pi JSON and visibility of ``messages``. A typed message converted by the last call (the same object)
        is not converted again: a live run passes its whole list at every update."""
        before, self._converted = self._converted, {}
        data, levels = [], []
        for message in messages:
            known = before.get(id(message))
            if known is not None and known[0] is message:
                _, value, level = known
            else:
                value, level = _pi_json_and_level(message)
            if not isinstance(message, dict):  # Pi JSON may be edited in place between calls: never reused
                self._converted[id(message)] = (message, value, level)
            data.append(value)
            levels.append(level)
        return data, levels

    # --- immediate updates ------------------------------------------------------------------------------

    def set_messages(self, messages: Iterable[Any]) -> None:
        """Show ``messages`` now (typed AgentMessages or Pi JSON)."""
        given = list(messages)
        with self._lock:
            data, levels = self._convert(given)
            self._pending_messages = _UNSET
            self._run_messages = given
            self._write(data, levels, _UNSET)

    def set_streaming(self, message: Any) -> None:
        """Show ``message`` as the partial assistant message still arriving; ``None`` clears it."""
        with self._lock:
            self._pending_streaming = _UNSET
            self._write(_UNSET, _UNSET, message)

    def set_status(self, text: str) -> None:
        """Say what the running cell is doing (see :attr:`status`); ``""`` when its messages show it."""
        with self._lock:
            if text != self.status:
                self.status = text

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
                    # traitlets types a Dict trait as a dict even with allow_none=True
                    self.streaming = value  # type: ignore[assignment]

    def _send_delta(self, data: Any, levels: Any, streaming: Any) -> None:
        """Set the traits quietly and send the front end only the difference: the messages from the first one
        that changed, and the streaming message's edits (:func:`json_patch`)."""
        ops: list[dict[str, Any]] = []
        values: dict[str, Any] = {}
        if data is not _UNSET:
            old, old_levels = self.messages, self.visibility
            at = first_change(old, data, old_levels, levels)
            if at < max(len(old), len(data)):
                op = {"op": "messages", "at": at, "len": len(old), "messages": data[at:], "visibility": levels[at:]}
                shown = self.streaming
                if at == len(old) < len(data) and isinstance(shown, dict) and shown.get("role") == data[at].get("role"):
                    # The streamed message, finished: the front end makes it from its streaming copy.
                    op["messages"], op["first"] = data[at + 1 :], json_patch(shown, data[at])
                ops.append(op)
                values.update(messages=data, visibility=levels)
        if streaming is not _UNSET:
            value = None if streaming is None else to_pi_json(streaming)
            old_value = self.streaming
            if not _same(old_value, value):
                if isinstance(old_value, dict) and isinstance(value, dict):
                    ops.append({"op": "streaming", "patch": json_patch(old_value, value)})
                else:
                    ops.append({"op": "streaming", "value": value})
                values["streaming"] = value
        if ops:
            self._set_quietly(**values)
            self.send({"pi": "delta", "ops": ops})
            self._live = True

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
        """Write the pending state now, if any (only what changed goes to the front end)."""
        with self._lock:
            messages, streaming = self._pending_messages, self._pending_streaming
            self._pending_messages = self._pending_streaming = _UNSET
            if messages is _UNSET and streaming is _UNSET:
                return
            if messages is not _UNSET:
                data, levels = self._convert(messages)
                self._run_messages = messages
            else:
                data = levels = _UNSET
            self._send_delta(data, levels, streaming)
            self._last = self._clock()
            self.updates += 1

    def finish(self, messages: Iterable[Any] | None = None) -> None:
        """End a live run: drop anything pending, show exactly ``messages`` (default: the messages shown or
        pending) and clear the streaming message. After live deltas, a headless run (nbclient keeps state syncs
        only: :func:`interactive_frontend`) gets the final state as one whole-state sync, so it saves the run;
        JupyterLab's model holds it already and gets the last delta."""
        with self._lock:
            self.set_status("")
            if messages is None:
                pending = self._pending_messages
                messages = self._run_messages if pending is _UNSET else pending
            given = list(messages)
            self._pending_messages = self._pending_streaming = _UNSET
            data, levels = self._convert(given)
            self._run_messages = given
            if self._live and not interactive_frontend():  # headless: only state syncs are kept
                self._set_quietly(messages=data, visibility=levels, streaming=None)
                self.send_state(["messages", "visibility", "streaming"])
            elif self._live:  # the front end's model holds what the deltas made: the last one ends it
                self._send_delta(data, levels, None)
            else:
                self._write(data, levels, None)
            self._live = False
            self._last = self._clock()
            self.updates += 1

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
        return self._widget_view()

    def saved_bundle(self, messages: Iterable[Any] | None = None, *, full_text: bool = False) -> dict[str, Any]:
        """The static display (:mod:`~pi_notebook.notebook.saved`: the transcript's JSON, ``text/html`` and
        ``text/plain``, no widget) of what is shown now, or of ``messages`` (nothing is sent to the view for
        them); ``full_text``: every message in ``text/plain``, else a summary. A finished cell shows it."""
        if messages is None:
            data, levels = list(self.messages), list(self.visibility)
        else:
            with self._lock:
                data, levels = self._convert(list(messages))
        renderers = saved_renderers(self.renderers, data)
        style = carries_stylesheet()  # once per front end: see pi_notebook.notebook.saved
        return transcript_bundle(
            data, levels, self.title, self.show_hidden, full_text=full_text, renderers=renderers, style=style
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
        """The widget view plus its saved form (:meth:`saved_bundle`, every message in ``text/plain``), which the
        JupyterLab extension draws when the page has no model for the view (a saved notebook without a kernel)."""
        data, metadata = self._widget_bundle()
        data.update(self.saved_bundle(full_text=True))
        return filter_bundle(data, include, exclude), metadata

    def __repr__(self) -> str:
        n = len(self.messages)
        extra = ", streaming" if self.streaming is not None else ""
        return f"<TranscriptWidget: {n} message{'' if n == 1 else 's'}{extra}>"


def messages_of(source: Any) -> list[Any]:
    """The AgentMessages of an :class:`~pi_notebook.coding_agent.agent_session.AgentSession`, an
    :class:`~pi_notebook.agent_core.Agent`, a :class:`~pi_notebook.coding_agent.session.SessionFile` (at its leaf), one
    message, or an iterable of messages (typed or Pi JSON)."""
    if isinstance(source, AgentSession):
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


def transcript_state(source: Any, *, show_hidden: bool = False, title: str | None = None) -> dict[str, Any]:
    """The synced state of :func:`show`'s transcript of ``source`` (no streaming message; of the custom renderers,
    those registered ``saved`` for its roles), computed without making the widget: nothing is sent to a front end
    (an export page draws it)."""
    pairs = [_pi_json_and_level(m) for m in collapse_repeated_errors(messages_of(source))]
    messages = [value for value, _ in pairs]
    return {
        "messages": messages, "visibility": [level for _, level in pairs], "streaming": None,
        "show_hidden": show_hidden, "title": title or "", "renderers": saved_renderers(_renderers, messages),
    }  # fmt: skip


def show(messages_or_session: Any, *, show_hidden: bool = False, title: str | None = None) -> TranscriptWidget:
    """A transcript of a list of AgentMessages (typed or Pi JSON), a notebook session, an Agent or a
    :class:`~pi_notebook.coding_agent.session.SessionFile`. Hidden messages (``display=False``) are collapsed
    unless ``show_hidden``; a retry that failed the same way again is shown once, counted."""
    messages = collapse_repeated_errors(messages_of(messages_or_session))
    return TranscriptWidget(messages, title=title, show_hidden=show_hidden, static=headless_kernel())
