"""What happened to each AgentMessage on its way to the LLM: the boundary, explained row by row.

:func:`trace_boundary` runs the same two stages as :func:`~pi_notebook.agent_core.convert.prepare_llm_messages`
(``transform_context`` then ``convert_to_llm``), but converts the transformed messages one at a time so every
row lines up with the message it came from. Each original message gets a row saying whether it was passed
unchanged, translated into user message(s), dropped (and why), or summarised away by compaction; messages the
transform added (a compaction summary) get ``injected`` rows. Error/aborted assistant messages survive
``convert_to_llm`` but every provider's pre-pass drops them, so they are shown as dropped, and the trace keeps
both lists: ``llm_messages`` (what ``prepare_llm_messages`` returns) and ``provider_messages`` (what reaches
the provider). A converter that raises for a message gives that message an ``error`` row (what it raised) and the
others are traced as usual; ``BoundaryTrace.error`` says the LLM call itself would fail (the agent's boundary is
unchanged: there a raising converter still fails the run). Pure: no I/O beyond what ``transform_context`` does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..agent_core import ContextPipelineError, OpaqueMessage, as_agent_message, convert_to_llm, message_type, to_pi_json
from ..agent_core.convert import (
    Convert,
    TransformContext,
    await_stage,
    checked_list,
    checked_llm_messages,
    run_stage,
)
from ..agent_core.preview import resolve_awaitable
from ..ai import AssistantMessage
from .compaction import estimate_tokens
from .messages import BashExecutionMessage, CompactionSummaryMessage, CustomMessage

__all__ = ["BoundaryTrace", "TraceRow", "atrace_boundary", "trace_boundary"]

Status = Literal["passed", "translated", "dropped", "summarised", "injected", "error"]

_LLM_ROLES = ("user", "assistant", "toolResult")
ERROR_ASSISTANT_REASON = "error/aborted assistant: not replayed to the provider"


@dataclass
class TraceRow:
    """One message's fate at the LLM boundary."""

    index: int | None
    """Position in the original list; ``None`` for a message the transform injected."""
    role: str
    """The AgentMessage's role."""
    status: Status
    """``passed``, ``translated``, ``dropped``, ``summarised``, ``injected``, or ``error`` (its converter raised)."""
    reason: str
    """Why, in a few words (for ``error``: ``"<ExcType>: <message>"`` of what the converter raised)."""
    tokens: int = 0
    """Estimated tokens of what is sent for it (0 when nothing is)."""
    agent: dict[str, Any] | None = None
    """The AgentMessage as Pi JSON."""
    llm: list[dict[str, Any]] = field(default_factory=list)
    """The LLM Messages sent for it, as Pi JSON (empty when dropped or summarised)."""

    @property
    def produced_text(self) -> str:
        """The text the LLM reads for a translated or injected message ("" otherwise)."""
        if self.status not in ("translated", "injected"):
            return ""
        return "\n\n".join(_text_of(m) for m in self.llm)

    def to_json(self) -> dict[str, Any]:
        """The row for the inspector: ``index, role, status, reason, tokens, agent, llm, produced_text``."""
        return {
            "index": self.index, "role": self.role, "status": self.status, "reason": self.reason,
            "tokens": self.tokens, "agent": self.agent, "llm": self.llm, "produced_text": self.produced_text,
        }  # fmt: skip


@dataclass
class BoundaryTrace:
    """The rows, plus what the LLM call receives."""

    rows: list[TraceRow]
    """Original messages in order, with injected messages where the transform put them."""
    llm_messages: list[Any]
    """What :func:`~pi_notebook.agent_core.convert.prepare_llm_messages` returns (typed Messages)."""
    provider_messages: list[Any]
    """``llm_messages`` without error/aborted assistant messages, which providers drop."""
    aligned: bool = True
    """False when converting messages one by one differs from converting the whole list (a converter that
    merges or reorders); ``llm_messages`` is then the whole-list result and the rows are approximate."""
    error: str | None = None
    """When ``convert_to_llm`` raised for some messages (their rows say ``error``): the error the LLM call
    would fail with. ``llm_messages`` then holds what the other messages convert to."""

    @property
    def total_tokens(self) -> int:
        """Estimated tokens of everything sent."""
        return sum(row.tokens for row in self.rows)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for widgets: rows, both message lists, total tokens, alignment."""
        return {
            "rows": [row.to_json() for row in self.rows],
            "llm_messages": [to_pi_json(m) for m in self.llm_messages],
            "provider_messages": [to_pi_json(m) for m in self.provider_messages],
            "total_tokens": self.total_tokens,
            "aligned": self.aligned,
            "error": self.error,
        }


# --- running the stages --------------------------------------------------------------------------------


def _sync(stage: str, fn: Callable[..., Any], messages: list[Any]) -> Any:
    """Call a stage and resolve what it returned (:func:`resolve_awaitable`); its failure as the stage's."""
    out = run_stage(stage, fn, messages)
    if not inspect.isawaitable(out):
        return out
    try:
        return resolve_awaitable(out)
    except Exception as e:
        raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e


