"""The inspector: every AgentMessage next to what the LLM actually gets, and the exact request bodies.

:func:`inspect` traces the history through the agent's ``transform_context`` and ``convert_to_llm``
(:func:`~pi_notebook.coding_agent.trace.trace_boundary`) and builds, with :func:`~pi_notebook.ai.request.build_request`,
the body each provider would be sent: the session's model, plus an Anthropic and an OpenAI catalogue model
for comparison. Like the transcript it is a thin view over JSON traits; its display also carries its saved form
(:mod:`~pi_notebook.notebook.saved`), which a saved notebook shows without a kernel.

Given a notebook session it refreshes whenever the session changes (after each magic, ``%bash`` included); given
an Agent, after every agent run (``agent_end``).

A :class:`~pi_notebook.coding_agent.compaction.Compactor` is never run by the inspector (it could call a model and
write the session file): its current summary is applied as is, and a note says when the next call compacts.

Refreshing costs what changed, not the whole history: when the history only grew and the boundary is Pi's own
(no ``transform_context``, or one that returned the messages unchanged, and the default ``convert_to_llm``), only
the new messages are traced, and the front end receives the new rows and the edits of the request bodies
(:func:`~pi_notebook.notebook.widgets.json_patch`) as a delta, not the whole state. In a notebook open in JupyterLab
(:func:`~pi_notebook.notebook.widgets.interactive_frontend`), a long history (``LONG`` messages or more) does its
costly parts after the cell, on the kernel's event loop: the rows of a first display in steps (the first ones are
shown at once) and the request bodies, which the providers' builders make from the whole history. ``busy`` is
true meanwhile; the next cell finishes that work before it runs (so it sees a complete inspector), the display's
text fallbacks are updated when it is done, and :meth:`InspectorWidget.refresh` computes everything at once.
Headless runs (nbclient) get every sync whole and all the work in the cell, as their saved state needs.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
import weakref
from typing import Any

import traitlets as t
from IPython.display import display, update_display

from ..agent_core import Agent, on_registry_change, registry_version
from ..ai import Model
from ..coding_agent.agent_session import AgentSession
from .inspector_source import (
    LONG,
    STEP,
    Source,
    Trace,
    chosen_model,
    request_body,
    request_key,
    resolve_model,
    retrace,
    source_of,
    view_state,
)
from .inspector_whatif import preview, request_models, source_secrets
from .saved import INSPECTOR_KEYS, inspector_bundle
from .static_display import headless_kernel
from .widgets import (
    FALLBACK_CSS,
    LiveWidget,
    asset_text,
    filter_bundle,
    first_change,
    interactive_frontend,
    json_patch,
    static_asset,
)

__all__ = ["InspectorWidget", "inspect"]


_FALLBACK_INSPECTOR_ESM = """
export default {
  initialize({ model }) {
    // Deltas are not applied by this fallback: it asks for the whole state instead.
    const onMsg = (msg) => {
      if (msg && msg.pi === "delta") model.send({ pi: "resync" });
      if (msg && msg.pi === "state") for (const k of ["rows", "requests"]) model.set(k, msg[k]);
    };
    model.on("msg:custom", onMsg);
    return () => model.off("msg:custom", onMsg);
  },
  render({ model, el }) {
    const draw = () => {
      const pre = document.createElement("pre");
      const rows = model.get("rows") || [];
      const head = model.get("model_name") + " · ~" + model.get("total_tokens") + " tokens";
      pre.textContent = head + "\\n\\n" + rows.map((r) =>
        (r.index ?? "+") + "  " + r.role + "  " + r.status + "  " + r.reason + "  (" + r.tokens + " tokens)"
      ).join("\\n");
      el.replaceChildren(pre);
    };
    draw();
    model.on("change", draw);
  },
};
"""


def _kernel_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the Jupyter kernel running this cell (on its main thread) for a notebook open in a front
    end, or ``None`` (plain Python, a terminal, another thread, a headless run): work put on it runs once the
    cell is done."""
    if threading.current_thread() is not threading.main_thread() or not interactive_frontend():
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return loop if getattr(get_ipython(), "kernel", None) is not None else None


PAGE_WORD_WAIT = 2.0
"""Seconds a display made while loading waits, once the work is done, for a page to say that it keeps the saved
form itself (:meth:`InspectorWidget._update_displays`) before it is updated with the whole history."""

