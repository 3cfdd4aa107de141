"""What the inspector reads and how it traces it: the source (a notebook session, an Agent, a session file or a
list of messages) with its pipeline (``transform_context``, ``convert_to_llm``, system prompt, tools, model and
options), the trace of its history through that pipeline (whole, or only what was appended when the boundary is
Pi's own), and the request bodies' cleaning (plain JSON, every secret redacted). No widget here:
:mod:`~pi_notebook.notebook.inspector` shows it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import Agent, ContextPipelineError, as_agent_message, convert_to_llm, registry_version, to_pi_json
from ..agent_core.convert import checked_list, run_stage, takes_signal
from ..ai import AssistantMessage, Model, get_model
from ..coding_agent import CompactionSummaryMessage
from ..coding_agent.compaction import (
    CompactionSettings,
    Compactor,
    estimate_context_tokens,
    find_cut_point,
    should_compact,
)
from ..coding_agent.context_fit import ContextFitter, fit_messages, latest_exchange
from ..coding_agent.session import SessionFile
from ..coding_agent.session_context import entry_messages
from ..coding_agent.session_entries import CompactionEntry
from ..coding_agent.trace import resolve_awaitable, trace_boundary
from .config import parse_tools
from .kernel import NotebookSession
from .widgets import messages_of

CONVERTER_FAILED = (
    "a converter raised for the rows marked error: they are shown without it here, and the next LLM call fails"
)
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
    compactor: Compactor | None = None
    """The compaction the agent runs before each LLM call, if any (never run by the inspector)."""
    settings: CompactionSettings | None = None
    """Its settings, or those the next run would use; ``None``: the source does not compact (a list, a file)."""
    covered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """A compaction summary's text → the messages it replaced (Pi JSON), read from the session file."""


def first_kept_index(compactor: Compactor, messages: list[Any]) -> int | None:
    """Where the Compactor's first kept message is in ``messages`` (itself, else an equal copy); ``None``."""
    first = compactor.first_kept_message
    at = next((i for i, m in enumerate(messages) if m is first), None)
    if at is None and compactor.summary_message is not None:
        wanted = to_pi_json(first)
        at = next((i for i, m in enumerate(messages) if to_pi_json(m) == wanted), None)
    return at


def compactor_view(compactor: Compactor) -> Any:
    """The Compactor's current view without compacting: its summary + the kept messages (if any)."""

    def view(messages: list[Any]) -> list[Any]:
        summary = compactor.summary_message
        if summary is None:
            return list(messages)
        at = first_kept_index(compactor, messages)
        return list(messages) if at is None else [summary, *messages[at:]]

    return view


def session_transform(session: NotebookSession) -> Any:
    """What the session's agent runs as ``transform_context``, without compacting: the user's transform (if set),
    then the notebook's fitter and the Compactor's current view (once a run made them)."""
    user, fitter = session.transform_context, session.fitter
    if fitter is not None and not isinstance(fitter.then, (Compactor, type(None))):
        return fitter if user is None else None  # not the notebook's own stages: run as the agent runs them
    if user is None and fitter is None:
        return None

    def staged(messages: list[Any]) -> list[Any]:
        if user is not None:
            out = resolve_awaitable(user(list(messages), None) if takes_signal(user) else user(list(messages)))
            if isinstance(out, (str, bytes, dict)) or not isinstance(out, Sequence):  # as the agent's stage says
                raise TypeError(f"your transform_context returned {type(out).__name__}, not a list of messages")
            messages = [as_agent_message(m) for m in out]
        if fitter is None:
            return messages
        if fitter.latest_only:
            messages = latest_exchange(messages)
        fitted, _ = fit_messages(messages, fitter.model.context_window or 128_000)
        return compactor_view(fitter.then)(fitted) if isinstance(fitter.then, Compactor) else fitted

    return staged


def covered_by_summaries(file: SessionFile) -> dict[str, list[dict[str, Any]]]:
    """For each compaction on the file's branch, its summary → the messages it replaced (Pi JSON): those from the
    previous compaction's first kept entry (or the start) up to its own first kept entry."""
    branch = file.get_branch()
    covered: dict[str, list[dict[str, Any]]] = {}
    start = 0
    for at, entry in enumerate(branch):
        if not isinstance(entry, CompactionEntry):
            continue
        kept = next((i for i in range(at - 1, -1, -1) if branch[i].id == entry.first_kept_entry_id), at)
        replaced = [e for e in branch[start:kept] if not isinstance(e, CompactionEntry)]
        covered[entry.summary] = [to_pi_json(m) for m in entry_messages(replaced)]
        start = kept
    return covered


def compaction_state(src: Source, messages: list[Any], model: Model | None) -> dict[str, Any]:
    """Where the next compaction would cut, for the inspector's gauge: ``threshold`` (tokens above which Pi
    compacts: the window minus ``reserve_tokens``), ``cut`` (index of the first message it would keep, Pi's cut
    point for ``keep_recent_tokens``), ``summarise`` (the indices it would summarise), ``enabled``, and the two
    settings. ``{}`` when the source does not compact."""
    settings = src.settings
    if settings is None or model is None:
        return {}
    start = 0
    if src.compactor is not None and src.compactor.summary_message is not None:
        start = first_kept_index(src.compactor, messages) or 0
    elif messages and isinstance(messages[0], CompactionSummaryMessage):
        start = 1  # a history rebuilt from a compacted session: its summary is updated, not summarised
    cut = find_cut_point(messages, settings.keep_recent_tokens, start).first_kept_index if messages else 0
    return {
        "threshold": int(model.context_window or 0) - settings.reserve_tokens,
        "cut": cut,
        "summarise": list(range(start, cut)),
        "enabled": settings.enabled,
        "reserve_tokens": settings.reserve_tokens,
        "keep_recent_tokens": settings.keep_recent_tokens,
    }


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
    if isinstance(transform, ContextFitter) and isinstance(transform.then, Compactor):
        src.compactor, src.settings = transform.then, transform.then.settings
    if isinstance(transform, Compactor):
        src.compactor, src.settings = transform, transform.settings
        view = compactor_view(transform)(list(src.messages))
        if should_compact(estimate_context_tokens(view), transform.model.context_window, transform.settings):
            src.notes.append("the history passes the compaction threshold: the next LLM call compacts it first")
        transform = compactor_view(transform)
    src.transform = transform


