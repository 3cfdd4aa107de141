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
import json
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

__all__ = [
    "NEXT_PROMPT", "PRIVATE_OPTIONS", "CallPreview", "llm_context", "preview_call", "prompt_messages",
    "resolve_awaitable", "without_prompt",
]  # fmt: skip

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


NEXT_PROMPT = "(the next prompt: pi_notebook.agent_core.preview)"
"""The stand-in text of a prompt not known yet: the stages and the provider's builder see a prompt where the real
one will be (the builder may mark the last user turn, a small model's stage keep only the latest exchange), and
the body shown is then that request minus this prompt (:func:`without_prompt`)."""


@dataclass
class CallPreview:
    """The next LLM call, as the loop would make it now."""

    messages: list[Any]
    """The AgentMessage history it starts from (typed), without the new prompt."""
    transformed: list[Any]
    """The history after ``transform_context``, without the new prompt (the history itself when there is no
    transform, or when it failed)."""
    llm_messages: list[Any]
    """The Messages after ``convert_to_llm``, without the new prompt (a failing converter: those of the other
    messages, each converted alone)."""
    context: Context
    """System prompt, Messages and tools: what the provider is handed, the new prompt (or its stand-in) included."""
    model: Model | None
    options: dict[str, Any] = field(default_factory=dict)
    """The stream options the loop passes (``reasoning`` included), without :data:`PRIVATE_OPTIONS`."""
    convert: Callable[..., Any] = convert_to_llm
    """The ``convert_to_llm`` that ran."""
    transform: Callable[..., Any] | None = None
    """The ``transform_context`` stage (``None``: there is none)."""
    prompt: list[Any] = field(default_factory=list)
    """The new prompt's messages: the one asked for, or the stand-in of a prompt not known yet."""
    stand_in: bool = True
    """The prompt is :data:`NEXT_PROMPT`'s stand-in: :meth:`request` leaves it out of the body."""
    error: ContextPipelineError | None = None
    """A stage raised: the call would fail before reaching the provider (``stage`` names which)."""
    notes: list[str] = field(default_factory=list)
    """Things a view should say (added by the layer that made the preview)."""

    def request(self, model: Model | None = None) -> dict[str, Any]:
        """The body ``model``'s provider (default: the agent's model) would be sent: byte for byte the body of
        the call, minus the new prompt when it is not known yet."""
        chosen = model or self.model
        if chosen is None:
            raise ValueError("no model: pass one to request()")
        body = build_request(chosen, self.context, dict(self.options))
        return without_prompt(body) if self.stand_in else body


def without_prompt(body: Any) -> Any:
    """A request body without the stand-in prompt: the block or message that holds it is left out, as is a
    message or a part that held nothing else; a text the builder merged it into loses it."""
    if not isinstance(body, dict):
        out = _strip(body)
        return [] if out is _REMOVE else out
    result: dict[Any, Any] = {}
    for key, value in body.items():  # the body itself stays: a list of turns that held only the prompt is empty
        stripped = _strip(value) if isinstance(value, (str, list, dict)) else value
        if stripped is not _REMOVE:
            result[key] = stripped
        elif isinstance(value, list):
            result[key] = []
    return result


_REMOVE = object()


def _holds(node: Any) -> bool:
    """Whether the stand-in is somewhere in ``node`` (one pass, in C)."""
    if isinstance(node, str):
        return NEXT_PROMPT in node
    return isinstance(node, (dict, list)) and NEXT_PROMPT in json.dumps(node, ensure_ascii=False, default=str)


def _strip(node: Any) -> Any:
    """``node`` without the stand-in: a list loses the item that holds it, looked for from the end, where the
    newest turn is (a body of thousands of turns is not walked); a dict that holds it in a value is removed
    whole when that value would be."""
    if isinstance(node, str):
        if node == NEXT_PROMPT:
            return _REMOVE
        for joined in ("\n\n" + NEXT_PROMPT, NEXT_PROMPT + "\n\n", NEXT_PROMPT):
            node = node.replace(joined, "")
        return node
    if isinstance(node, list):
        for at in range(len(node) - 1, -1, -1):
            if _holds(node[at]):
                stripped = _strip(node[at])
                out = [*node[:at], *([] if stripped is _REMOVE else [stripped]), *node[at + 1 :]]
                return out if out else _REMOVE
        return node
    if isinstance(node, dict):
        result: dict[Any, Any] = {}
        for key, value in node.items():
            stripped = _strip(value) if isinstance(value, (str, list, dict)) else value
            if stripped is _REMOVE:
                return _REMOVE  # the block (or message) held the prompt: it goes with it
            result[key] = stripped
        return result
    return node


def _each_alone(convert: Callable[..., Any], messages: list[Any]) -> list[Any]:
    """What the messages convert to one by one, those whose converter raises left out."""
    out: list[Any] = []
    for message in messages:
        try:
            out += checked_llm_messages(run_sync_stage("convert_to_llm", convert, [message]))
        except ContextPipelineError:
            continue
    return out


def _without(prompt: list[Any], messages: list[Any]) -> list[Any]:
    """``messages`` without the prompt's (themselves, or a converter's equal copies of them at the end)."""
    ids = {id(m) for m in prompt}
    out = [m for m in messages if id(m) not in ids]
    wanted = [to_pi_json(m) for m in prompt]
    while len(out) == len(messages) and wanted and out and to_pi_json(out[-1]) == wanted[-1]:
        out.pop()
        wanted.pop()
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
    whatever it is: the stages and the builder run with the stand-in :data:`NEXT_PROMPT` where it will be (a stage
    may treat the latest exchange differently, as a small model's does; a builder may mark the last user turn),
    and the rows and the body leave it out. A failing ``transform_context`` is reported in ``error`` and the
    history is converted without it; a failing ``convert_to_llm`` too, and the body holds what the other
    messages convert to.
    """
    typed = [as_agent_message(m) for m in history]
    stand_in = prompt is None
    added = [as_agent_message(m) for m in prompt_messages(NEXT_PROMPT if prompt is None else prompt)]
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
        error, llm_messages = error or e, _each_alone(convert, transformed)
    return CallPreview(
        messages=typed,
        transformed=_without(added, transformed),
        llm_messages=_without(added, llm_messages),
        context=llm_context(system_prompt, llm_messages, tools),
        model=model,
        options={k: v for k, v in options.items() if k not in PRIVATE_OPTIONS},
        convert=convert,
        transform=transform,
        prompt=added,
        stand_in=stand_in,
        error=error,
    )
