"""The agent loop (Pi's ``agent-loop.ts`` semantics).

A *turn* is one assistant response plus the results of the tools it called; the loop keeps taking turns while
the model calls tools or messages are queued. Before every LLM call the AgentMessage history goes through
``transform_context`` then ``convert_to_llm``; only the assistant's reply is written back to the context.

Failures are data: a provider failure ends the run with an ``error``/``aborted`` assistant message; a failing
tool, an unknown tool, bad arguments or a blocking hook become ``is_error`` tool results the model reads. One
deliberate difference from Pi: a failing ``transform_context``/``convert_to_llm`` also becomes an ``error``
assistant message inside the loop (Pi throws and lets the Agent patch one in), so every run ends with
``turn_end`` and ``agent_end``.

Beyond Pi, two guards end a run the model has not finished, and ``agent_end.stop`` (a :class:`RunStop`) says
why: ``max_turns``, and the loop guard (:mod:`.loop_guard`: identical tool calls in a row, a reply whose tail
repeats itself). Both are off when their setting is ``None``; the loop then behaves exactly as Pi's.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..ai import AssistantMessage, Model, TextContent, ThinkingContent, ToolCall, ToolResultMessage, now_ms
from ..ai.abort import AbortController, AbortSignal
from ..ai.streaming import stream
from .convert import ContextPipelineError, aprepare_llm_messages, convert_to_llm
from .events import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    RunStop,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .loop_guard import (
    LoopGuard,
    LoopGuardSettings,
    RepeatedTail,
    StreamingText,
    find_repeated_tail,
    repeats_from,
    stop_for_text,
    text_note,
)
from .preview import llm_context
from .tool import AgentTool, AgentToolResult, ToolArgumentsError, validate_tool_arguments

SKIPPED_TEXT = "Skipped due to queued user message."
BLOCKED_TEXT = "Tool execution was blocked"

Emit = Callable[[Any], Any]


@dataclass
class AgentContext:
    """What the loop works on: the system prompt, the AgentMessage history (mutated) and the tools."""

    system_prompt: str = ""
    messages: list[Any] = field(default_factory=list)
    tools: list[AgentTool] = field(default_factory=list)


@dataclass
class BeforeToolCallResult:
    """Returned by ``before_tool_call`` to refuse a call."""

    block: bool = False
    reason: str | None = None


@dataclass
class AfterToolCallResult:
    """Returned by ``after_tool_call``: each field that is not ``None`` replaces the original."""

    content: list[Any] | None = None
    details: Any = None
    is_error: bool | None = None


@dataclass
class ToolCallContext:
    """What the hooks see. ``result``/``is_error`` are set for ``after_tool_call`` only."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: dict[str, Any]
    context: AgentContext
    result: AgentToolResult | None = None
    is_error: bool = False


@dataclass
class AgentLoopConfig:
    """How the loop calls the model and runs tools. ``stream_options`` go to ``stream_fn`` as is."""

    model: Model
    convert_to_llm: Callable[[list[Any]], Any] = convert_to_llm
    transform_context: Callable[[list[Any]], Any] | None = None
    get_api_key: Callable[[str], Any] | None = None
    get_steering_messages: Callable[[], Any] | None = None
    get_follow_up_messages: Callable[[], Any] | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    before_tool_call: Callable[[ToolCallContext, Any], Any] | None = None
    after_tool_call: Callable[[ToolCallContext, Any], Any] | None = None
    stream_options: dict[str, Any] = field(default_factory=dict)
    stream_fn: Callable[..., Any] = stream
    max_turns: int | None = None
    """Stop after this many LLM calls in one run, even if the model keeps calling tools (not in Pi: a guard
    for small local models that loop). ``agent_end.stop`` then says so."""
    loop_guard: LoopGuardSettings | None = field(default_factory=LoopGuardSettings)
    """Notice identical tool calls in a row and replies that repeat themselves (not in Pi; see
    :mod:`.loop_guard`). ``None`` turns it off."""


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _poll(fn: Callable[[], Any] | None) -> list[Any]:
    return list(await _maybe_await(fn()) or []) if fn is not None else []


