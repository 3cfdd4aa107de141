"""The agent loop and Agent, driven by the scripted faux provider (no network)."""

import asyncio

import pytest

from pi_notebook.agent import BashExecutionMessage, CustomMessage
from pi_notebook.agent_core.agent import Agent, AgentBusyError
from pi_notebook.agent_core.loop import AfterToolCallResult, BeforeToolCallResult
from pi_notebook.agent_core.tool import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, UserMessage, faux

OBJ = {"type": "object"}


pytestmark = pytest.mark.usefixtures("fresh_faux")


def make_tool(name, fn, parameters=None):
    return AgentTool(name=name, description=f"the {name} tool", parameters=parameters or OBJ, execute=fn)


def echo_tool(log=None, delay=0.0):
    async def run(call_id, params, signal, on_update):
        if log is not None:
            log.append(("start", params.get("text")))
        on_update(AgentToolResult.text("working..."))
        await asyncio.sleep(delay)
        if log is not None:
            log.append(("end", params.get("text")))
        return AgentToolResult.text(f"echo: {params.get('text')}", details={"n": len(params.get("text", ""))})

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return make_tool("echo", run, schema)


def recording_agent(**kw):
    agent = Agent(faux.model(), system_prompt="You are a test.", **kw)
    events = []
    agent.subscribe(events.append)
    return agent, events


def run(coro):
    return asyncio.run(coro)


def tool_texts(messages):
    return [m.content[0].text for m in messages if m.role == "toolResult"]


def test_a_tool_using_conversation_runs_turn_by_turn_with_pis_events():
    faux.set_responses([[faux.tool_call("echo", {"text": "hi"}, id="c1")], "Done: the tool said hi."])
    agent, events = recording_agent(tools=[echo_tool()])
    run(agent.prompt("Use the echo tool"))
    types = [e.type for e in events if e.type != "message_update"]
    assert types == [
        "agent_start", "turn_start", "message_start", "message_end",  # the prompt
        "message_start", "message_end",  # assistant: tool call
        "tool_execution_start", "tool_execution_update", "tool_execution_end",
        "message_start", "message_end", "turn_end",  # tool result
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    assert [m.role for m in agent.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert agent.messages[2].details == {"n": 2} and tool_texts(agent.messages) == ["echo: hi"]
    # the second LLM call saw the tool result, and the system prompt both times
    assert [m.role for m in faux.calls[1].messages] == ["user", "assistant", "toolResult"]
    assert faux.calls[1].tools[0].name == "echo" and faux.calls[0].system_prompt == "You are a test."
    assert events[-1].messages == agent.messages and not agent.is_streaming


def test_custom_roles_reach_the_llm_translated_and_excluded_ones_do_not():
    faux.set_responses(["ok"])
    agent, _ = recording_agent(messages=[
        BashExecutionMessage(command="ls", output="a.txt", exit_code=0),
        BashExecutionMessage(command="cat .env", output="KEY=1", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="hint", content="hidden hint", display=False),
    ])  # fmt: skip
    run(agent.prompt("go"))
    seen = [m.content[0].text for m in faux.calls[0].messages]
    assert seen == ["Ran `ls`\n```\na.txt\n```", "hidden hint", "go"]
    assert len(agent.messages) == 5  # all AgentMessages kept, excluded one included


def test_transform_context_runs_before_every_llm_call():
    calls = []

    def transform(messages):
        calls.append(len(messages))
        return messages[-2:]  # keep only the newest two

    faux.set_responses([[faux.tool_call("echo", {"text": "x"})], "done"])
    agent, _ = recording_agent(tools=[echo_tool()], transform_context=transform)
    run(agent.prompt("p"))
    assert calls == [1, 3]
    assert [m.role for m in faux.calls[1].messages] == ["assistant", "toolResult"]
    assert len(agent.messages) == 4  # the transform never rewrites the stored history


def test_tools_run_in_parallel_and_results_keep_source_order():
    log = []
    calls = [
        faux.tool_call("echo", {"text": "slow"}, id="a"),
        faux.tool_call("echo", {"text": "fast"}, id="b"),
    ]
    faux.set_responses([calls, "both done"])
    slow_then_fast = echo_tool(log)

    async def execute(call_id, params, signal, on_update):
        await asyncio.sleep(0.2 if params["text"] == "slow" else 0.0)
        return await slow_then_fast.execute(call_id, params, signal, on_update)

    agent, events = recording_agent(tools=[make_tool("echo", execute, slow_then_fast.parameters)])
    run(agent.prompt("p"))
    assert log.index(("start", "fast")) < log.index(("end", "slow"))  # they overlapped
    assert tool_texts(agent.messages) == ["echo: slow", "echo: fast"]
    ends = [e.tool_call_id for e in events if e.type == "tool_execution_end"]
    assert ends == ["a", "b"]


def test_sequential_mode_runs_one_tool_at_a_time():
    log = []
    faux.set_responses([[faux.tool_call("echo", {"text": "1"}), faux.tool_call("echo", {"text": "2"})], "ok"])
    agent, _ = recording_agent(tools=[echo_tool(log, delay=0.05)], tool_execution="sequential")
    run(agent.prompt("p"))
    assert log == [("start", "1"), ("end", "1"), ("start", "2"), ("end", "2")]


def test_unknown_tools_bad_arguments_and_failures_become_error_results_the_model_reads():
    async def broken(call_id, params, signal, on_update):
        raise RuntimeError("disk full")

    faux.set_responses([
        [faux.tool_call("nope", {}), faux.tool_call("echo", {"wrong": 1}), faux.tool_call("broken", {})],
        "I see the errors.",
    ])  # fmt: skip
    agent, _ = recording_agent(tools=[echo_tool(), make_tool("broken", broken)])
    run(agent.prompt("p"))
    results = [m for m in agent.messages if m.role == "toolResult"]
    assert all(m.is_error for m in results)
    assert results[0].content[0].text == "Tool nope not found"
    assert results[1].content[0].text == (
        "Validation failed for tool \"echo\":\n  - text: must have required property 'text'\n\n"
        'Received arguments:\n{\n  "wrong": 1\n}'
    )
    assert results[2].content[0].text == "disk full"
    assert agent.messages[-1].content[0].text == "I see the errors."


def test_arguments_are_coerced_like_ajv():
    seen = {}

    async def count(call_id, params, signal, on_update):
        seen.update(params)
        return "ok"

    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}}}
    faux.set_responses([[faux.tool_call("count", {"n": "3", "flag": "true"})], "done"])
    agent, _ = recording_agent(tools=[make_tool("count", count, schema)])
    run(agent.prompt("p"))
    assert seen == {"n": 3, "flag": True}


