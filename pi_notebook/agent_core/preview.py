"""What the next LLM call would be sent, computed without making it (not in Pi: it lets a view show the truth).

The loop builds every call from the agent's state with the functions here: the history through
``transform_context`` then ``convert_to_llm``, then :func:`llm_context` (system prompt, messages, tools) and the
stream options (:meth:`~pi_notebook.agent_core.agent.Agent.call_options`). :func:`preview_call` runs the same
functions on the same state, so "what the LLM gets" as a view shows cannot drift from what a run sends.

A stage that acts as well as transforms (a compaction that calls a model and writes the session file, a cache
that remembers what it cut) offers ``preview(messages)``: the same result without acting. The preview calls that
instead; any other stage (your own function) runs as it is, awaited if it is async.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ai import Context, ImageContent, Model, TextContent, UserMessage, build_request
from .convert import (
    ContextPipelineError,
    checked_list,
    checked_llm_messages,
    convert_to_llm,
    run_stage,
    takes_signal,
)
from .messages import as_agent_message, to_pi_json
from .tool import AgentTool

__all__ = ["PRIVATE_OPTIONS", "CallPreview", "llm_context", "preview_call", "prompt_messages", "resolve_awaitable"]

PRIVATE_OPTIONS = frozenset({"api_key", "apiKey", "signal", "on_payload", "onPayload", "headers"})
"""Stream options a preview never holds: secrets and callbacks (none of them is part of a request body)."""


def prompt_messages(message: str | Any | Sequence[Any], images: Sequence[ImageContent] = ()) -> list[Any]:
    """What ``Agent.prompt(message)`` adds to the history: a text becomes one user message (with ``images``)."""
    if isinstance(message, str):
        return [UserMessage(content=[TextContent(text=message), *images])]
    if isinstance(message, Sequence):
        return list(message)
    return [message]


def llm_context(system_prompt: str, llm_messages: list[Any], tools: Sequence[AgentTool]) -> Context:
    """The LLM context of one call, as the loop builds it: no empty system prompt, no empty tool list."""
    return Context(
        system_prompt=system_prompt or None, messages=llm_messages, tools=[t.to_tool() for t in tools] or None
    )


async def _awaited(value: Any) -> Any:
    return await value


def resolve_awaitable(out: Any) -> Any:
    """A stage's result, awaited when it is awaitable: with ``asyncio.run``, on a worker thread when this thread
    already runs an event loop (as a Jupyter cell does). Raises what the stage raised, and ``RuntimeError`` for an
    awaitable bound to the running loop (only a coroutine can be run elsewhere)."""
    if not inspect.isawaitable(out):
        return out
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if running and not inspect.iscoroutine(out):
        raise RuntimeError("returned an awaitable bound to the running loop (await it there instead)")
    if not running:
        return asyncio.run(_awaited(out))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pi-preview") as pool:
        return pool.submit(asyncio.run, _awaited(out)).result()


def run_sync_stage(stage: str, fn: Callable[..., Any], messages: list[Any]) -> Any:
    """Call one stage and resolve what it returned; any failure is the stage's :class:`ContextPipelineError`. A
    stage that takes Pi's ``(messages, signal)`` gets ``None``: a preview has nothing to abort."""
    extra = (None,) if takes_signal(fn) else ()
    out = run_stage(stage, fn, messages, *extra)
    try:
        return resolve_awaitable(out)
    except Exception as e:
        raise ContextPipelineError(stage, f"{type(e).__name__}: {e}") from e


def previewing(stage: Callable[..., Any]) -> Callable[..., Any]:
    """The function a preview runs for ``stage``: its side-effect-free ``preview`` when it has one."""
    preview = getattr(stage, "preview", None)
    return preview if callable(preview) else stage


