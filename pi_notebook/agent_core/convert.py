"""The LLM boundary: AgentMessage[] → (transform_context) → AgentMessage[] → (convert_to_llm) → Message[].

``transform_context`` works on the rich layer (prune, inject, compact) and ``convert_to_llm`` only
translates, one message at a time, through each role's registered converter. Keeping the stages apart lets
an app change one without touching the other. The core knows no app role: an app's converters (the coding
agent's, with Pi's texts, are in :mod:`pi_notebook.coding_agent.messages`) arrive through the registry.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, NamedTuple

from ..ai import AssistantMessage, ToolResultMessage, UserMessage
from .messages import MessageType, OpaqueMessage, as_agent_message, from_pi_json, message_type, passed_through_types

_LLM_CLASSES = (UserMessage, AssistantMessage, ToolResultMessage)


def _to_llm(message: Any) -> list[Any]:
    """What the LLM sees of one AgentMessage (possibly nothing)."""
    if isinstance(message, OpaqueMessage):
        return []
    registration = message_type(getattr(message, "role", None))
    if registration is None or registration.to_llm is None:
        return []
    return _checked(registration, registration.to_llm(message))


def _checked(registration: MessageType, out: Any) -> list[Any]:
    """A converter's result as a list of LLM Messages, or a ``TypeError`` naming the role."""
    if out is None:
        return []
    produced = [out] if isinstance(out, _LLM_CLASSES) else list(out)
    for item in produced:
        if not isinstance(item, _LLM_CLASSES):
            raise TypeError(
                f"the converter of role {registration.role!r} returned {type(item).__name__}, "
                "expected UserMessage, AssistantMessage or ToolResultMessage"
            )
    return produced


def convert_to_llm(messages: Iterable[Any]) -> list[Any]:
    """AgentMessage[] → Message[] with Pi's rules: LLM roles pass through, custom roles are translated,
    ``exclude_from_context`` and unknown roles are dropped. Accepts typed messages or Pi JSON dicts."""
    result: list[Any] = []
    append = result.append
    passthrough = passed_through_types()
    for message in messages:  # _to_llm, inlined: this runs before every LLM call, over the whole history
        if type(message) in passthrough:
            append(message)
            continue
        if isinstance(message, dict):
            message = from_pi_json(message)
        if isinstance(message, OpaqueMessage):
            continue
        registration = message_type(getattr(message, "role", None))
        if registration is None or registration.to_llm is None:
            continue
        out = registration.to_llm(message)
        if isinstance(out, _LLM_CLASSES):
            append(out)
        elif out is not None:
            result += _checked(registration, out)
    return result


# --- visibility ----------------------------------------------------------------------------------------


class Visibility(NamedTuple):
    """Who sees a message: the UI (transcript) and/or the LLM."""

    ui: bool
    llm: bool

    @property
    def level(self) -> str:
        """``"both"``, ``"ui"`` (e.g. ``%bash!``), ``"llm"`` (``display=False``) or ``"none"``."""
        return {(True, True): "both", (True, False): "ui", (False, True): "llm"}.get(self, "none")


def visibility(message: Any) -> Visibility:
    """The visibility of one AgentMessage: shown unless it has ``display=False``; sent if its converter
    produces anything."""
    m = as_agent_message(message)
    ui = getattr(m, "display", True) is not False
    return Visibility(ui=ui, llm=bool(_to_llm(m)))


# --- the two-stage pipeline ----------------------------------------------------------------------------


class ContextPipelineError(RuntimeError):
    """A stage of the LLM boundary failed; ``stage`` names it and ``__cause__`` holds the original error."""

    def __init__(self, stage: str, message: str):
        self.stage = stage
        super().__init__(f"{stage} failed: {message}")


TransformContext = Callable[[list[Any]], "list[Any] | Awaitable[list[Any]]"]
Convert = Callable[[list[Any]], "list[Any] | Awaitable[list[Any]]"]


def checked_list(stage: str, value: Any) -> list[Any]:
    """``value`` as a list of messages, or a :class:`ContextPipelineError` naming ``stage``."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Sequence):
        raise ContextPipelineError(stage, f"expected a list of messages, got {type(value).__name__}")
    return list(value)


def run_stage(stage: str, fn: Callable[..., Any], messages: list[Any], *extra: Any) -> Any:
    """Call one stage; an exception becomes a :class:`ContextPipelineError` naming ``stage``."""
    try:
        return fn(messages, *extra)
    except Exception as e:
        raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e


def checked_llm_messages(value: Any) -> list[Any]:
    """``value`` as a list of LLM Messages, or a :class:`ContextPipelineError` for ``convert_to_llm``."""
    out = checked_list("convert_to_llm", value)
    for m in out:
        if not isinstance(m, _LLM_CLASSES):
            raise ContextPipelineError("convert_to_llm", f"produced a {type(m).__name__}, not an LLM Message")
    return out


def prepare_llm_messages(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
) -> list[Any]:
    """Run ``transform_context`` (optional) then ``convert`` on a copy of ``messages``, in Pi's order.

    A stage that raises, returns something that is not a list, or produces non-Messages gives a
    :class:`ContextPipelineError` naming the stage. Use :func:`aprepare_llm_messages` for async stages.
    """
    staged = [as_agent_message(m) for m in messages]
    if transform_context is not None:
        out = sync_stage("transform_context", transform_context, staged)
        staged = [as_agent_message(m) for m in checked_list("transform_context", out)]
    return checked_llm_messages(sync_stage("convert_to_llm", convert, staged))


def sync_stage(stage: str, fn: Callable[..., Any], messages: list[Any]) -> Any:
    """:func:`run_stage` for a synchronous pipeline: an async stage is an error."""
    out = run_stage(stage, fn, messages)
    if inspect.isawaitable(out):
        if inspect.iscoroutine(out):
            out.close()  # never awaited: close it so Python does not warn
        raise ContextPipelineError(stage, "is async: use aprepare_llm_messages")
    return out


def takes_signal(fn: Callable[..., Any]) -> bool:
    """True if ``fn`` accepts a second positional argument: Pi's ``transformContext(messages, signal)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


async def await_stage(stage: str, fn: Callable[..., Any], messages: list[Any], *extra: Any) -> Any:
    """:func:`run_stage`, awaiting the result when the stage is async."""
    out = run_stage(stage, fn, messages, *extra)
    if inspect.isawaitable(out):
        try:
            out = await out
        except Exception as e:
            raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e
    return out


async def aprepare_llm_messages(
    messages: Iterable[Any],
    transform_context: TransformContext | None = None,
    convert: Convert = convert_to_llm,
    *,
    signal: Any = None,
) -> list[Any]:
    """Async :func:`prepare_llm_messages`: either stage may be a coroutine function. A ``transform_context``
    that takes a second argument gets ``signal`` (the run's abort signal), as Pi's does: a compaction it
    starts can then be stopped."""
    staged = [as_agent_message(m) for m in messages]
    if transform_context is not None:
        extra = (signal,) if signal is not None and takes_signal(transform_context) else ()
        out = await await_stage("transform_context", transform_context, staged, *extra)
        staged = [as_agent_message(m) for m in checked_list("transform_context", out)]
    return checked_llm_messages(await await_stage("convert_to_llm", convert, staged))