def test_hooks_can_block_a_call_and_rewrite_a_result():
    def before(ctx, signal):
        if ctx.args["text"] == "rm -rf":
            return BeforeToolCallResult(block=True, reason="Not on my watch")
        return None

    def after(ctx, signal):
        return AfterToolCallResult(content=[TextContent(text=ctx.result.content[0].text.upper())])

    faux.set_responses([[faux.tool_call("echo", {"text": "rm -rf"}), faux.tool_call("echo", {"text": "ok"})], "fine"])
    agent, _ = recording_agent(tools=[echo_tool()], before_tool_call=before, after_tool_call=after)
    run(agent.prompt("p"))
    assert tool_texts(agent.messages) == ["Not on my watch", "ECHO: OK"]
    assert [m.is_error for m in agent.messages if m.role == "toolResult"] == [True, False]


def test_after_hooks_of_parallel_tools_run_in_source_order_each_before_its_end_event():
    trace = []
    calls = [faux.tool_call("echo", {"text": "slow"}, id="a"), faux.tool_call("echo", {"text": "fast"}, id="b")]
    faux.set_responses([calls, "done"])
    plain = echo_tool()

    async def execute(call_id, params, signal, on_update):
        await asyncio.sleep(0.2 if params["text"] == "slow" else 0.0)
        return await plain.execute(call_id, params, signal, on_update)

    def after(ctx, signal):
        trace.append(("after", ctx.tool_call.id))

    agent = Agent(faux.model(), tools=[make_tool("echo", execute, plain.parameters)], after_tool_call=after)
    agent.subscribe(lambda e: trace.append(("end", e.tool_call_id)) if e.type == "tool_execution_end" else None)
    run(agent.prompt("p"))
    # "fast" finished first, but its hook waits for "slow"'s: one by one, in the order the model called them
    assert trace == [("after", "a"), ("end", "a"), ("after", "b"), ("end", "b")]


