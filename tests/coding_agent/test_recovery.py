"""After a run, as Pi: compact and retry once on a context overflow; back off and retry transient errors."""

import asyncio

import pytest

from pi_notebook.agent import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX
from pi_notebook.agent_core.agent import Agent
from pi_notebook.agent_core.tool import AgentTool
from pi_notebook.ai import RetrySettings, TextContent, Usage, UserMessage, faux
from pi_notebook.coding_agent.compaction import CompactionSettings, Compactor
from pi_notebook.coding_agent.recovery import OVERFLOW_RECOVERY_FAILED, run_with_recovery

# a 2000-token window; compaction only when forced (the threshold, 1900, is never reached here)
SETTINGS = CompactionSettings(reserve_tokens=100, keep_recent_tokens=150)
OVERFLOW = "prompt is too long: 2100 tokens > 2000 maximum"


pytestmark = pytest.mark.usefixtures("fresh_faux")


def run(coro):
    return asyncio.run(coro)


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def failure(text):
    return faux.message([], stop_reason="error", error_message=text)


def texts(call):
    return [m.content[0].text for m in call.messages]


class Recorder:
    """What a caller sees: every message that ended (its session file) and every backoff delay."""

    def __init__(self, agent=None):
        self.ended, self.delays = [], []
        if agent is not None:
            agent.subscribe(lambda e: e.type == "message_end" and self.ended.append(e.message))

    async def sleep(self, seconds):
        self.delays.append(seconds)


def overflowing_agent():
    """An agent whose history (about 1200 estimated tokens) the model refuses, and its compactor."""
    model = faux.model(context_window=2000)
    history = [user("A" * 2000), faux.message("B" * 2000), user("C" * 400), faux.message("D" * 400)]
    compactor = Compactor(model, SETTINGS)
    return Agent(model, messages=history, transform_context=compactor), compactor, history


def test_an_overflow_is_compacted_and_continued_and_the_error_leaves_the_agent_state():
    agent, compactor, history = overflowing_agent()
    seen = Recorder(agent)
    faux.set_responses([failure(OVERFLOW), "THE SUMMARY", "recovered"])
    run(run_with_recovery(agent, lambda: agent.prompt("go"), compactor=compactor, sleep=seen.sleep))
    first, summariser, retried = faux.calls
    assert texts(first) == ["A" * 2000, "B" * 2000, "C" * 400, "D" * 400, "go"]
    assert texts(summariser)[0].startswith(f"<conversation>\n[User]: {'A' * 2000}\n\n[Assistant]: BBB")
    summary = COMPACTION_SUMMARY_PREFIX + "THE SUMMARY" + COMPACTION_SUMMARY_SUFFIX
    assert texts(retried) == [summary, "C" * 400, "D" * 400, "go"]
    # the error is gone from the agent's state, but the caller saw it end (it stays in the session file)
    assert agent.messages[:4] == history and [m.role for m in agent.messages[4:]] == ["user", "assistant"]
    assert agent.messages[-1].content[0].text == "recovered" and agent.state.error is None
    assert [m.error_message for m in seen.ended if m.role == "assistant"] == [OVERFLOW, None]
    assert seen.delays == []


def test_a_second_overflow_gives_pis_failure_text_and_appends_nothing_more():
    agent, compactor, _ = overflowing_agent()
    seen = Recorder(agent)
    faux.set_responses([failure(OVERFLOW), "THE SUMMARY", failure(OVERFLOW)])
    run(run_with_recovery(agent, lambda: agent.prompt("go"), compactor=compactor))
    assert len(faux.calls) == 3 and agent.state.error == OVERFLOW_RECOVERY_FAILED
    assert [m.role for m in agent.messages] == ["user", "assistant"] * 2 + ["user", "assistant"]
    assert agent.messages[-1].error_message == OVERFLOW  # the second error stays; the first was dropped
    assert [m.error_message for m in seen.ended if m.role == "assistant"] == [OVERFLOW, OVERFLOW]


def test_a_failed_compaction_during_recovery_keeps_the_history():
    agent, compactor, history = overflowing_agent()
    faux.set_responses([failure(OVERFLOW), failure("invalid request")])
    run(run_with_recovery(agent, lambda: agent.prompt("go"), compactor=compactor))
    assert agent.messages[:4] == history and agent.messages[4].content[0].text == "go"
    assert agent.messages[5].error_message == (
        "transform_context failed: CompactionError: Summarization failed: invalid request"
    )
    assert agent.state.error == agent.messages[5].error_message and len(agent.messages) == 6


