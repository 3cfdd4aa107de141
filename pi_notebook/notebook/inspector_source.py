"""What the inspector reads and how it traces it: the source (a notebook session, an Agent, a session file or a
list of messages) with its pipeline (``transform_context``, ``convert_to_llm``, system prompt, tools, model and
options), the trace of its history through that pipeline (whole, or only what was appended when the boundary is
Pi's own), and the request bodies' cleaning (plain JSON, every secret redacted). No widget here:
:mod:`~pi_notebook.notebook.inspector` shows it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect as _inspect
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import Agent, ContextPipelineError, as_agent_message, convert_to_llm, to_pi_json
from ..agent_core.convert import checked_list, run_stage
from ..ai import AssistantMessage, Model, get_model
from ..coding_agent.compaction import Compactor, estimate_context_tokens, should_compact
from ..coding_agent.session import SessionFile
from ..coding_agent.trace import trace_boundary
from .config import parse_tools
from .kernel import NotebookSession
from .widgets import messages_of

LONG = 300
"""Histories this long or longer load in steps and rebuild their request bodies after the cell (in a kernel)."""
STEP = 250
"""Messages traced per step (also the first display's rows of a long history)."""

# Options never copied into a request body: secrets and callbacks.
PRIVATE_OPTIONS = frozenset({"api_key", "apiKey", "signal", "on_payload", "onPayload", "headers"})


@dataclass
class Source:
    """What the inspector reads from a session, an agent, a session file or a list."""

    messages: list[Any]
    transform: Any = None
    convert: Any = convert_to_llm
    system_prompt: str = ""
    tools: list[Any] = field(default_factory=list)
    model: Model | None = None
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def compactor_view(compactor: Compactor) -> Any:
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


def read_agent(agent: Agent, src: Source) -> None:
    state = agent.state
    src.system_prompt = state.system_prompt
    src.tools = [tool.to_tool() for tool in state.tools]
    src.model = state.model
    src.convert = agent.convert_to_llm or convert_to_llm
    src.options = {k: v for k, v in agent.stream_options.items() if k not in PRIVATE_OPTIONS}
    if state.thinking_level != "off":
        src.options["reasoning"] = state.thinking_level  # as the agent passes it
    transform = agent.transform_context
    if isinstance(transform, Compactor):
        view = compactor_view(transform)(list(src.messages))
        if should_compact(estimate_context_tokens(view), transform.model.context_window, transform.settings):
            src.notes.append("the history passes the compaction threshold: the next LLM call compacts it first")
        transform = compactor_view(transform)
    src.transform = transform


def source_of(source: Any) -> Source:
    if isinstance(source, NotebookSession):
        src = Source(list(source.messages))
        read_agent(source.agent, src)
        if src.model is None:  # no %%agent run yet: what the next run would use by default
            try:
                src.model = source.resolve_model(None)
                src.tools = [tool.to_tool() for tool in default_tools(source)]
            except Exception as e:  # a bad default in %agent_config: say so, show the rest
                src.notes.append(f"default model unavailable: {type(e).__name__}: {e}")
            src.notes.append("no %%agent run yet: showing the defaults of the next run")
        return src
    if isinstance(source, Agent):
        src = Source(list(source.state.messages))
        read_agent(source, src)
        return src
    if isinstance(source, SessionFile):
        context = source.build_session_context()
        src = Source(list(context.messages))
        spec = context.model
        if spec:
            try:
                src.model = get_model(f"{spec['provider']}/{spec['modelId']}")
            except Exception as e:
                src.notes.append(f"the session's model is not known here: {type(e).__name__}: {e}")
        return src
    return Source(messages_of(source))


def default_tools(session: NotebookSession) -> list[Any]:
    from ..coding_agent.tools import TOOL_FACTORIES

    return [TOOL_FACTORIES[name](session.cwd) for name in parse_tools(session.config.tools)]


def request_key(model: Model) -> str:
    """How a request is named in :attr:`InspectorWidget.requests`: ``"<api> (<model id>)"``."""
    return f"{model.api} ({model.id})"


def resolve_model(model: Model | str | None) -> Model | None:
    return get_model(model) if isinstance(model, str) else model


def redact_secrets(value: Any, secrets: list[str]) -> Any:
    """Belt and braces: no secret value ever reaches widget state, whatever a builder did."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "[redacted]")
        return value
    if isinstance(value, dict):
        return {k: redact_secrets(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_secrets(v, secrets) for v in value]
    return value


def secrets_in(agent_options: dict[str, Any]) -> list[str]:
    found = [os.environ[k] for k in os.environ if k.endswith("_API_KEY") and len(os.environ[k]) >= 8]
    key = agent_options.get("api_key") or agent_options.get("apiKey")
    if key is not None:
        key = key.get_secret_value() if hasattr(key, "get_secret_value") else str(key)
        found += [key] if len(key) >= 4 else []
    return found


def reported_usage(messages: list[Any]) -> dict[str, Any]:
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


def clean_body(value: Any, secrets: list[str], before: tuple[Any, Any] | None = None) -> Any:
    """A request body as the widget state holds it: plain JSON (anything else as ``str()``), every secret
    redacted. ``before`` is the last build's (body, cleaned body): the parts equal to it are not cleaned again,
    its cleaned parts are reused (the same objects, so the delta to the front end skips them at once)."""
    if before is not None:
        raw, clean = before
        if raw is value or (type(raw) is type(value) and raw == value):
            return clean
        if type(value) is dict and type(raw) is dict and type(clean) is dict and all(type(k) is str for k in value):
            reused = {k: (raw[k], clean[k]) for k in value if k in raw and k in clean}
            return {k: clean_body(v, secrets, reused.get(k)) for k, v in value.items()}
        if type(value) is list and type(raw) is list and type(clean) is list and len(raw) == len(clean):
            return [clean_body(v, secrets, (raw[i], clean[i]) if i < len(raw) else None) for i, v in enumerate(value)]
    return redact_secrets(json.loads(json.dumps(value, default=str)), secrets)


def run_transform(transform: Any, messages: list[Any]) -> list[Any]:
    """``transform_context``'s output (typed), run as :func:`~pi_notebook.coding_agent.trace.trace_boundary` runs
    it: a coroutine is awaited with ``asyncio.run``, on a worker thread when this thread already runs a loop."""
    out = run_stage("transform_context", transform, list(messages))
    if _inspect.isawaitable(out):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            running = False
        else:
            running = True
        if running and not _inspect.iscoroutine(out):
            raise ContextPipelineError("transform_context", "returned an awaitable bound to the running loop")

        async def awaited(value: Any = out) -> Any:
            return await value

        try:
            if running:
                with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pi-inspect") as pool:
                    out = pool.submit(asyncio.run, awaited()).result()
            else:
                out = asyncio.run(awaited())
        except Exception as e:
            raise ContextPipelineError("transform_context", f"{type(e).__name__}: {e}") from e
    return [as_agent_message(m) for m in checked_list("transform_context", out)]


@dataclass
class Trace:
    """The rows of a history and what the LLM gets of it; while a long history loads, of its first ``done``."""

    messages: list[Any]
    """The history (typed), as it was read."""
    stepwise: bool
    """Each message's rows depend on that message alone (Pi's boundary): traced in steps, appends alone."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    llm_messages: list[Any] = field(default_factory=list)
    total_tokens: int = 0
    aligned: bool = True
    done: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.done >= len(self.messages)

    def extended(self, messages: list[Any]) -> Trace:
        """The same trace of a history that grew (new lists: the old ones stay as the widget state holds them)."""
        return Trace(
            messages, self.stepwise, list(self.rows), list(self.llm_messages), self.total_tokens, self.aligned,
            self.done, list(self.notes),
        )  # fmt: skip

    def advance(self, count: int) -> None:
        """Trace the next ``count`` messages (Pi's boundary: STEP at a time, so a long history costs its length,
        not its square; the rows are those of one trace of the whole)."""
        stop = min(len(self.messages), self.done + count)
        for start in range(self.done, stop, STEP):
            part = trace_boundary(self.messages[start : min(stop, start + STEP)], None, convert_to_llm)
            for row in part.rows:
                data = row.to_json()
                if data["index"] is not None:
                    data["index"] += start
                self.rows.append(data)
            self.llm_messages += part.llm_messages
            self.total_tokens += part.total_tokens
            self.aligned = self.aligned and part.aligned
        self.done = stop