def test_a_failing_before_hook_is_reported_as_its_bare_message():
    def before(ctx, signal):
        raise RuntimeError("quota exhausted")

    faux.set_responses([[faux.tool_call("echo", {"text": "x"})], "fine"])
    agent, _ = recording_agent(tools=[echo_tool()], before_tool_call=before)
    run(agent.prompt("p"))
    assert tool_texts(agent.messages) == ["quota exhausted"]


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
def test_a_failing_after_hook_ends_the_run_with_the_agents_error(mode):
    def after(ctx, signal):
        raise RuntimeError("audit log unreachable")

    faux.set_responses([[faux.tool_call("echo", {"text": "x"})], "never sent"])
    agent, events = recording_agent(tools=[echo_tool()], after_tool_call=after, tool_execution=mode)
    run(agent.prompt("p"))
    last = agent.messages[-1]
    # As Pi: no tool result for the call, no second LLM call; the run ends with an error assistant message.
    assert [m.role for m in agent.messages] == ["user", "assistant", "assistant"]
    assert (last.stop_reason, last.error_message) == ("error", "audit log unreachable")
    assert agent.state.error == "audit log unreachable"
    assert len(faux.calls) == 1
    assert events[-1].type == "agent_end" and events[-1].messages == [last]


def test_steering_skips_the_remaining_tool_calls_and_is_sent_next():
    agent, _ = recording_agent(tool_execution="sequential")

    async def first(call_id, params, signal, on_update):
        agent.steer(UserMessage(content="Stop, do something else", timestamp=1))
        return "first done"

    agent.set_tools([make_tool("first", first), echo_tool()])
    faux.set_responses([[faux.tool_call("first", {}), faux.tool_call("echo", {"text": "never"})], "Switching."])
    run(agent.prompt("p"))
    assert tool_texts(agent.messages) == ["first done", "Skipped due to queued user message."]
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]
    assert faux.calls[1].messages[-1].content == "Stop, do something else"


def test_follow_ups_are_sent_when_the_agent_would_stop():
    faux.set_responses(["first answer", "second answer"])
    agent, _ = recording_agent()
    agent.follow_up(UserMessage(content="and another thing", timestamp=1))
    run(agent.prompt("p"))
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[-1].content[0].text == "second answer" and not agent.has_queued_messages()


def test_abort_keeps_the_partial_reply_and_the_next_prompt_works():
    faux.set_responses(["word " * 500, "fresh answer"])
    agent, events = recording_agent()

    def on_event(event):
        if event.type == "message_update" and len(event.message.content[0].text) > 40:
            agent.abort()

    agent.subscribe(on_event)
    run(agent.prompt("long please"))
    reply = agent.messages[-1]
    assert reply.stop_reason == "aborted" and 40 < len(reply.content[0].text) < len("word " * 500)
    assert events[-1].type == "agent_end" and agent.state.error == "Request was aborted"
    run(agent.prompt("again"))
    assert agent.messages[-1].content[0].text == "fresh answer"
    # the aborted reply stays in the history but is not replayed to the provider
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]


def test_a_provider_error_ends_the_run_as_data():
    faux.set_responses([faux.message([], stop_reason="error", error_message="overloaded_error")])
    agent, events = recording_agent()
    run(agent.prompt("p"))
    assert agent.messages[-1].stop_reason == "error" and agent.state.error == "overloaded_error"
    assert [e.type for e in events][-2:] == ["turn_end", "agent_end"]


def test_a_failing_convert_to_llm_becomes_an_error_message_and_nothing_is_lost():
    def convert(messages):
        raise ValueError("bad converter")

    agent, events = recording_agent(convert_to_llm=convert)
    run(agent.prompt("hello"))
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert "convert_to_llm failed: ValueError: bad converter" in agent.messages[-1].error_message
    assert faux.calls == []  # the provider was never called
    assert events[-1].type == "agent_end"


