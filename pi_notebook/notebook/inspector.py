"""The inspector: every AgentMessage next to what the LLM actually gets, and the exact request bodies.

:func:`inspect` traces the history through the agent's ``transform_context`` and ``convert_to_llm``
(:func:`~pi_notebook.coding_agent.trace.trace_boundary`) and builds, with :func:`~pi_notebook.ai.request.build_request`,
the body each provider would be sent: the session's model, plus an Anthropic and an OpenAI catalogue model
for comparison. Like the transcript it is a thin view over JSON traits; its ``text/html`` fallback is a
two-column table readable without the widget front end.

Given a notebook session it refreshes whenever the session changes (after each magic, ``%bash`` included); given
an Agent, after every agent run (``agent_end``).
A :class:`~pi_notebook.coding_agent.compaction.Compactor` is never run by the inspector (it could call a model and
write the session file): its current summary is applied as is, and a note says when the next call compacts.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from typing import Any

import anywidget
import traitlets as t

from ..agent_core import Agent, ContextPipelineError, as_agent_message, convert_to_llm, to_pi_json
from ..ai import AssistantMessage, Context, Model, get_model
from ..ai.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_GOOGLE_MODEL, DEFAULT_OPENAI_MODEL
from ..ai.request import build_request
from ..coding_agent.compaction import Compactor, estimate_context_tokens, should_compact
from ..coding_agent.session import SessionFile
from ..coding_agent.trace import BoundaryTrace, trace_boundary
from .config import parse_tools
from .kernel import NotebookSession
from .render import message_text
from .widgets import FALLBACK_CSS, filter_bundle, messages_of, static_asset

__all__ = ["InspectorWidget", "inspect"]

_FALLBACK_INSPECTOR_ESM = """
export default {
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

# Options never copied into a request body: secrets and callbacks.
_PRIVATE_OPTIONS = frozenset({"api_key", "apiKey", "signal", "on_payload", "onPayload", "headers"})


@dataclass
class _Source:
    """What the inspector reads from a session, an agent, a session file or a list."""

    messages: list[Any]
    transform: Any = None
    convert: Any = convert_to_llm
    system_prompt: str = ""
    tools: list[Any] = field(default_factory=list)
    model: Model | None = None
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _compactor_view(compactor: Compactor) -> Any:
    """The Compactor's current view without compacting: its summary + the kept messages (if any)."""

    def view(messages: list[Any]) -> list[Any]:
        summary, first = compactor.summary_message, compactor.first_kept_message
        if summary is None:
            return list(messages)
        at = next((i for i, m in enumerate(messages) if m is first), None)
        if at is None:
            wanted = to_pi_json(first)
            at = next((i for i, m in enumerate(messages) if to_pi_json(m) == wanted), None)
        return list(messages) if at is None else [summary, *messages[at:]]

    return view


def _from_agent(agent: Agent, src: _Source) -> None:
    state = agent.state
    src.system_prompt = state.system_prompt
    src.tools = [tool.to_tool() for tool in state.tools]
    src.model = state.model
    src.convert = agent.convert_to_llm or convert_to_llm
    src.options = {k: v for k, v in agent.stream_options.items() if k not in _PRIVATE_OPTIONS}
    if state.thinking_level != "off":
        src.options["reasoning"] = state.thinking_level  # as the agent passes it
    transform = agent.transform_context
    if isinstance(transform, Compactor):
        view = _compactor_view(transform)(list(src.messages))
        if should_compact(estimate_context_tokens(view), transform.model.context_window, transform.settings):
            src.notes.append("the history passes the compaction threshold: the next LLM call compacts it first")
        transform = _compactor_view(transform)
    src.transform = transform


def _source_of(source: Any) -> _Source:
    if isinstance(source, NotebookSession):
        src = _Source(list(source.messages))
        _from_agent(source.agent, src)
        if src.model is None:  # no %%agent run yet: what the next run would use by default
            try:
                src.model = source.resolve_model(None)
                src.tools = [tool.to_tool() for tool in _default_tools(source)]
            except Exception as e:  # a bad default in %agent_config: say so, show the rest
                src.notes.append(f"default model unavailable: {type(e).__name__}: {e}")
            src.notes.append("no %%agent run yet: showing the defaults of the next run")
        return src
    if isinstance(source, Agent):
        src = _Source(list(source.state.messages))
        _from_agent(source, src)
        return src
    if isinstance(source, SessionFile):
        context = source.build_session_context()
        src = _Source(list(context.messages))
        spec = context.model
        if spec:
            try:
                src.model = get_model(f"{spec['provider']}/{spec['modelId']}")
            except Exception as e:
                src.notes.append(f"the session's model is not known here: {type(e).__name__}: {e}")
        return src
    return _Source(messages_of(source))


def _default_tools(session: NotebookSession) -> list[Any]:
    from ..coding_agent.tools import TOOL_FACTORIES

    return [TOOL_FACTORIES[name](session.cwd) for name in parse_tools(session.config.tools)]


def request_key(model: Model) -> str:
    """How a request is named in :attr:`InspectorWidget.requests`: ``"<api> (<model id>)"``."""
    return f"{model.api} ({model.id})"


def _resolve(model: Model | str | None) -> Model | None:
    return get_model(model) if isinstance(model, str) else model


def _redact(value: Any, secrets: list[str]) -> Any:
    """Belt and braces: no secret value ever reaches widget state, whatever a builder did."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "[redacted]")
        return value
    if isinstance(value, dict):
        return {k: _redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, secrets) for v in value]
    return value


def _secrets(agent_options: dict[str, Any]) -> list[str]:
    found = [os.environ[k] for k in os.environ if k.endswith("_API_KEY") and len(os.environ[k]) >= 8]
    key = agent_options.get("api_key") or agent_options.get("apiKey")
    if key is not None:
        key = key.get_secret_value() if hasattr(key, "get_secret_value") else str(key)
        found += [key] if len(key) >= 4 else []
    return found


def _reported_usage(messages: list[Any]) -> dict[str, Any]:
    """The input side of the last successful reply's usage, as the provider reported it: the context that
    request really had (``input + cacheRead + cacheWrite``). ``{}`` when no reply reported any. Failed and
    aborted replies are skipped, as Pi's context estimate skips them."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            continue
        usage = message.usage
        tokens = int(usage.input + usage.cache_read + usage.cache_write)
        if tokens <= 0:
            continue
        return {
            "index": index,
            "tokens": tokens,
            "input": int(usage.input),
            "cacheRead": int(usage.cache_read),
            "cacheWrite": int(usage.cache_write),
            "output": int(usage.output),
            "model": f"{message.provider}/{message.model}",
        }
    return {}


def _state(source: Any, model: Model | None) -> dict[str, Any]:
    src = _source_of(source)
    try:
        trace: BoundaryTrace = trace_boundary(src.messages, src.transform, src.convert)
    except ContextPipelineError as e:
        if e.stage != "transform_context":
            raise
        src.notes.append(f"{e} (the next LLM call fails the same way); shown without it")
        trace = trace_boundary(src.messages, None, src.convert)
    if not trace.aligned:
        src.notes.append("convert_to_llm does not convert message by message: rows are approximate")
    chosen = model or src.model or get_model(DEFAULT_ANTHROPIC_MODEL)
    # The session's model first, then one model of each API the notebook speaks, so the pane can switch among
    # Anthropic, OpenAI's Responses and Chat Completions APIs, and Gemini (the two OpenAI ones: the same model).
    candidates = [
        chosen, src.model, get_model(DEFAULT_ANTHROPIC_MODEL), get_model(DEFAULT_OPENAI_MODEL),
        get_model(DEFAULT_OPENAI_MODEL, api="openai-completions"), get_model(DEFAULT_GOOGLE_MODEL),
    ]  # fmt: skip
    context = Context(
        system_prompt=src.system_prompt or None, messages=trace.llm_messages, tools=src.tools or None
    )  # exactly what the agent loop builds
    agent_options = {}
    if isinstance(source, NotebookSession):
        agent_options = source.agent.stream_options
    elif isinstance(source, Agent):
        agent_options = source.stream_options
    secrets = _secrets(agent_options)
    requests: dict[str, Any] = {}
    for candidate in candidates:
        if candidate is None or request_key(candidate) in requests:
            continue
        try:
            body = build_request(candidate, context, dict(src.options))
        except Exception as e:  # a builder that cannot handle this context: show why, keep the others
            body = {"error": f"{type(e).__name__}: {e}"}
        requests[request_key(candidate)] = _redact(json.loads(json.dumps(body, default=str)), secrets)
    return {
        "rows": trace.to_json()["rows"],
        "requests": requests,
        "provider": request_key(chosen),
        "context_window": int(chosen.context_window or 0),
        "total_tokens": trace.total_tokens,
        "reported_usage": _reported_usage([as_agent_message(m) for m in src.messages]),
        "model_name": f"{chosen.provider}/{chosen.id}",
        "notes": src.notes,
    }


class InspectorWidget(anywidget.AnyWidget):
    """Each AgentMessage beside what the LLM gets, with token estimates and the exact request bodies.

    Make one with :func:`inspect`. ``provider`` selects which of ``requests`` the view shows (the front end
    may change it); :meth:`refresh` recomputes everything from the source.
    """

    _esm = static_asset("inspector.js", _FALLBACK_INSPECTOR_ESM)
    _css = static_asset("pi_notebook.css", FALLBACK_CSS)

    rows = t.List(t.Dict()).tag(sync=True)
    """One per message: ``index, role, status, reason, tokens, agent, llm, produced_text``."""
    requests = t.Dict().tag(sync=True)
    """``"<api> (<model id>)"`` → the exact request body for that model."""
    provider = t.Unicode("").tag(sync=True)
    """The key of ``requests`` shown; defaults to the session's (or the chosen) model."""
    context_window = t.Int(0).tag(sync=True)
    """The chosen model's context window, in tokens."""
    total_tokens = t.Int(0).tag(sync=True)
    """Estimated tokens of the messages sent (chars/4; the system prompt and tools not counted)."""
    reported_usage = t.Dict().tag(sync=True)
    """The last successful reply's input tokens as reported by the provider: ``index`` (of the message),
    ``tokens`` (``input + cacheRead + cacheWrite``), ``input``, ``cacheRead``, ``cacheWrite``, ``output``,
    ``model``; ``{}`` when no reply reported usage."""
    model_name = t.Unicode("").tag(sync=True)
    """``provider/id`` of the chosen model."""
    notes = t.List(t.Unicode()).tag(sync=True)
    """Things worth knowing (compaction due, a failing transform, defaults shown before the first run)."""

    def __init__(self, source: Any = (), *, model: Model | str | None = None, **kwargs: Any):
        chosen = _resolve(model)
        state = _state(source, chosen)
        super().__init__(**{**state, **kwargs})
        self._source = source
        self._model = chosen
        self._default_provider = state["provider"]
        self._unsubscribe: Any = None

    def refresh(self) -> None:
        """Recompute from the source (a session's current history, tools, prompt and model)."""
        state = _state(self._source, self._model)
        # Keep a model the user picked in the view; otherwise follow the session's model.
        picked = self.provider if self.provider != self._default_provider else None
        self._default_provider = state["provider"]
        if picked in state["requests"]:
            state["provider"] = picked
        with self.hold_sync():
            for name, value in state.items():
                if getattr(self, name) != value:
                    setattr(self, name, value)

    def _on_agent_event(self, event: Any) -> None:
        if getattr(event, "type", None) == "agent_end":
            self.refresh()

    def close(self) -> None:
        """Stop following the session and close the widget."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()

    # --- display ----------------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
        """The widget view plus a stable ``text/plain`` summary and an escaped two-column ``text/html``."""
        result = super()._repr_mimebundle_(**kwargs)
        data, metadata = result if isinstance(result, tuple) else (result or {}, {})
        data = {**data, "text/plain": repr(self), "text/html": self._fallback_html()}
        return filter_bundle(data, include, exclude), metadata

    def _fallback_html(self) -> str:
        head = html.escape(self._summary())
        lines = [f'<div class="pi-fallback pi-inspector-fallback"><p>{head}</p>']
        lines += [f"<p><i>{html.escape(note)}</i></p>" for note in self.notes]
        lines.append("<table><thead><tr><th>#</th><th>AgentMessage</th><th>What the LLM got</th></tr></thead><tbody>")
        for row in self.rows:
            agent = message_text(row["agent"]) if row.get("agent") else "(added by transform_context)"
            if row["status"] in ("translated", "injected"):
                got = row["produced_text"]
            elif row["status"] == "passed":
                got = "(the same message)"
            else:
                got = "(nothing)"
            status = f"{row['status']}: {row['reason']} (~{row['tokens']} tokens)"
            index = "+" if row["index"] is None else str(row["index"])
            lines.append(
                f"<tr><td>{html.escape(index)}</td>"
                f'<td><pre style="white-space: pre-wrap">{html.escape(agent)}</pre></td>'
                f'<td><b>{html.escape(status)}</b><pre style="white-space: pre-wrap">{html.escape(got)}</pre></td></tr>'
            )
        lines.append("</tbody></table>")
        body = self.requests.get(self.provider)
        if body is not None:
            text = json.dumps(body, indent=2, ensure_ascii=False)
            pre = f'<pre style="white-space: pre-wrap">{html.escape(text)}</pre>'
            lines.append(f"<details><summary>Request body: {html.escape(self.provider)}</summary>{pre}</details>")
        lines.append("</div>")
        return "\n".join(lines)

    def _summary(self) -> str:
        n = sum(1 for row in self.rows if row["index"] is not None)
        sent = sum(1 for row in self.rows if row["status"] in ("passed", "translated", "injected"))
        noun = "message" if n == 1 else "messages"
        return f"{n} {noun} → {sent} sent, ~{self.total_tokens:,} tokens, {self.provider}"

    def __repr__(self) -> str:
        return f"<InspectorWidget: {self._summary()}>"


def inspect(session_or_messages: Any, model: Model | str | None = None) -> InspectorWidget:
    """An inspector for a notebook session (e.g. ``pi_notebook.current_session()``), an Agent, a
    :class:`~pi_notebook.coding_agent.session.SessionFile` or a list of AgentMessages. ``model`` (a Model or
    ``"provider/id"``) is the one shown first; default: the session's. A session or an Agent is followed:
    the inspector refreshes after each agent run."""
    widget = InspectorWidget(session_or_messages, model=model)
    if isinstance(session_or_messages, NotebookSession):
        # On the kernel's main thread, after each magic, %bash included.
        widget._unsubscribe = session_or_messages.on_change(widget.refresh)
    elif isinstance(session_or_messages, Agent):
        widget._unsubscribe = session_or_messages.subscribe(widget._on_agent_event)
    return widget