def retrace(src: Source, before: Trace | None, *, first_only: bool) -> Trace:
    """The trace of ``src``'s history. When the boundary is Pi's own and the history only grew since ``before``,
    only the new messages are traced. ``first_only``: of a long history not traced yet, only the first STEP."""
    typed = [as_agent_message(m) for m in src.messages]
    notes: list[str] = []
    transform, transformed = src.transform, None
    if transform is not None:
        try:
            transformed = run_transform(transform, typed)
        except ContextPipelineError as e:
            notes.append(f"{e} (the next LLM call fails the same way); shown without it")
            transform = None
    unchanged = transformed is not None and len(transformed) == len(typed)
    unchanged = unchanged and all(a is b for a, b in zip(transformed or (), typed, strict=False))
    stepwise = src.convert is convert_to_llm and (transform is None or unchanged)
    if not stepwise:
        trace = trace_boundary(typed, None if transform is None else lambda _messages: transformed, src.convert)
        notes += [] if trace.aligned else ["convert_to_llm does not convert message by message: rows are approximate"]
        rows = [row.to_json() for row in trace.rows]
        return Trace(typed, False, rows, trace.llm_messages, trace.total_tokens, trace.aligned, len(typed), notes)
    grew = before is not None and before.stepwise and len(typed) >= len(before.messages)
    grew = grew and all(a is b for a, b in zip(before.messages, typed, strict=False))  # type: ignore[union-attr]
    trace = before.extended(typed) if grew else Trace(typed, True)  # type: ignore[union-attr]
    trace.notes = notes
    remaining = len(typed) - trace.done
    if first_only and remaining >= LONG:  # the rest in steps, after the cell
        trace.advance(STEP if trace.done == 0 else 0)
    else:
        trace.advance(remaining)
    return trace