def test_agent_refuses_a_second_prompt_while_running_and_continue_rules():
    faux.set_responses([lambda ctx: "slow " * 200, "ok"])
    agent, _ = recording_agent()

    async def go():
        first = asyncio.ensure_future(agent.prompt("one"))
        await asyncio.sleep(0)
        with pytest.raises(AgentBusyError, match="already processing a prompt"):
            await agent.prompt("two")
        await first

    run(go())
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        run(agent.continue_())
    agent.follow_up(UserMessage(content="more", timestamp=1))
    run(agent.continue_())
    assert agent.messages[-1].content[0].text == "ok"
    with pytest.raises(ValueError, match="No messages to continue from"):
        run(Agent(faux.model()).continue_())


def test_continue_from_queued_steering_sends_one_steer_per_call_one_at_a_time():
    faux.set_responses(["first answer", "after steer one", "after steer two"])
    agent, _ = recording_agent()
    run(agent.prompt("hello"))
    agent.steer(UserMessage(content="steer one", timestamp=1))
    agent.steer(UserMessage(content="steer two", timestamp=2))
    run(agent.continue_())

    # As Pi: the run that starts from "steer one" takes no more steering before its first call
    def text(m):
        return m.content if isinstance(m.content, str) else m.content[0].text

    users = [[text(m) for m in call.messages if m.role == "user"] for call in faux.calls[1:]]
    assert users == [["hello", "steer one"], ["hello", "steer one", "steer two"]]


def test_a_broken_listener_does_not_kill_the_run(caplog):
    faux.set_responses(["fine"])
    agent, _ = recording_agent()

    def broken(event):
        raise RuntimeError("display bug")

    unsubscribe = agent.subscribe(broken)
    run(agent.prompt("p"))
    assert agent.messages[-1].content[0].text == "fine" and "display bug" in caplog.text
    unsubscribe()


def test_max_turns_stops_a_model_that_keeps_calling_tools():
    faux.set_responses([lambda ctx: [faux.tool_call("echo", {"text": "again"})]] * 10)
    agent, events = recording_agent(tools=[echo_tool()], max_turns=3)
    run(agent.prompt("loop forever"))
    assert len(faux.calls) == 3 and faux.provider.pending_count == 7
    assert [m.role for m in agent.messages].count("toolResult") == 3  # the last calls are still answered
    assert events[-1].type == "agent_end" and not agent.is_streaming


def test_a_run_stopped_by_max_turns_says_why():
    faux.set_responses([lambda ctx: [faux.tool_call("echo", {"text": f"call {len(faux.calls)}"})]] * 5)
    agent, events = recording_agent(tools=[echo_tool()], max_turns=2)
    run(agent.prompt("loop"))
    stop = events[-1].stop
    assert stop.reason == "max_turns" and stop.details == {"turns": 2, "maxTurns": 2}
    assert stop.message == "Stopped after 2 turns (max_turns=2) before the model gave an answer."
    assert agent.state.stop == stop and agent.state.error is None
    # the next run starts clean
    faux.set_responses(["an answer"])
    run(agent.prompt("just answer"))
    assert events[-1].stop is None and agent.state.stop is None


def test_an_answer_on_the_last_allowed_turn_is_not_a_stop():
    faux.set_responses([[faux.tool_call("echo", {"text": "x"})], "the answer"])
    agent, events = recording_agent(tools=[echo_tool()], max_turns=2)
    run(agent.prompt("p"))
    assert agent.messages[-1].content[0].text == "the answer" and events[-1].stop is None


def test_errors_and_aborts_are_not_stops():
    faux.set_responses([faux.message([], stop_reason="error", error_message="boom")])
    agent, events = recording_agent(max_turns=1)
    run(agent.prompt("p"))
    assert events[-1].type == "agent_end" and events[-1].stop is None and agent.state.error == "boom"


def test_transform_context_gets_the_runs_abort_signal_when_it_takes_one():
    seen = []

    def with_signal(messages, signal):  # Pi's transformContext(messages, signal)
        seen.append(signal)
        return messages

    faux.set_responses(["ok", "ok"])
    run(Agent(faux.model(), transform_context=with_signal).prompt("hi"))
    assert len(seen) == 1 and seen[0] is not None and not seen[0].aborted
    run(Agent(faux.model(), transform_context=lambda messages: messages).prompt("hi"))  # one argument: as before
