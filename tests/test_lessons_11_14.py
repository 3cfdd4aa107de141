"""The checkers of lessons 11-14 (tools, streaming and steering, errors/thinking/images, usage and the system
prompt): each refuses a typical wrong answer saying what is wrong, and accepts the right one. What they check is
computed by running the project's own code (an Agent on a scripted model, build_request), not written down."""

from __future__ import annotations

import pytest

from pi_notebook.agent_core import AgentTool, AgentToolResult, convert_to_llm
from pi_notebook.lessons import WrongAnswer, lesson11, lesson12, lesson13, lesson14


def _refused(check, answer) -> str:
    with pytest.raises(WrongAnswer) as caught:
        check(answer)
    return str(caught.value)


def _price_tool(details_in_content: bool = False) -> AgentTool:
    def execute(tool_call_id, params, signal, on_update):
        cents = lesson11.PRICES[params["item"]]  # a KeyError for kiwi: the loop makes it an error result
        text = f"{params['item']} costs {cents} cents"
        return AgentToolResult.text(
            text + (' {"cents": 95}' if details_in_content else ""), {"item": "plum", "cents": cents}
        )

    schema = {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}
    return AgentTool(name="unit_price", description="A price.", parameters=schema, execute=execute)


def test_lesson11_checkers(capsys):
    lesson11.check_price_tool(_price_tool())
    assert "the model reads 'plum costs 95 cents {\"cents\": 95}'" in _refused(
        lesson11.check_price_tool, _price_tool(details_in_content=True)
    )
    assert lesson11.answered_by() == ["tool", "raised", "schema", "unknown", "raised"]
    assert "call 4 ('check_stock', {'item': 42}): 'raised', not 'schema'" in _refused(
        lesson11.check_who_answered, ["tool", "raised", "schema", "unknown", "schema"]
    )
    seen = dict.fromkeys(lesson11.PARTS, True)
    assert "label: the model never reads it" in _refused(lesson11.check_seen_by_model, seen)
    assert "✓ Exercise 1" in capsys.readouterr().out


def test_lesson12_checkers():
    right = ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end",
             "turn_end", "agent_end"]  # fmt: skip
    lesson12.check_plain_run(right)
    assert "leave message_update out" in _refused(lesson12.check_plain_run, [*right[:5], "message_update", *right[5:]])
    assert "event 2 is 'message_start', not 'message_end'" in _refused(
        lesson12.check_plain_run, [*right[:2], *right[3:]]
    )
    assert "the run has 8 events" in _refused(lesson12.check_plain_run, right[:-1])
    assert "parallel: the skipped calls are []" in _refused(
        lesson12.check_skipped, {"sequential": ["b.log", "c.log"], "parallel": ["b.log", "c.log"]}
    )
    assert "all: the run makes 2 model calls, not 3" in _refused(
        lesson12.check_follow_up_calls, {"one-at-a-time": 3, "all": 3}
    )


def test_lesson13_checkers_and_its_wire_server():
    lesson13.check_sent({0, 2, 3, 4, 6})
    assert "message 5, assistant (aborted), is not sent" in _refused(lesson13.check_sent, {0, 2, 3, 4, 5, 6})
    assert "anthropic/claude-haiku-4-5: the thought is sent as 'text', not 'thinking'" in _refused(
        lesson13.check_thinking_fate, dict.fromkeys(lesson13.TARGETS, "thinking")
    )
    assert "convert_to_llm gives 4" in _refused(
        lesson13.check_block_images, lambda ms: [m for m in ms if m.role != "bashExecution"]
    )
    assert "message 0 is" in _refused(lesson13.check_block_images, convert_to_llm)


def test_lesson14_checkers():
    lesson14.check_cost((2_000 * 1 + 500 * 5 + 10_000 * 0.1) / 1e6)
    assert "prices the cached tokens as input" in _refused(lesson14.check_cost, (12_000 * 1 + 500 * 5) / 1e6)
    assert "short: the marks are on ['message 2 (user)', 'system']" in _refused(
        lesson14.check_cache_marks, {"short": {"system", "tools"}, "none": set()}
    )
    assert "the session file: no" in _refused(
        lesson14.check_where,
        {"agent.messages": False, "agent.state.system_prompt": True, "the session file": True,
         "each request body": True},
    )  # fmt: skip