def test_an_overflow_without_a_compactor_or_from_another_model_is_left_alone():
    agent, _, _ = overflowing_agent()
    faux.set_responses([failure(OVERFLOW)])
    seen = Recorder()
    run(run_with_recovery(agent, lambda: agent.prompt("go"), sleep=seen.sleep))  # not retryable either
    assert agent.messages[-1].error_message == OVERFLOW and len(faux.calls) == 1 and seen.delays == []
    compactor = Compactor(agent.state.model, SETTINGS)
    agent.set_model(faux.model("faux-2", context_window=2000))

    async def nothing():
        pass

    run(run_with_recovery(agent, nothing, compactor=compactor))
    assert agent.messages[-1].error_message == OVERFLOW and len(faux.calls) == 1


def test_a_silent_overflow_keeps_the_answer_and_compacts_before_the_next_call():
    agent, compactor, _ = overflowing_agent()
    too_big = faux.message("truncated answer", usage=Usage(input=2500, output=10, total_tokens=2510))
    faux.set_responses([too_big, "THE SUMMARY", "next answer"])
    run(run_with_recovery(agent, lambda: agent.prompt("go"), compactor=compactor))
    assert agent.messages[-1].content[0].text == "truncated answer" and len(faux.calls) == 1
    run(agent.prompt("and now?"))
    summary = COMPACTION_SUMMARY_PREFIX + "THE SUMMARY" + COMPACTION_SUMMARY_SUFFIX
    assert len(faux.calls) == 3 and texts(faux.calls[2])[0] == summary


def retrying_agent():
    return Agent(faux.model(), system_prompt="You are a test.")


def test_overloads_are_retried_with_exponential_backoff_until_a_success():
    agent = retrying_agent()
    seen = Recorder(agent)
    faux.set_responses([failure("overloaded_error"), failure("overloaded_error"), "finally"])
    run(run_with_recovery(agent, lambda: agent.prompt("hi"), sleep=seen.sleep))
    assert seen.delays == [2.0, 4.0] and len(faux.calls) == 3
    assert [m.role for m in agent.messages] == ["user", "assistant"] and agent.state.error is None
    assert agent.messages[-1].content[0].text == "finally"
    assert all(texts(call) == ["hi"] for call in faux.calls)  # the failed replies were not sent back
    errors = [m.error_message for m in seen.ended if m.role == "assistant"]
    assert errors == ["overloaded_error", "overloaded_error", None]


def test_retries_stop_after_max_retries_and_the_last_error_stays():
    agent = retrying_agent()
    seen = Recorder()
    faux.set_responses([failure(f"503 service unavailable #{i}") for i in range(5)])
    run(run_with_recovery(agent, lambda: agent.prompt("hi"), sleep=seen.sleep))
    assert seen.delays == [2.0, 4.0, 8.0] and len(faux.calls) == 4
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert agent.state.error == agent.messages[-1].error_message == "503 service unavailable #3"
    settings = RetrySettings(max_retries=1, base_delay_ms=100)
    faux.set_responses([failure("rate limit"), failure("rate limit")])
    run(run_with_recovery(agent, lambda: agent.prompt("again"), retry=settings, sleep=seen.sleep))
    assert seen.delays[3:] == [0.1] and agent.messages[-1].error_message == "rate limit"


def test_errors_that_a_retry_cannot_fix_are_not_retried():
    agent = retrying_agent()
    seen = Recorder()
    faux.set_responses([failure("invalid x-api-key")])
    run(run_with_recovery(agent, lambda: agent.prompt("hi"), sleep=seen.sleep))
    assert seen.delays == [] and len(faux.calls) == 1 and agent.state.error == "invalid x-api-key"
    faux.set_responses([failure("overloaded_error")])
    off = RetrySettings(enabled=False)
    run(run_with_recovery(agent, lambda: agent.prompt("again"), retry=off, sleep=seen.sleep))
    assert seen.delays == [] and agent.messages[-1].error_message == "overloaded_error"


def test_a_retried_run_reports_its_own_stop_and_a_stopped_run_is_not_retried():
    async def echo(call_id, params, signal, on_update):
        return "ok"

    tool = AgentTool(name="echo", description="echo", parameters={"type": "object"}, execute=echo)
    agent = Agent(faux.model(), tools=[tool], max_turns=2)
    seen = Recorder()
    calls = [lambda: [faux.tool_call("echo", {"n": len(faux.calls)})]] * 3
    faux.set_responses([failure("overloaded_error"), *calls])
    run(run_with_recovery(agent, lambda: agent.prompt("hi"), sleep=seen.sleep))
    assert seen.delays == [2.0] and len(faux.calls) == 3  # one retry, then two turns of the retried run
    assert agent.state.stop.reason == "max_turns" and agent.state.error is None
    assert agent.messages[-1].role == "toolResult"  # nothing for recovery to retry