def source_of(source: Any) -> Source:
    if isinstance(source, NotebookSession):
        src = Source(list(source.messages))
        read_agent(source.agent, src)
        src.transform = session_transform(source)
        if src.model is None:  # no %%agent run yet: what the next run would use by default
            try:
                src.model = source.resolve_model(None)
                src.tools = [tool.to_tool() for tool in default_tools(source)]
            except Exception as e:  # a bad default in %agent_config: say so, show the rest
                src.notes.append(f"default model unavailable: {type(e).__name__}: {e}")
            src.notes.append("no %%agent run yet: showing the defaults of the next run")
        if src.settings is None and src.model is not None:
            src.settings = source.compaction_settings(src.model)
        if has_summary(src.messages) or (src.compactor is not None and src.compactor.summary_message is not None):
            src.covered = covered_by_summaries(source.file)
        return src
    if isinstance(source, Agent):
        src = Source(list(source.state.messages))
        read_agent(source, src)
        if src.settings is None:  # an agent without compaction: where Pi's default settings would cut
            src.settings = CompactionSettings(enabled=False)
        return src
    if isinstance(source, SessionFile):
        context = source.build_session_context()
        src = Source(list(context.messages))
        if has_summary(src.messages):
            src.covered = covered_by_summaries(source)
        spec = context.model
        if spec:
            try:
                src.model = get_model(f"{spec['provider']}/{spec['modelId']}")
            except Exception as e:
                src.notes.append(f"the session's model is not known here: {type(e).__name__}: {e}")
        return src
    return Source(messages_of(source))


def has_summary(messages: list[Any]) -> bool:
    """A history rebuilt from a compacted session starts with the summary (checked without typing the rest)."""
    first = messages[0] if messages else None
    return isinstance(first, CompactionSummaryMessage) or (
        isinstance(first, dict) and first.get("role") == "compactionSummary"
    )


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
    try:
        out = resolve_awaitable(out)
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
    version: int = -1
    """The registry's version the rows were converted with: a re-registered converter makes them stale."""
    errors: int = 0
    """Rows whose converter raised."""
    covered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """What each compaction summary replaced (:attr:`Source.covered`), added to its row as ``covered``."""

    @property
    def complete(self) -> bool:
        return self.done >= len(self.messages)

    def extended(self, messages: list[Any]) -> Trace:
        """The same trace of a history that grew (new lists: the old ones stay as the widget state holds them)."""
        return Trace(
            messages, self.stepwise, list(self.rows), list(self.llm_messages), self.total_tokens, self.aligned,
            self.done, list(self.notes), self.version, self.errors, self.covered,
        )  # fmt: skip

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Append rows: a summary's row gets what it replaced; a converter's error is counted and noted once."""
        for data in rows:
            if data["role"] == "compactionSummary" and self.covered:
                summary = (data.get("agent") or {}).get("summary")
                if summary in self.covered:
                    data["covered"] = self.covered[summary]
            if data["status"] == "error":
                self.errors += 1
                if self.errors == 1:
                    self.notes.append(CONVERTER_FAILED)
            self.rows.append(data)

    def advance(self, count: int) -> None:
        """Trace the next ``count`` messages (Pi's boundary: STEP at a time, so a long history costs its length,
        not its square; the rows are those of one trace of the whole)."""
        stop = min(len(self.messages), self.done + count)
        for start in range(self.done, stop, STEP):
            part = trace_boundary(self.messages[start : min(stop, start + STEP)], None, convert_to_llm)
            rows = [row.to_json() for row in part.rows]
            for data in rows:
                if data["index"] is not None:
                    data["index"] += start
            self.add_rows(rows)
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
    version = registry_version()  # read before converting: a registration meanwhile makes these rows stale
    if not stepwise:
        trace = trace_boundary(typed, None if transform is None else lambda _messages: transformed, src.convert)
        notes += [] if trace.aligned else ["convert_to_llm does not convert message by message: rows are approximate"]
        result = Trace(typed, False, [], trace.llm_messages, trace.total_tokens, trace.aligned, len(typed), notes)
        result.version, result.covered = version, src.covered
        result.add_rows([row.to_json() for row in trace.rows])
        return result
    # Only the new messages are traced when nothing else changed: the same converters (registry), Pi's boundary
    # before and now, and the old history a prefix of the new one.
    grew = before is not None and before.stepwise and before.version == version and len(typed) >= len(before.messages)
    grew = grew and all(a is b for a, b in zip(before.messages, typed, strict=False))  # type: ignore[union-attr]
    trace = before.extended(typed) if grew else Trace(typed, True, version=version)  # type: ignore[union-attr]
    trace.covered = src.covered
    trace.notes = notes + [CONVERTER_FAILED] * bool(trace.errors)
    remaining = len(typed) - trace.done
    if first_only and remaining >= LONG:  # the rest in steps, after the cell
        trace.advance(STEP if trace.done == 0 else 0)
    else:
        trace.advance(remaining)
    return trace