_unfinished: weakref.WeakSet[InspectorWidget] = weakref.WeakSet()
"""Inspectors with work left for after the cell: the next cell finishes it before it runs."""
_hooked: list[Any] = []  # the shell whose pre_run_cell finishes that work


def _finish_unfinished(*_info: Any) -> None:
    for widget in list(_unfinished):
        widget._finish_now()


def _leave_for_later(widget: InspectorWidget) -> None:
    _unfinished.add(widget)
    if not _hooked:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.events.register("pre_run_cell", _finish_unfinished)
            _hooked.append(shell)


class InspectorWidget(LiveWidget):
    """Each AgentMessage beside what the LLM gets, with token estimates and the exact request bodies.

    Make one with :func:`inspect`. ``provider`` selects which of ``requests`` the view shows (the front end
    may change it); :meth:`refresh` recomputes everything from the source.
    """

    _esm = asset_text(static_asset("inspector.js", _FALLBACK_INSPECTOR_ESM))
    _css = asset_text(static_asset("pi_notebook.css", FALLBACK_CSS))
    _kernel_owned = frozenset({"rows", "requests"})

    rows = t.List(t.Dict()).tag(sync=True)
    """One per message: ``index, role, status, reason, tokens, agent, llm, produced_text``."""
    requests = t.Dict().tag(sync=True)
    """``"<api> (<model id>)"`` → the exact request body for that model."""
    provider = t.Unicode("").tag(sync=True)
    """The key of ``requests`` shown; defaults to the session's (or the chosen) model."""
    context_window = t.Int(0).tag(sync=True)
    """The chosen model's context window, in tokens."""
    total_tokens = t.Int(0).tag(sync=True)
    """Estimated tokens of the request (chars/4): the messages sent, the system prompt and the tool definitions."""
    overhead_tokens = t.Dict().tag(sync=True)
    """The part of ``total_tokens`` that is not messages: ``system`` (the system prompt) and ``tools``."""
    reported_usage = t.Dict().tag(sync=True)
    """The last successful reply's input tokens as reported by the provider: ``index`` (of the message),
    ``tokens`` (``input + cacheRead + cacheWrite``), ``input``, ``cacheRead``, ``cacheWrite``, ``output``,
    ``model``; ``{}`` when no reply reported usage."""
    model_name = t.Unicode("").tag(sync=True)
    """``provider/id`` of the chosen model."""
    notes = t.List(t.Unicode()).tag(sync=True)
    """Things worth knowing (compaction due, a failing transform, defaults shown before the first run)."""
    busy = t.Bool(False).tag(sync=True)
    """True while rows or request bodies of a long history are still being computed, after the cell."""
    requests_before = t.Dict().tag(sync=True)
    """The request bodies as they were just before the pipeline last changed (a converter registered again, a
    ``transform_context`` set): the compare view's "before the change"; ``{}`` until it changes."""
    compaction = t.Dict().tag(sync=True)
    """Where the next compaction would cut (a session or an Agent; ``{}`` otherwise): ``threshold`` (tokens above
    which Pi compacts: the window minus ``reserve_tokens``), ``cut`` (index of the first message Pi would keep),
    ``summarise`` (the indices it would summarise), ``enabled``, ``reserve_tokens``, ``keep_recent_tokens``
    (:func:`~pi_notebook.notebook.inspector_source.compaction_state`). A compaction summary's row carries
    ``covered``: the messages it replaced, from the session file."""

    def __init__(self, source: Any = (), *, model: Model | str | None = None, **kwargs: Any):
        self._source = source
        self._model = resolve_model(model)
        self._trace: Trace | None = None
        self._src: Source | None = None
        self._built: dict[str, tuple[Any, Any]] = {}  # request key → (body as built, as the state holds it)
        self._todo: list[str] | None = None  # request bodies still to build for the traced history (None: all)
        self._default_provider = ""
        self._step_handle: Any = None
        self._displays: list[str] = []  # display ids whose text fallbacks are updated when the work is done
        self._page_keeps_state = False  # a page said it writes our latest state into the saved form itself
        self._loop = _kernel_loop()
        self._deltas = interactive_frontend()  # else whole syncs: a headless run saves only those
        state = self._compute(defer=self._loop is not None)
        super().__init__(**{**state, **kwargs})
        self._unsubscribe: Any = None
        # Every open inspector follows the converters (held weakly: a forgotten inspector is not kept alive).
        self._unsubscribe_registry: Any = on_registry_change(self._on_pipeline_change)
        if self.busy:
            self._schedule()

    # --- computing ----------------------------------------------------------------------------------------

    def _pipeline_key(self) -> tuple[Any, ...]:
        """What the pipeline is made of: the registry's version, and the source's own transform and converter."""
        source = self._source
        if isinstance(source, AgentSession):
            return registry_version(), id(source.transform_context), id(source.agent.convert_to_llm)
        if isinstance(source, Agent):
            return registry_version(), id(source.transform_context), id(source.convert_to_llm)
        return (registry_version(),)

    def _pipeline_changed(self) -> dict[str, Any] | None:
        """The request bodies shown until now if the pipeline changed since the last computation, else None."""
        key, last = self._pipeline_key(), getattr(self, "_last_pipeline", None)
        self._last_pipeline = key
        return dict(self.requests) if last is not None and key != last and self.requests else None

    def _compute(self, *, defer: bool) -> dict[str, Any]:
        """Read the source and trace what changed; the state to show. ``defer`` (in a kernel): a long history's
        rows past the first STEP and its request bodies are left for :meth:`_step`, after the cell."""
        before = self._pipeline_changed()
        src = source_of(self._source)
        trace = retrace(src, self._trace, first_only=defer)
        self._src, self._trace, self._todo = src, trace, None
        chosen = self._chosen(src)
        state: dict[str, Any] = {**view_state(src, trace, chosen), "busy": True}
        if before is not None:
            state["requests_before"] = before
        if not self._default_provider:
            state["provider"] = self._default_provider = request_key(chosen)
        if trace.complete and not (defer and len(trace.messages) >= LONG):
            state.update(self._requests_state())
        return state

    @property
    def source_preview(self) -> Source:
        """What the view shows: its source's next request (:func:`~.inspector_source.source_of`), as last read."""
        if self._src is None:
            self._src = source_of(self._source)
        return self._src

    def _chosen(self, src: Source) -> Model:
        return chosen_model(src, self._model)

    def _requests_state(self, *, one: bool = False) -> dict[str, Any]:
        """The request bodies of the traced history (rebuilt from all of it: that is what the builders do; the
        parts that did not change keep their cleaned copies), and the provider to show. ``one`` (a step after
        the cell): only the next body still to build, the one shown first; the others keep their last body
        until their step (``busy`` stays true)."""
        src, trace = self._src, self._trace
        assert src is not None and trace is not None
        chosen = self._chosen(src)
        models = request_models(chosen, src.model)
        # Keep a model the user picked in the view; otherwise follow the session's model.
        default = request_key(chosen)
        current = self.provider  # "" while the widget is being made
        picked = current if current and current != self._default_provider else None
        shown = picked if picked in models else default
        todo = [key for key in models if key in (self._todo if self._todo is not None else models)]
        todo.sort(key=lambda key: key != shown)  # the body shown first
        now = todo[:1] if one else todo
        secrets = source_secrets(self._source)
        for key in now:
            self._built[key] = request_body(src, models[key], secrets, self._built.get(key))
        self._todo = [key for key in todo if key not in now]
        self._built = {key: self._built[key] for key in models if key in self._built}
        requests = {key: built[1] for key, built in self._built.items()}
        self._default_provider = default
        return {"requests": requests, "provider": shown, "busy": bool(self._todo)}

    def _apply(self, state: dict[str, Any]) -> None:
        """Show ``state``: new rows and the request bodies' edits go as one delta, the rest as trait syncs."""
        ops: list[dict[str, Any]] = []
        quiet: dict[str, Any] = {}
        rows = state.pop("rows", None)
        if rows is not None:
            old = self.rows
            at = first_change(old, rows, [""] * len(old), [""] * len(rows))
            if at < max(len(old), len(rows)):
                ops.append({"op": "rows", "at": at, "len": len(old), "rows": rows[at:]})
                quiet["rows"] = rows
        requests = state.pop("requests", None)
        if requests is not None:
            patch = json_patch(self.requests, requests)
            if patch:
                ops.append({"op": "requests", "patch": patch})
                quiet["requests"] = requests
        if not self._deltas:  # headless: whole syncs, as they were
            state.update(quiet)
            quiet, ops = {}, []
        if quiet:
            self._set_quietly(**quiet)
        if ops:
            self.send({"pi": "delta", "ops": ops})
        with self.hold_sync():
            for name, value in state.items():
                if getattr(self, name) != value:
                    setattr(self, name, value)

    def refresh(self) -> None:
        """Recompute from the source (a session's current history, tools, prompt and model), all of it now."""
        self._cancel_step()
        self._apply(self._compute(defer=False))

    def _on_pipeline_change(self, _role: str = "") -> None:
        """A converter was registered or replaced: every row may convert differently now (the trace's registry
        version no longer matches, so it is traced again). On the kernel's main thread, at once, inside the cell
        that registered; from another thread, on the kernel's loop. A detached inspector (shown by a headless
        kernel) follows too: its rows answer in the cells below."""
        if self.comm is None and not self._detached:
            return
        if self._loop is not None and threading.current_thread() is not threading.main_thread():
            self._loop.call_soon_threadsafe(self._on_pipeline_change)
            return
        try:
            self._on_change()
        except Exception as e:  # e.g. the session's model cannot be resolved: say so, keep the view
            self._apply({"notes": [*self.notes, f"the inspector stopped: {type(e).__name__}: {e}"], "busy": False})

    def _on_change(self) -> None:
        """The session changed (a magic ended): what changed now; in a kernel, a long history's request bodies
        after the cell."""
        loop = _kernel_loop()
        if loop is not None:
            self._loop = loop
        self._apply(self._compute(defer=loop is not None))
        if self.busy:
            self._schedule()

    def _schedule(self) -> None:
        if self._step_handle is None and self._loop is not None and not self._loop.is_closed():
            self._step_handle = self._loop.call_later(0.005, self._step)
            _leave_for_later(self)

    def _cancel_step(self) -> None:
        if self._step_handle is not None:
            self._step_handle.cancel()
            self._step_handle = None

    def _step(self, *, then: bool = True) -> None:
        """One step after the cell: the next STEP rows of a long history, or, once they are all there, the
        next request body. ``then``: schedule the next step, if any."""
        self._step_handle = None
        if self.comm is None or self._trace is None:
            _unfinished.discard(self)
            return
        trace = self._trace
        try:
            if not trace.complete:
                trace = trace.extended(trace.messages)
                trace.advance(STEP)
                self._trace = trace
                notes = [*self._src.notes, *trace.notes] if self._src is not None else self.notes
                overhead = self._src.system_tokens + self._src.tools_tokens if self._src is not None else 0
                self._apply({"rows": trace.rows, "total_tokens": trace.total_tokens + overhead, "notes": notes})
            else:
                self._apply(self._requests_state(one=True))
        except Exception as e:  # the same would fail a refresh: say it, stop
            self._apply({"notes": [*self.notes, f"the inspector stopped: {type(e).__name__}: {e}"], "busy": False})
        if self.busy:
            if then:
                self._schedule()
            return
        _unfinished.discard(self)
        if then and self._displays and not self._page_keeps_state and self._loop is not None:
            self._loop.call_later(PAGE_WORD_WAIT, self._update_displays)  # a page's word may still be on its way
        else:
            self._update_displays()

    def _finish_now(self) -> None:
        """Do the work left for after the cell, all of it, now (the next cell is about to run)."""
        self._cancel_step()
        while self.busy and self.comm is not None:
            self._step(then=False)
        _unfinished.discard(self)

    # --- display of a long history still loading: its text fallbacks follow when it is done ---------------

    @property
    def _ipython_display_(self) -> Any:
        """IPython's display hook, only while the work is left for after the cell: the display gets an id, so
        its ``text/html`` and ``text/plain`` fallbacks (saved with the notebook) are replaced by complete ones
        when the work is done. Otherwise the saved form only in a headless kernel
        (:class:`~.static_display.StaticWhenHeadless`), else ``None`` (IPython displays the mimebundle as usual)."""
        if self.busy and self._step_handle is not None:
            return self._display_updatable
        return super()._ipython_display_

    def _display_updatable(self, **_kwargs: Any) -> None:
        data, metadata = self._repr_mimebundle_()
        display_id = uuid.uuid4().hex
        self._displays.append(display_id)
        display(data, metadata=metadata, raw=True, display_id=display_id)

    def _update_displays(self) -> None:
        """The displays made while loading get their complete saved form, unless a page keeps it: one with
        pi_notebook's extension writes the live state into the output when the notebook is saved, so sending the
        whole history again (megabytes, which the page parses and stores in the notebook's model, slowing the next
        cells) would buy nothing there."""
        if self._page_keeps_state:
            self._displays = []
        if not self._displays:
            return
        data, metadata = self._repr_mimebundle_()
        for display_id in self._displays:
            update_display(data, metadata=metadata, raw=True, display_id=display_id)
        self._displays = []

    def _on_front_end_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("pi") == "page_keeps_state":  # see _update_displays
            self._page_keeps_state = True
            return
        if isinstance(content, dict) and content.get("pi") == "provider":  # picked in the view
            value = content.get("value")
            if isinstance(value, str) and value in self.requests:
                self.provider = value
            return
        if isinstance(content, dict) and content.get("pi") == "what_if":  # a row's what-if controls
            try:
                reply = {"ok": True, **self.what_if(content.get("changes") or {})}
            except Exception as e:  # misuse from the page is shown there, never raised into the kernel's log
                reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            self.send({"pi": "what_if_result", "id": content.get("id"), **reply})
            return
        super()._on_front_end_message(widget, content, buffers)

    def what_if(self, changes: dict[str, list[int]]) -> dict[str, Any]:
        """What the LLM would get if ``changes`` were made to the history, e.g. ``{"exclude": [3], "drop": [0]}``
        (kinds: ``exclude`` / ``include`` a bashExecution message, ``hide`` / ``show`` a custom message, ``drop``
        any; indices as the rows' ``index``). A preview of copies: the session, its file and the agent's history
        are never changed. Returns ``rows``, ``requests``, ``provider``, ``total_tokens``, ``notes`` and the
        checked ``changes`` (:func:`~pi_notebook.notebook.inspector_whatif.preview`)."""
        src = self._src if self._src is not None else source_of(self._source)
        models = request_models(self._chosen(src), src.model)
        return preview(
            self._source, changes, models=models, secrets=source_secrets(self._source), provider=self.provider
        )

    def _on_agent_event(self, event: Any) -> None:
        if getattr(event, "type", None) == "agent_end":
            self.refresh()

    def close(self) -> None:
        """Stop following the session and close the widget."""
        self._cancel_step()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if getattr(self, "_unsubscribe_registry", None) is not None:
            self._unsubscribe_registry()
            self._unsubscribe_registry = None
        super().close()

    # --- display ----------------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
        """The widget view, its saved form (:func:`~pi_notebook.notebook.saved.inspector_bundle`: the state as JSON,
        which the JupyterLab extension draws when the page has no model for the view, and an escaped two-column
        ``text/html``) and a stable ``text/plain`` summary."""
        data, metadata = self._widget_bundle()
        state = {key: getattr(self, key) for key in INSPECTOR_KEYS}
        data = {**data, **inspector_bundle(state, self._summary()), "text/plain": repr(self)}
        return filter_bundle(data, include, exclude), metadata

    def _summary(self) -> str:
        n = sum(1 for row in self.rows if row["index"] is not None)
        sent = sum(1 for row in self.rows if row["status"] in ("passed", "translated", "injected"))
        noun = "message" if n == 1 else "messages"
        loading = " (still loading: the first rows only)" if self.busy else ""
        return f"{n} {noun} → {sent} sent, ~{self.total_tokens:,} tokens, {self.provider}{loading}"

    def __repr__(self) -> str:
        return f"<InspectorWidget: {self._summary()}>"


def inspect(session_or_messages: Any, model: Model | str | None = None) -> InspectorWidget:
    """An inspector for a notebook session (e.g. ``pi_notebook.current_session()``), an Agent, a
    :class:`~pi_notebook.coding_agent.session.SessionFile` or a list of AgentMessages. ``model`` (a Model or
    ``"provider/id"``) is the one shown first; default: the session's. A session or an Agent is followed:
    the inspector refreshes after each agent run."""
    widget = InspectorWidget(session_or_messages, model=model, static=headless_kernel())
    if isinstance(session_or_messages, AgentSession):
        # On the kernel's main thread, after each magic, %bash included.
        widget._unsubscribe = session_or_messages.on_change(widget._on_change)
    elif isinstance(session_or_messages, Agent):
        unsubscribe = session_or_messages.subscribe(widget._on_agent_event)
        # Its pipeline set anew (agent.transform_context = fn): traced again, at once.
        unfollow = session_or_messages.on_pipeline_change(widget._on_pipeline_change)
        widget._unsubscribe = lambda: (unsubscribe(), unfollow())
    return widget
