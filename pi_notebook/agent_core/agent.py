"""``Agent``: state, queues and subscriptions around the loop (Pi's ``Agent`` class).

The agent owns the AgentMessage history. Each run works on a copy; events update the state as they arrive
(``message_end`` appends the message), so subscribers always see a consistent state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..ai import AssistantMessage, ImageContent, Model, TextContent
from ..ai.abort import AbortController, AbortSignal
from ..ai.streaming import stream
from .convert import convert_to_llm
from .events import AgentEndEvent, RunStop
from .loop import AgentContext, AgentLoopConfig, run_agent_loop, run_agent_loop_continue
from .loop_guard import LoopGuardSettings
from .preview import CallPreview, preview_call, prompt_messages
from .tool import AgentTool

_log = logging.getLogger(__name__)

AgentThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
QueueMode = Literal["all", "one-at-a-time"]


class AgentBusyError(RuntimeError):
    """The agent is already running."""


@dataclass
class AgentState:
    """What the agent knows now."""

    system_prompt: str = ""
    model: Model | None = None
    thinking_level: AgentThinkingLevel = "off"
    tools: list[AgentTool] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    is_streaming: bool = False
    stream_message: Any = None
    pending_tool_calls: set[str] = field(default_factory=set)
    error: str | None = None
    stop: RunStop | None = None
    """Why the loop stopped the last run before the model finished (``max_turns``, the loop guard), or
    ``None``. Not in Pi."""


class Agent:
    """A stateful agent: ``await agent.prompt("...")`` runs until the model stops calling tools."""

    def __init__(
        self,
        model: Model | None = None,
        *,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[Any] = (),
        thinking_level: AgentThinkingLevel = "off",
        convert_to_llm: Callable[[list[Any]], Any] = convert_to_llm,
        transform_context: Callable[[list[Any]], Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        stream_fn: Callable[..., Any] = stream,
        get_api_key: Callable[[str], Any] | None = None,
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        before_tool_call: Callable[..., Any] | None = None,
        after_tool_call: Callable[..., Any] | None = None,
        max_turns: int | None = None,
        loop_guard: LoopGuardSettings | bool = True,
        **stream_options: Any,
    ):
        self.state = AgentState(
            system_prompt=system_prompt, model=model, thinking_level=thinking_level,
            tools=list(tools), messages=list(messages),
        )  # fmt: skip
        self._pipeline_listeners: list[Callable[[], Any]] = []
        self._convert_to_llm = convert_to_llm
        self._transform_context = transform_context
        self.steering_mode = steering_mode
        self.follow_up_mode = follow_up_mode
        self.stream_fn = stream_fn
        self.get_api_key = get_api_key
        self.tool_execution = tool_execution
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.max_turns = max_turns
        self.loop_guard = loop_guard  # True (default settings), False (off) or LoopGuardSettings; not in Pi
        self.stream_options = stream_options
        self._listeners: list[Callable[[Any], Any]] = []
        self._steering: list[Any] = []
        self._follow_ups: list[Any] = []
        self._controller: AbortController | None = None
        self._run_task: asyncio.Future[Any] | None = None

    # --- the two stages before every LLM call ---------------------------------------------------------

    @property
    def convert_to_llm(self) -> Callable[[list[Any]], Any]:
        """Stage 2, AgentMessage[] → Message[] (required). Setting it takes effect at the next LLM call and tells
        :meth:`on_pipeline_change` listeners (an open inspector shows what the LLM would get now)."""
        return self._convert_to_llm

    @convert_to_llm.setter
    def convert_to_llm(self, fn: Callable[[list[Any]], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"convert_to_llm must be callable, not {type(fn).__name__}")
        self._convert_to_llm = fn
        self._pipeline_changed()

    @property
    def transform_context(self) -> Callable[[list[Any]], Any] | None:
        """Stage 1, AgentMessage[] → AgentMessage[] (optional, ``None``). Setting it takes effect at the next LLM
        call and tells :meth:`on_pipeline_change` listeners."""
        return self._transform_context

    @transform_context.setter
    def transform_context(self, fn: Callable[[list[Any]], Any] | None) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(f"transform_context must be callable or None, not {type(fn).__name__}")
        self._transform_context = fn
        self._pipeline_changed()

    def on_pipeline_change(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Call ``listener()`` after ``convert_to_llm`` or ``transform_context`` is set (not in Pi: it lets a view
        of the boundary follow). Returns ``unsubscribe``."""
        self._pipeline_listeners.append(listener)
        return lambda: self._pipeline_listeners.remove(listener) if listener in self._pipeline_listeners else None

    def _pipeline_changed(self) -> None:
        for listener in list(self._pipeline_listeners):
            listener()

    # --- state ----------------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Any]:
        return self.state.messages

    @property
    def is_streaming(self) -> bool:
        return self.state.is_streaming

    def set_model(self, model: Model) -> None:
        self.state.model = model

    def set_system_prompt(self, prompt: str) -> None:
        self.state.system_prompt = prompt

    def set_thinking_level(self, level: AgentThinkingLevel) -> None:
        self.state.thinking_level = level

    def set_tools(self, tools: Sequence[AgentTool]) -> None:
        self.state.tools = list(tools)

    def replace_messages(self, messages: Sequence[Any]) -> None:
        self.state.messages = list(messages)

    def append_message(self, message: Any) -> None:
        """Add a message without running (no events)."""
        self.state.messages.append(message)

    def reset(self) -> None:
        """Forget the history, the queues and the last error."""
        self.state.messages = []
        self.state.stream_message = None
        self.state.pending_tool_calls = set()
        self.state.error = None
        self.clear_all_queues()

    def subscribe(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``listener(event)`` for every event, after the state update. Returns ``unsubscribe``."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # --- queues ---------------------------------------------------------------------------------------

    def steer(self, message: Any) -> None:
        """Queue a message to inject as soon as the current tool calls finish."""
        self._steering.append(message)

    def follow_up(self, message: Any) -> None:
        """Queue a message to send when the agent would otherwise stop."""
        self._follow_ups.append(message)

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_ups.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_ups.clear()

    def has_queued_messages(self) -> bool:
        return bool(self._steering or self._follow_ups)

    def _dequeue(self, queue: list[Any], mode: QueueMode) -> list[Any]:
        taken = queue[:] if mode == "all" else queue[:1]
        del queue[: len(taken)]
        return taken

    # --- running --------------------------------------------------------------------------------------

    async def prompt(self, message: str | Any | Sequence[Any], images: Sequence[ImageContent] = ()) -> None:
        """Send a user prompt (text, a message, or several) and run until the agent stops."""
        if self.state.is_streaming:
            raise AgentBusyError(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
                "or wait for completion."
            )
        if self.state.model is None:
            raise ValueError("No model configured")
        prompts = prompt_messages(message, images)
        await self._run(lambda ctx, cfg, emit, sig: run_agent_loop(prompts, ctx, cfg, emit, sig))

    async def continue_(self) -> None:
        """Run again from the current history (after a tool result, an error retry, or queued messages)."""
        if self.state.is_streaming:
            raise AgentBusyError("Agent is already processing. Wait for completion before continuing.")
        if not self.state.messages:
            raise ValueError("No messages to continue from")
        if getattr(self.state.messages[-1], "role", None) == "assistant":
            steering = self._dequeue(self._steering, self.steering_mode)
            queued = steering or self._dequeue(self._follow_ups, self.follow_up_mode)
            if not queued:
                raise ValueError("Cannot continue from message role: assistant")
            # As Pi: a run that starts from queued steering takes no more steering before its first call, so
            # one-at-a-time steering sends one message per call.
            skip = bool(steering)
            await self._run(
                lambda ctx, cfg, emit, sig: run_agent_loop(queued, ctx, cfg, emit, sig, skip_initial_steering_poll=skip)
            )
            return
        await self._run(lambda ctx, cfg, emit, sig: run_agent_loop_continue(ctx, cfg, emit, sig))

    def abort(self) -> None:
        """Stop the current run (thread-safe): the provider call and running tools are cancelled."""
        if self._controller is not None:
            self._controller.abort()

    async def wait_for_idle(self) -> None:
        """Return once no run is in progress."""
        if self._run_task is not None:
            await asyncio.shield(self._run_task)

    def call_options(self) -> dict[str, Any]:
        """The stream options of each LLM call: :attr:`stream_options`, and ``reasoning`` unless thinking is off."""
        options = dict(self.stream_options)
        if self.state.thinking_level != "off":
            options["reasoning"] = self.state.thinking_level
        return options

    def preview(
        self, prompt: str | Any | Sequence[Any] | None = None, *, messages: Sequence[Any] | None = None
    ) -> CallPreview:
        """The first LLM call ``prompt(prompt)`` would make now (without a prompt: the next prompt's call, minus
        that prompt), computed by the loop's own functions and without side effects: a stage with a
        ``preview(messages)`` method (compaction) is previewed, not run. ``messages`` replaces the history (a
        what-if). Not in Pi. See :func:`~pi_notebook.agent_core.preview.preview_call`."""
        state = self.state
        return preview_call(
            state.messages if messages is None else messages, prompt,
            transform=self.transform_context, convert=self.convert_to_llm, system_prompt=state.system_prompt,
            tools=state.tools, model=state.model, options=self.call_options(),
        )  # fmt: skip

    def _config(self) -> AgentLoopConfig:
        model = self.state.model
        assert model is not None
        options = self.call_options()
        return AgentLoopConfig(
            model=model, convert_to_llm=self.convert_to_llm, transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            get_steering_messages=lambda: self._dequeue(self._steering, self.steering_mode),
            get_follow_up_messages=lambda: self._dequeue(self._follow_ups, self.follow_up_mode),
            tool_execution=self.tool_execution, before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call, stream_options=options, stream_fn=self.stream_fn,
            max_turns=self.max_turns, loop_guard=_guard_settings(self.loop_guard),
        )  # fmt: skip

    async def _run(self, start: Callable[..., Any]) -> None:
        self._controller = AbortController()
        signal = self._controller.signal
        self.state.is_streaming = True
        self.state.stream_message = None
        self.state.error = None
        self.state.stop = None
        context = AgentContext(self.state.system_prompt, list(self.state.messages), list(self.state.tools))
        self._run_task = asyncio.ensure_future(start(context, self._config(), self._on_event, signal))
        try:
            await self._run_task
        except Exception as e:  # a bug in a hook or listener: record it as Pi does, never lose the history
            await self._record_crash(e, signal)
        finally:
            self.state.is_streaming = False
            self.state.stream_message = None
            self.state.pending_tool_calls = set()
            self._controller = None

    async def _record_crash(self, error: Exception, signal: AbortSignal) -> None:
        model = self.state.model
        assert model is not None  # a run starts only with a model (_config), and set_model() takes no None
        message = AssistantMessage(
            content=[TextContent(text="")], api=model.api, provider=model.provider, model=model.id,
            stop_reason="aborted" if signal.aborted else "error",
            error_message=str(error) or type(error).__name__,
        )  # fmt: skip
        self.state.messages.append(message)
        self.state.error = message.error_message
        self._notify(AgentEndEvent([message]))

    def _on_event(self, event: Any) -> None:
        state = self.state
        kind = event.type
        if kind in ("message_start", "message_update"):
            state.stream_message = event.message
        elif kind == "message_end":
            state.stream_message = None
            state.messages.append(event.message)
        elif kind == "tool_execution_start":
            state.pending_tool_calls.add(event.tool_call_id)
        elif kind == "tool_execution_end":
            state.pending_tool_calls.discard(event.tool_call_id)
        elif kind == "turn_end" and getattr(event.message, "error_message", None):
            state.error = event.message.error_message
        elif kind == "agent_end":
            state.stop = event.stop
            state.is_streaming = False
            state.stream_message = None
        self._notify(event)

    def _notify(self, event: Any) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                # A broken display must not kill the run or lose messages; the traceback is logged.
                _log.exception("agent event listener failed on %s", event.type)


def _guard_settings(value: LoopGuardSettings | bool) -> LoopGuardSettings | None:
    if isinstance(value, LoopGuardSettings):
        return value
    return LoopGuardSettings() if value else None