class _Run:
    """One run of the loop: the context, the config, the signal and the event sink."""

    def __init__(self, context: AgentContext, config: AgentLoopConfig, emit: Emit, signal: Any):
        self.context, self.config, self.signal = context, config, signal
        self._emit = emit
        self.new_messages: list[Any] = []
        self.turns = 0
        self.guard = LoopGuard(config.loop_guard) if config.loop_guard is not None else None
        self._watch: StreamingText | None = None  # the guard's look at the reply streaming now
        self.stop: RunStop | None = None

    async def end(self) -> None:
        await self.emit(AgentEndEvent(list(self.new_messages), self.stop))

    async def emit(self, event: Any) -> None:
        result = self._emit(event)
        if result is not None and inspect.isawaitable(result):
            await result

    async def announce(self, message: Any) -> None:
        await self.emit(MessageStartEvent(message))
        await self.emit(MessageEndEvent(message))

    # --- the turns ------------------------------------------------------------------------------------

    async def run(self, skip_initial_steering_poll: bool = False) -> None:
        first_turn = True
        pending = [] if skip_initial_steering_poll else await _poll(self.config.get_steering_messages)
        while True:
            more_tool_calls = True
            while more_tool_calls or pending:
                if first_turn:
                    first_turn = False
                else:
                    await self.emit(TurnStartEvent())
                for message in pending:
                    await self.announce(message)
                    self.context.messages.append(message)
                    self.new_messages.append(message)
                pending = []
                reply = await self.stream_response()
                self.new_messages.append(reply)
                if reply.stop_reason in ("error", "aborted") or self.stop is not None:
                    # An error, an abort, or a reply the loop guard cut: its tool calls (if any) are not run.
                    await self.emit(TurnEndEvent(reply, []))
                    await self.end()
                    return
                calls = [b for b in reply.content if isinstance(b, ToolCall)]
                more_tool_calls = bool(calls)
                results: list[ToolResultMessage] = []
                steering: list[Any] = []
                if calls:
                    results, steering = await self.execute_tool_calls(reply, calls)
                    self.context.messages.extend(results)
                    self.new_messages.extend(results)
                await self.emit(TurnEndEvent(reply, results))
                self.turns += 1
                if self.stop is not None:  # the loop guard refused a repeated tool call
                    await self.end()
                    return
                if self.config.max_turns is not None and self.turns >= self.config.max_turns:
                    if more_tool_calls or steering:  # a final answer on the last allowed turn is no stop
                        self.stop = _max_turns_stop(self.turns)
                    await self.end()
                    return
                pending = steering or await _poll(self.config.get_steering_messages)
            pending = await _poll(self.config.get_follow_up_messages)
            if not pending:
                break
        await self.end()

    async def stream_response(self) -> AssistantMessage:
        config, model = self.config, self.config.model
        try:
            llm_messages = await aprepare_llm_messages(
                self.context.messages, config.transform_context, config.convert_to_llm, signal=self.signal
            )
        except ContextPipelineError as e:
            return await self.failed_before_streaming(str(e))
        context = llm_context(self.context.system_prompt, llm_messages, self.context.tools)
        options = dict(config.stream_options)
        if config.get_api_key is not None:
            try:
                key = await _maybe_await(config.get_api_key(model.provider))
            except Exception as e:
                return await self.failed_before_streaming(f"get_api_key failed: {e}")
            if key:
                options["api_key"] = key
        stream_abort, link = self._stream_signal()
        options["signal"] = self.signal if stream_abort is None else stream_abort.signal
        try:
            try:
                response = config.stream_fn(model, context, options)
            except Exception as e:  # e.g. no provider for this api: still a message, not a crash
                return await self.failed_before_streaming(str(e) or type(e).__name__)
            started = False
            cut: tuple[int, RepeatedTail] | None = None
            self._watch = None if self.guard is None else StreamingText(self.guard.settings)
            emit, messages = self._emit, self.context.messages
            async for event in response:
                kind = event.type
                if kind == "start":
                    started = True
                    messages.append(event.partial)
                    await self.emit(MessageStartEvent(event.partial))
                elif kind == "done" or kind == "error":
                    break
                elif started and cut is None:
                    messages[-1] = event.partial
                    cut = self._repeated_text(event)
                    if cut is not None and stream_abort is not None:
                        stream_abort.abort("loop guard")  # stop generating; the rest would be more of the same
                    # self.emit inlined: this runs for every delta.
                    result = emit(MessageUpdateEvent(event.partial, event))
                    if result is not None and inspect.isawaitable(result):
                        await result
            final = await response.result()
        finally:
            if link is not None:
                link()
        final = self._cut_repeated_text(final, cut)
        if started:
            self.context.messages[-1] = final
        else:
            self.context.messages.append(final)
            await self.emit(MessageStartEvent(final))
        await self.emit(MessageEndEvent(final))
        return final

    # --- the loop guard on text -------------------------------------------------------------------------

    def _stream_signal(self) -> tuple[AbortController | None, Callable[[], None] | None]:
        """A signal for one provider call that fires with the run's, so the guard can stop this call alone, and
        the function that unlinks it. Without the guard, or with a signal it cannot follow, the run's own signal
        is used as is."""
        if self.guard is None or (self.signal is not None and not isinstance(self.signal, AbortSignal)):
            return None, None
        controller, parent = AbortController(), self.signal
        if parent is None:
            return controller, None
        if parent.aborted:
            controller.abort(parent.reason)
            return controller, None
        return controller, parent.add_listener(lambda: controller.abort(parent.reason))

    def _repeated_text(self, event: Any) -> tuple[int, RepeatedTail] | None:
        if self._watch is None or event.type not in ("text_delta", "thinking_delta"):
            return None
        index = event.content_index
        tail = self._watch.check(index, _block_text(event.partial.content[index]))
        return None if tail is None else (index, tail)

    def _cut_repeated_text(self, final: AssistantMessage, cut: tuple[int, RepeatedTail] | None) -> AssistantMessage:
        """The reply with a repeating tail cut to one occurrence plus a note (checked again at the end, for
        providers that do not stream deltas); the run then stops. A user abort wins: nothing is cut."""
        if self.guard is None or (self.signal is not None and self.signal.is_set()):
            return final
        if cut is None and final.stop_reason not in ("error", "aborted") and final.content:
            last = len(final.content) - 1
            tail = find_repeated_tail(_block_text(final.content[last]), self.guard.settings)
            cut = None if tail is None else (last, tail)
        if cut is None:
            return final
        index, tail = cut
        if index >= len(final.content) or not isinstance(final.content[index], (TextContent, ThinkingContent)):
            return final
        text = _block_text(final.content[index])
        chunk, repeats = tail.chunk(text), repeats_from(text, tail.start, tail.period)
        kept = text[: tail.keep].rstrip() + "\n\n" + text_note(chunk, repeats)
        block = final.content[index]
        block = block.model_copy(update={"text": kept} if isinstance(block, TextContent) else {"thinking": kept})
        # What came after the repetition (if the provider went on) is dropped with it. The reply counts as
        # finished, not aborted, so the model sees its cut reply (and the note) next time.
        message = final.model_copy(
            update={"content": [*final.content[:index], block], "stop_reason": "stop", "error_message": None}
        )
        self.stop = stop_for_text(chunk, repeats)
        return message

    async def failed_before_streaming(self, error: str) -> AssistantMessage:
        model = self.config.model
        aborted = bool(self.signal is not None and self.signal.is_set())
        message = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id,
            stop_reason="aborted" if aborted else "error", error_message=error,
        )  # fmt: skip
        self.context.messages.append(message)
        await self.announce(message)
        return message

    # --- tools ----------------------------------------------------------------------------------------

    async def execute_tool_calls(
        self, reply: AssistantMessage, calls: Sequence[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[Any]]:
        if self.config.tool_execution == "sequential":
            return await self._sequential(reply, calls)
        return await self._parallel(reply, calls)

    async def _sequential(
        self, reply: AssistantMessage, calls: Sequence[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[Any]]:
        results: list[ToolResultMessage] = []
        for index, call in enumerate(calls):
            await self.emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            prepared = await self.prepare(reply, call)
            if isinstance(prepared, AgentToolResult):
                results.append(await self.finish(call, prepared, True))
            else:
                tool, args = prepared
                outcome = await self.execute(call, tool, args)
                results.append(await self.finish(call, *await self.after(reply, call, args, *outcome)))
            steering = await _poll(self.config.get_steering_messages)
            if steering:
                results += await self.skip(calls[index + 1 :], announce_start=True)
                return results, steering
        return results, []

    async def _parallel(
        self, reply: AssistantMessage, calls: Sequence[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[Any]]:
        results: list[ToolResultMessage] = []
        runnable: list[tuple[ToolCall, AgentTool, dict[str, Any]]] = []
        for index, call in enumerate(calls):
            await self.emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            prepared = await self.prepare(reply, call)
            if isinstance(prepared, AgentToolResult):
                results.append(await self.finish(call, prepared, True))
            else:
                runnable.append((call, *prepared))
            steering = await _poll(self.config.get_steering_messages)
            if steering:
                results += await self.skip([c for c, _, _ in runnable], announce_start=False)
                results += await self.skip(calls[index + 1 :], announce_start=True)
                return results, steering
        tasks = [asyncio.ensure_future(self.execute(call, tool, args)) for call, tool, args in runnable]
        try:
            # The tools run concurrently; their after_tool_call hooks run one by one in source order, each just
            # before its tool_execution_end, as in Pi.
            for (call, _, args), task in zip(runnable, tasks, strict=True):
                results.append(await self.finish(call, *await self.after(reply, call, args, *await task)))
        finally:
            for task in tasks:
                task.cancel()
        return results, await _poll(self.config.get_steering_messages)

    async def skip(self, calls: Sequence[ToolCall], announce_start: bool) -> list[ToolResultMessage]:
        skipped = []
        for call in calls:
            if announce_start:
                await self.emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            skipped.append(await self.finish(call, _error_result(SKIPPED_TEXT), True))
        return skipped

    async def prepare(
        self, reply: AssistantMessage, call: ToolCall
    ) -> AgentToolResult | tuple[AgentTool, dict[str, Any]]:
        """The tool and validated arguments, or the error result that answers the call at once."""
        if self.guard is not None:
            check = self.guard.check_call(call.id, call.name, call.arguments)
            if check.action == "stop":
                self.stop = self.guard.stop_for_calls(call.name, check.count)
                return _error_result(self.guard.refused_text(call.name, check.count))
        tool = next((t for t in self.context.tools if t.name == call.name), None)
        if tool is None:
            return _error_result(f"Tool {call.name} not found")
        try:
            args = validate_tool_arguments(tool, call.arguments, call.name)
        except ToolArgumentsError as e:
            return _error_result(str(e))
        if self.config.before_tool_call is not None:
            hook_context = ToolCallContext(reply, call, args, self.context)
            try:
                verdict = await _maybe_await(self.config.before_tool_call(hook_context, self.signal))
            except Exception as e:  # reported as its bare message, as in Pi
                return _error_result(str(e) or type(e).__name__)
            if verdict is not None and verdict.block:
                return _error_result(verdict.reason or BLOCKED_TEXT)
        return tool, args

    async def execute(self, call: ToolCall, tool: AgentTool, args: dict[str, Any]) -> tuple[AgentToolResult, bool]:
        loop = asyncio.get_running_loop()
        updates: list[asyncio.Future[Any]] = []

        def on_update(partial: AgentToolResult) -> None:
            # Tools may report from a worker thread; emit on the loop, in order, before the end event.
            def schedule() -> None:
                event = ToolExecutionUpdateEvent(call.id, call.name, call.arguments, partial)
                updates.append(asyncio.ensure_future(self.emit(event)))

            if _on_loop_thread(loop):
                schedule()
            else:
                loop.call_soon_threadsafe(schedule)

        try:
            result, is_error = await tool.run(call.id, args, self.signal, on_update), False
        except Exception as e:
            result, is_error = _error_result(str(e) or type(e).__name__), True
        await asyncio.sleep(0)  # let updates scheduled from a worker thread land
        if updates:
            await asyncio.gather(*updates)
        return result, is_error

    async def after(
        self, reply: AssistantMessage, call: ToolCall, args: dict[str, Any], result: AgentToolResult, is_error: bool
    ) -> tuple[AgentToolResult, bool]:
        """The ``after_tool_call`` hook, if any: it may replace the result's content, details or error flag.

        A hook that raises ends the run, as in Pi: the exception leaves the loop, and :class:`Agent` records it
        as an assistant message with ``stop_reason="error"`` (a bug in a hook must not pass as a tool result).
        """
        if self.config.after_tool_call is not None:
            hook_context = ToolCallContext(reply, call, args, self.context, result, is_error)
            change = await _maybe_await(self.config.after_tool_call(hook_context, self.signal))
            if change is not None:
                result = AgentToolResult(
                    content=result.content if change.content is None else change.content,
                    details=result.details if change.details is None else change.details,
                )
                is_error = is_error if change.is_error is None else change.is_error
        return result, is_error

    async def finish(self, call: ToolCall, result: AgentToolResult, is_error: bool) -> ToolResultMessage:
        if self.guard is not None:
            note = self.guard.result_note(call.id, call.name, _result_text(result))
            if note is not None:
                result = _with_note(result, note)
        await self.emit(ToolExecutionEndEvent(call.id, call.name, result, is_error))
        message = ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=list(result.content), details=result.details,
            is_error=is_error, timestamp=now_ms(),
        )  # fmt: skip
        await self.announce(message)
        return message


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _error_result(text: str) -> AgentToolResult:
    return AgentToolResult.text(text, details={})


def _max_turns_stop(turns: int) -> RunStop:
    unit = "turn" if turns == 1 else "turns"
    return RunStop(
        "max_turns",
        f"Stopped after {turns} {unit} (max_turns={turns}) before the model gave an answer.",
        {"turns": turns, "maxTurns": turns},
    )


def _block_text(block: Any) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ThinkingContent):
        return block.thinking
    return ""


def _result_text(result: AgentToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def _with_note(result: AgentToolResult, note: str) -> AgentToolResult:
    """``note`` appended to the result's text (after a blank line), or as a text block if it ends otherwise."""
    content = list(result.content)
    if content and isinstance(content[-1], TextContent):
        content[-1] = content[-1].model_copy(update={"text": f"{content[-1].text}\n\n{note}"})
    else:
        content.append(TextContent(text=note))
    return AgentToolResult(content=content, details=result.details)


async def run_agent_loop(
    prompts: Sequence[Any],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: Any = None,
    *,
    skip_initial_steering_poll: bool = False,
) -> list[Any]:
    """Add ``prompts`` to ``context`` and run until the agent stops; return the messages new in this run.

    ``emit(event)`` (sync or async) receives every event. ``context.messages`` is updated in place. With
    ``skip_initial_steering_poll`` (the prompts are themselves queued steering), no more steering is taken
    before the first call, as in Pi.
    """
    run = _Run(context, config, emit, signal)
    run.new_messages.extend(prompts)
    context.messages.extend(prompts)
    await run.emit(AgentStartEvent())
    await run.emit(TurnStartEvent())
    for prompt in prompts:
        await run.announce(prompt)
    await run.run(skip_initial_steering_poll)
    return run.new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: Any = None,
    *,
    skip_initial_steering_poll: bool = False,
) -> list[Any]:
    """Run from the existing history (e.g. after a tool result or a retry). The last message must not be an
    assistant message."""
    if not context.messages:
        raise ValueError("Cannot continue: no messages in context")
    if getattr(context.messages[-1], "role", None) == "assistant":
        raise ValueError("Cannot continue from message role: assistant")
    run = _Run(context, config, emit, signal)
    await run.emit(AgentStartEvent())
    await run.emit(TurnStartEvent())
    await run.run(skip_initial_steering_poll)
    return run.new_messages


class AgentEventStream:
    """``async for event in agent_loop(...)``; ``await stream.result()`` gives the new messages."""

    def __init__(self, start: Callable[[Emit], Awaitable[list[Any]]]):
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._done = object()
        self._task = asyncio.ensure_future(self._drive(start))

    async def _drive(self, start: Callable[[Emit], Awaitable[list[Any]]]) -> list[Any]:
        try:
            return await start(self._queue.put_nowait)
        finally:
            self._queue.put_nowait(self._done)

    def __aiter__(self) -> AgentEventStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._queue.get()
        if item is self._done:
            self._queue.put_nowait(item)
            raise StopAsyncIteration
        return item

    async def result(self) -> list[Any]:
        return await self._task


def agent_loop(
    prompts: Sequence[Any], context: AgentContext, config: AgentLoopConfig, signal: Any = None
) -> AgentEventStream:
    """:func:`run_agent_loop` as an async iterator of events (call from a running event loop)."""
    return AgentEventStream(lambda emit: run_agent_loop(prompts, context, config, emit, signal))


def agent_loop_continue(context: AgentContext, config: AgentLoopConfig, signal: Any = None) -> AgentEventStream:
    """:func:`run_agent_loop_continue` as an async iterator of events."""
    return AgentEventStream(lambda emit: run_agent_loop_continue(context, config, emit, signal))