def _typed(messages: Iterable[Any]) -> list[Any]:
    return [as_agent_message(m) for m in messages]


def trace_boundary(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
    *,
    left_out: str | None = None,
) -> BoundaryTrace:
    """Explain, message by message, what ``transform_context`` → ``convert`` does to ``messages``.

    Either stage may be async (it is run with ``asyncio.run``, on a worker thread if an event loop is
    running here); :func:`atrace_boundary` awaits them instead. A failing ``transform_context`` raises
    :class:`~pi_notebook.agent_core.convert.ContextPipelineError`, as in ``prepare_llm_messages``; a message whose
    conversion raises gets an ``error`` row instead (and ``BoundaryTrace.error`` is set). The transform
    really runs: pass a side-effect-free one to preview (a :class:`~pi_notebook.coding_agent.compaction.Compactor`
    over its threshold compacts, calling its model). ``left_out`` (default: the transform's own ``left_out``, as
    the small-model pipeline says) is the reason given for a message the transform left out.
    """
    original = _typed(messages)
    transformed = original
    if transform_context is not None:
        out = _sync("transform_context", transform_context, list(original))
        transformed = _typed(checked_list("transform_context", out))
    per, failed = _each(lambda m: checked_llm_messages(_sync("convert_to_llm", convert, [m])), transformed)
    full = None if failed else checked_llm_messages(_sync("convert_to_llm", convert, list(transformed)))
    return _build(original, transformed, per, full, failed, left_out or getattr(transform_context, "left_out", None))


async def atrace_boundary(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
    *,
    left_out: str | None = None,
) -> BoundaryTrace:
    """Async :func:`trace_boundary`: either stage may be a coroutine function."""
    original = _typed(messages)
    transformed = original
    if transform_context is not None:
        out = await await_stage("transform_context", transform_context, list(original))
        transformed = _typed(checked_list("transform_context", out))
    per: list[list[Any]] = []
    failed: dict[int, str] = {}
    for pos, m in enumerate(transformed):
        try:
            per.append(checked_llm_messages(await await_stage("convert_to_llm", convert, [m])))
        except ContextPipelineError as e:
            per.append([])
            failed[pos] = failure(e)
    full = None if failed else checked_llm_messages(await await_stage("convert_to_llm", convert, list(transformed)))
    return _build(original, transformed, per, full, failed, left_out or getattr(transform_context, "left_out", None))


def _each(convert_one: Callable[[Any], list[Any]], messages: list[Any]) -> tuple[list[list[Any]], dict[int, str]]:
    """Each message converted alone, and the positions whose conversion raised (→ what it raised)."""
    per: list[list[Any]] = []
    failed: dict[int, str] = {}
    for pos, m in enumerate(messages):
        try:
            per.append(convert_one(m))
        except ContextPipelineError as e:  # that row shows the error; the others are traced as usual
            per.append([])
            failed[pos] = failure(e)
    return per, failed


def failure(error: ContextPipelineError) -> str:
    """``"<ExcType>: <message>"`` of what a stage raised (the original error, not its wrapper)."""
    cause = error.__cause__
    if cause is not None and not isinstance(cause, ContextPipelineError):
        return f"{type(cause).__name__}: {cause}"
    return f"{type(error).__name__}: {error}"


# --- building the rows ---------------------------------------------------------------------------------


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "image":
            parts.append(f"[image: {block.get('mimeType', '?')}]")
        elif kind == "thinking":
            parts.append(block.get("thinking", ""))
        elif kind == "toolCall":
            parts.append(f"[tool call: {block.get('name', '?')}]")
    return "\n".join(parts)


def _role(message: Any) -> str:
    role = getattr(message, "role", None)
    return role if isinstance(role, str) else repr(role)


def _is_failed_assistant(message: Any) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")


def _match(original: list[Any], transformed: list[Any]) -> list[int | None]:
    """For each transformed message, the index of the original it is (identity, then equal Pi JSON)."""
    by_id: dict[int, list[int]] = {}
    for i, m in enumerate(original):
        by_id.setdefault(id(m), []).append(i)
    used: set[int] = set()
    json_cache: dict[int, dict[str, Any]] = {}

    def json_of(i: int) -> dict[str, Any]:
        if i not in json_cache:
            json_cache[i] = to_pi_json(original[i])
        return json_cache[i]

    matches: list[int | None] = []
    last = -1
    for t in transformed:
        found = next((i for i in by_id.get(id(t), []) if i not in used), None)
        if found is None:
            wanted = to_pi_json(t)
            # Prefer the next equal message after the last match, so duplicates keep their order.
            order = [*range(last + 1, len(original)), *range(0, last + 1)]
            found = next((i for i in order if i not in used and json_of(i) == wanted), None)
        if found is not None:
            used.add(found)
            last = found
        matches.append(found)
    return matches


