"""What the inspector reads and how it traces it: the next request of its source (a session, an Agent, a session
file or a list of messages), as the source's own ``preview()`` computes it with the code a run uses, the trace of
its history through that request's stages (whole, or only what was appended when the boundary is Pi's own), and
the request bodies' cleaning (plain JSON, every secret redacted). Nothing here rebuilds the pipeline: a session's
and an Agent's previews come from :meth:`~pi_notebook.coding_agent.agent_session.AgentSession.preview` and
:meth:`~pi_notebook.agent_core.Agent.preview`; a file or a list is previewed as an Agent holding it would send it.
No widget here: :mod:`~pi_notebook.notebook.inspector` shows it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import Agent, CallPreview, as_agent_message, convert_to_llm, registry_version
from ..ai import AssistantMessage, Model, get_model
from ..coding_agent.agent_session import AgentSession
from ..coding_agent.compaction import CompactionSettings, Compactor
from ..coding_agent.context_pipeline import COMPACTION_DUE, ContextPipeline, compaction_state, overhead_tokens
from ..coding_agent.messages import CompactionSummaryMessage
from ..coding_agent.session import SessionFile
from ..coding_agent.session_context import covered_by_summaries
from ..coding_agent.trace import trace_boundary
from .widgets import messages_of

CONVERTER_FAILED = (
    "a converter raised for the rows marked error: they are shown without it here, and the next LLM call fails"
)
LONG = 300
"""Histories this long or longer load in steps and rebuild their request bodies after the cell (in a kernel)."""
STEP = 250
"""Messages traced per step (also the first display's rows of a long history)."""


@dataclass
class Source:
    """What the inspector shows of a source: its next request and what the source knows around it."""

    call: CallPreview
    """The next LLM call (:class:`~pi_notebook.agent_core.CallPreview`), minus its prompt."""
    notes: list[str] = field(default_factory=list)
    compaction: dict[str, Any] = field(default_factory=dict)
    """Where the next compaction would cut (``{}``: the source does not compact, or has no model)."""
    covered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """A compaction summary's text → the messages it replaced (Pi JSON), read from the session file."""
    system_tokens: int = 0
    tools_tokens: int = 0

    @property
    def messages(self) -> list[Any]:
        return self.call.messages

    @property
    def model(self) -> Model | None:
        return self.call.model


def _agent_source(agent: Agent, messages: Sequence[Any] | None, notes: list[str]) -> Source:
    """An Agent's next request; the compaction it runs, if any, read from its stage (never run)."""
    call = agent.preview(messages=messages)
    stage = agent.transform_context
    compaction: dict[str, Any] = {}
    if isinstance(stage, ContextPipeline):
        compaction = stage.compaction_state(call.messages)
        notes += stage.last_preview.notes if stage.last_preview is not None else []
    elif isinstance(stage, Compactor):
        compaction = compaction_state(call.messages, stage.model, stage.settings, stage)
        if stage.due(call.messages):
            notes.append(COMPACTION_DUE)
    elif call.model is not None:  # an agent without compaction: where Pi's default settings would cut
        compaction = compaction_state(call.messages, call.model, CompactionSettings(enabled=False))
    system, tools = overhead_tokens(call.context)
    return Source(call, notes, compaction, system_tokens=system, tools_tokens=tools)


def history_of(source: Any) -> list[Any]:
    """The history a source holds now (typed), as its preview starts from it."""
    return [as_agent_message(m) for m in messages_of(source)]


def source_of(source: Any, messages: Sequence[Any] | None = None) -> Source:
    """The next request of ``source`` (``messages`` in place of its history: a what-if)."""
    if isinstance(source, AgentSession):
        try:
            preview = source.preview(messages=messages)
        except Exception as e:  # a bad default in %agent_config: say so, show the history without a model
            history = source.messages if messages is None else messages
            return _agent_source(
                Agent(None, messages=history), None, [f"default model unavailable: {type(e).__name__}: {e}"]
            )
        return Source(
            preview.call, list(preview.notes), preview.compaction, preview.covered,
            preview.system_tokens, preview.tools_tokens,
        )  # fmt: skip
    if isinstance(source, Agent):
        return _agent_source(source, messages, [])
    if isinstance(source, SessionFile):
        context = source.build_session_context()
        notes: list[str] = []
        model = None
        spec = context.model
        if spec:
            try:
                model = get_model(f"{spec['provider']}/{spec['modelId']}")
            except Exception as e:
                notes.append(f"the session's model is not known here: {type(e).__name__}: {e}")
        src = _agent_source(Agent(model, messages=context.messages), messages, notes)
        if src.messages and isinstance(src.messages[0], CompactionSummaryMessage):
            src.covered = covered_by_summaries(source)
        return src
    return _agent_source(Agent(None, messages=messages_of(source)), messages, [])


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
    convert: Any = convert_to_llm
    """The converter the rows were made with (one that converts message by message, when ``stepwise``)."""

    @property
    def complete(self) -> bool:
        return self.done >= len(self.messages)

    def extended(self, messages: list[Any]) -> Trace:
        """The same trace of a history that grew (new lists: the old ones stay as the widget state holds them)."""
        return Trace(
            messages, self.stepwise, list(self.rows), list(self.llm_messages), self.total_tokens, self.aligned,
            self.done, list(self.notes), self.version, self.errors, self.covered, self.convert,
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
            part = trace_boundary(self.messages[start : min(stop, start + STEP)], None, self.convert)
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
    """The trace of ``src``'s history through its next request's stages (``src.call``: what its transform returned,
    and its converter). When the boundary is Pi's own and the history only grew since ``before``, only the new
    messages are traced. ``first_only``: of a long history not traced yet, only the first STEP."""
    call = src.call
    typed = call.messages
    notes: list[str] = []
    transformed: list[Any] | None = call.transformed if call.transform is not None else None
    if call.error is not None and call.error.stage == "transform_context":
        notes.append(f"{call.error} (the next LLM call fails the same way); shown without it")
        transformed = None
    unchanged = transformed is None or (
        len(transformed) == len(typed) and all(a is b for a, b in zip(transformed, typed, strict=False))
    )
    # Rows can be made in steps (and only the new messages traced) when each message converts on its own: Pi's
    # convert_to_llm, or a converter that says so (the session's for a model that reads no images).
    per_message = call.convert is convert_to_llm or getattr(call.convert, "per_message", False) is True
    stepwise = per_message and unchanged
    version = registry_version()  # read before converting: a registration meanwhile makes these rows stale
    if not stepwise:
        staged = transformed
        whole = trace_boundary(
            typed, None if staged is None else lambda _messages: staged, call.convert,
            left_out=getattr(call.transform, "left_out", None),
        )  # fmt: skip
        notes += [] if whole.aligned else ["convert_to_llm does not convert message by message: rows are approximate"]
        result = Trace(typed, False, [], whole.llm_messages, whole.total_tokens, whole.aligned, len(typed), notes)
        result.version, result.covered = version, src.covered
        result.add_rows([row.to_json() for row in whole.rows])
        return result
    # Only the new messages are traced when nothing else changed: the same converters (registry), Pi's boundary
    # before and now, and the old history a prefix of the new one.
    grew = (
        before is not None
        and before.stepwise
        and before.convert is call.convert
        and before.version == version
        and len(typed) >= len(before.messages)
        and all(a is b for a, b in zip(before.messages, typed, strict=False))
    )
    trace = (
        before.extended(typed)
        if before is not None and grew
        else Trace(typed, True, version=version, convert=call.convert)
    )
    trace.covered = src.covered
    trace.notes = notes + [CONVERTER_FAILED] * bool(trace.errors)
    remaining = len(typed) - trace.done
    if first_only and remaining >= LONG:  # the rest in steps, after the cell
        trace.advance(STEP if trace.done == 0 else 0)
    else:
        trace.advance(remaining)
    return trace


def chosen_model(src: Source, model: Model | None = None) -> Model:
    """The model whose request is shown first: the one asked for, else the source's, else a catalogue default."""
    from ..ai.models import DEFAULT_ANTHROPIC_MODEL

    return model or src.model or get_model(DEFAULT_ANTHROPIC_MODEL)


def view_state(src: Source, trace: Trace, chosen: Model) -> dict[str, Any]:
    """The inspector's state that does not depend on the request bodies: rows, the gauge's figures, the notes and
    the compaction marks (the widget and the export page both show exactly this)."""
    return {
        "rows": trace.rows,
        "context_window": int(chosen.context_window or 0),
        "total_tokens": trace.total_tokens + src.system_tokens + src.tools_tokens,
        "overhead_tokens": {"system": src.system_tokens, "tools": src.tools_tokens},
        "reported_usage": reported_usage(trace.messages),
        "model_name": f"{chosen.provider}/{chosen.id}",
        "notes": [*src.notes, *trace.notes],
        "compaction": src.compaction,
    }


def request_body(
    src: Source, model: Model, secrets: list[str], before: tuple[Any, Any] | None = None
) -> tuple[Any, Any]:
    """``model``'s request body of the source's next call (the preview's: what the agent loop would send), as built
    and as cleaned for the view (:func:`clean_body`; ``before``: the last build, whose unchanged parts are reused).
    A builder that cannot handle the context gives ``{"error": ...}``, and the other bodies are still shown."""
    try:
        body = src.call.request(model)
    except Exception as e:
        body = {"error": f"{type(e).__name__}: {e}"}
    return body, clean_body(body, secrets, before)