@dataclass
class CallPreview:
    """The next LLM call, as the loop would make it now."""

    messages: list[Any]
    """The AgentMessage history it starts from (typed), without the new prompt."""
    transformed: list[Any]
    """The history after ``transform_context`` (the history itself when there is none, or when it failed)."""
    llm_messages: list[Any]
    """The Messages after ``convert_to_llm`` (empty when it failed)."""
    context: Context
    """System prompt, Messages and tools: what the provider is handed."""
    model: Model | None
    options: dict[str, Any] = field(default_factory=dict)
    """The stream options the loop passes (``reasoning`` included), without :data:`PRIVATE_OPTIONS`."""
    convert: Callable[..., Any] = convert_to_llm
    """The ``convert_to_llm`` that ran."""
    transform: Callable[..., Any] | None = None
    """The ``transform_context`` stage (``None``: there is none)."""
    prompt: list[Any] = field(default_factory=list)
    """The new prompt's messages, when the preview was asked for one (they end ``transformed`` and ``llm_messages``)."""
    error: ContextPipelineError | None = None
    """A stage raised: the call would fail before reaching the provider (``stage`` names which)."""
    notes: list[str] = field(default_factory=list)
    """Things a view should say (added by the layer that made the preview)."""

    def request(self, model: Model | None = None) -> dict[str, Any]:
        """The body ``model``'s provider (default: the agent's model) would be sent for this call."""
        chosen = model or self.model
        if chosen is None:
            raise ValueError("no model: pass one to request()")
        return build_request(chosen, self.context, dict(self.options))


def _without(placeholder: Any, messages: list[Any]) -> list[Any]:
    """``messages`` without the placeholder prompt (itself, or a converter's equal copy of it at the end)."""
    out = [m for m in messages if m is not placeholder]
    if len(out) == len(messages) and out and to_pi_json(out[-1]) == to_pi_json(placeholder):
        out.pop()
    return out


def preview_call(
    history: Sequence[Any],
    prompt: str | Any | Sequence[Any] | None = None,
    *,
    transform: Callable[..., Any] | None,
    convert: Callable[..., Any],
    system_prompt: str,
    tools: Sequence[AgentTool],
    model: Model | None,
    options: dict[str, Any],
) -> CallPreview:
    """The first LLM call a prompt would make now, computed with the loop's own functions.

    With ``prompt``, the call ``Agent.prompt(prompt)`` would make. Without one, the call of the next prompt,
    whatever it is, minus that prompt: the stages run on the history plus a placeholder prompt (a stage may treat
    the latest exchange differently, as a small model's does) and the placeholder is taken out of what they
    returned. A failing ``transform_context`` is reported in ``error`` and the history is converted without it;
    a failing ``convert_to_llm`` leaves ``llm_messages`` empty.
    """
    typed = [as_agent_message(m) for m in history]
    placeholder = None
    if prompt is None:
        placeholder = UserMessage(content=[TextContent(text="")])
        added: list[Any] = [placeholder]
    else:
        added = [as_agent_message(m) for m in prompt_messages(prompt)]
    staged = typed + added
    error: ContextPipelineError | None = None
    transformed = staged
    if transform is not None:
        try:
            out = run_sync_stage("transform_context", previewing(transform), list(staged))
            transformed = [as_agent_message(m) for m in checked_list("transform_context", out)]
        except ContextPipelineError as e:
            error = e
    try:
        llm_messages = checked_llm_messages(run_sync_stage("convert_to_llm", convert, list(transformed)))
    except ContextPipelineError as e:
        error, llm_messages = error or e, []
    if placeholder is not None:
        transformed, llm_messages = _without(placeholder, transformed), _without(placeholder, llm_messages)
    return CallPreview(
        messages=typed,
        transformed=transformed,
        llm_messages=llm_messages,
        context=llm_context(system_prompt, llm_messages, tools),
        model=model,
        options={k: v for k, v in options.items() if k not in PRIVATE_OPTIONS},
        convert=convert,
        transform=transform,
        prompt=[] if placeholder is not None else added,
        error=error,
    )