def _kept_row(index: int | None, message: Any, produced: list[Any], error: str | None = None) -> TraceRow:
    """The row of a message that reached ``convert_to_llm`` (``error``: what its conversion raised)."""
    role = _role(message)
    row = TraceRow(index, role, "dropped", "", agent=to_pi_json(message))
    if error is not None:
        row.status, row.reason = "error", error
        return row
    if isinstance(message, OpaqueMessage):
        row.reason = f"{message.reason}: never sent"
        return row
    registration = message_type(role)
    if not produced:
        if registration is None:
            row.reason = f"no converter registered for role {role!r}"
        elif registration.to_llm is None:
            row.reason = f"role {role!r} has no converter: UI only"
        elif isinstance(message, BashExecutionMessage) and message.exclude_from_context:
            row.reason = "excludeFromContext (%bash!): shown, never sent"
        else:
            row.reason = "its converter returned nothing"
        return row
    if _is_failed_assistant(message):
        row.reason = ERROR_ASSISTANT_REASON
        return row
    row.llm = [to_pi_json(m) for m in produced]
    row.tokens = sum(estimate_tokens(m) for m in produced)
    if role in _LLM_ROLES and len(produced) == 1 and (produced[0] is message or row.llm[0] == row.agent):
        row.status, row.reason = "passed", "LLM role: sent unchanged"
        return row
    row.status = "translated"
    what = "a user message" if len(produced) == 1 and produced[0].role == "user" else f"{len(produced)} message(s)"
    if role in _LLM_ROLES:
        row.reason = "changed by convert_to_llm"
    elif isinstance(message, CustomMessage) and message.display is False:
        row.reason = f"hidden in the UI (display=False), still sent as {what}"
    else:
        row.reason = f"{role} → {what}"
    return row


def _build(
    original: list[Any],
    transformed: list[Any],
    per: list[list[Any]],
    full: list[Any] | None,
    failed: dict[int, str] | None = None,
    left_out: str | None = None,
) -> BoundaryTrace:
    failed = failed or {}
    matches = _match(original, transformed)
    matched = {i for i in matches if i is not None}
    summary_first = bool(transformed) and isinstance(transformed[0], CompactionSummaryMessage) and matches[0] is None
    first_kept = min(matched) if matched else len(original)
    summarised = {i for i in range(len(original)) if i not in matched and summary_first and i < first_kept}
    # A changed copy (same role and timestamp as a removed message) is told apart from a plain injection.
    removed = [i for i in range(len(original)) if i not in matched and i not in summarised]
    copy_of: dict[int, int] = {}
    for t_pos, (t, m) in enumerate(zip(transformed, matches, strict=True)):
        if m is not None or (t_pos == 0 and summary_first):
            continue
        twin = next((i for i in removed if i not in copy_of.values() and _same_slot(original[i], t)), None)
        if twin is not None:
            copy_of[t_pos] = twin

    rows: list[TraceRow] = []
    emitted: set[int] = set()

    def emit_missing(upto: int) -> None:
        for i in range(upto):
            if i in matched or i in emitted:
                continue
            emitted.add(i)
            row = TraceRow(i, _role(original[i]), "dropped", left_out or "removed by transform_context")
            row.agent = to_pi_json(original[i])
            if i in summarised:
                row.status, row.reason = "summarised", "replaced by the compaction summary"
            elif i in copy_of.values():
                row.reason = "replaced by a changed copy from transform_context"
            rows.append(row)

    for t_pos, (t, m) in enumerate(zip(transformed, matches, strict=True)):
        if m is None:
            if t_pos == 0 and summary_first:
                emit_missing(first_kept)  # what the summary stands for, then the summary
            elif t_pos in copy_of:
                emit_missing(copy_of[t_pos] + 1)  # the original, then its changed copy
            row = _kept_row(None, t, per[t_pos], failed.get(t_pos))
            if row.status not in ("dropped", "error"):
                row.status = "injected"
                if t_pos == 0 and summary_first:
                    row.reason = f"compaction summary added by transform_context (replaces {len(summarised)})"
                elif t_pos in copy_of:
                    row.reason = f"changed copy of message {copy_of[t_pos]} from transform_context"
                else:
                    row.reason = "added by transform_context"
            rows.append(row)
            continue
        emit_missing(m)
        emitted.add(m)
        rows.append(_kept_row(m, t, per[t_pos], failed.get(t_pos)))
    emit_missing(len(original))

    concatenated = [msg for produced in per for msg in produced]
    error = None
    if full is None:  # a converter raised: what the others convert to (the real call fails with the error)
        full, error = concatenated, f"convert_to_llm failed: {next(iter(failed.values()))}"
    aligned = error is not None or [to_pi_json(m) for m in concatenated] == [to_pi_json(m) for m in full]
    provider = [m for m in full if not _is_failed_assistant(m)]
    return BoundaryTrace(rows, full, provider, aligned, error)


def _same_slot(a: Any, b: Any) -> bool:
    ts = getattr(a, "timestamp", None)
    return _role(a) == _role(b) and ts is not None and ts == getattr(b, "timestamp", None)
