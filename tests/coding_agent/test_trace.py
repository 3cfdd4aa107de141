"""trace_boundary: a row per AgentMessage saying what reached the LLM, aligned with prepare_llm_messages."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest

from pi_notebook.agent import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContextPipelineError,
    CustomMessage,
    prepare_llm_messages,
    register_message_type,
    to_pi_json,
)
from pi_notebook.ai import PiModel, TextContent, ToolResultMessage, Usage, UserMessage, faux
from pi_notebook.coding_agent.compaction import CompactionSettings, Compactor, estimate_tokens
from pi_notebook.coding_agent.trace import ERROR_ASSISTANT_REASON, atrace_boundary, trace_boundary

pytestmark = pytest.mark.usefixtures("fresh_faux")


class TraceNote(PiModel):
    """A UI-only role: registered without a converter."""

    role: Literal["traceNote"] = "traceNote"
    text: str


register_message_type(TraceNote, replace=True)


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def said(text, **fields):
    return faux.message(text, **fields)


def rows_by_status(trace):
    return [(r.index, r.role, r.status) for r in trace.rows]


def history():
    return [
        user("hello"),
        said("hi there"),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="file body")]),
        BashExecutionMessage(command="ls", output="a.txt", exit_code=0),
        BashExecutionMessage(command="cat .env", output="TOKEN=x", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="ext", content="a hidden note", display=False),
        BranchSummaryMessage(summary="we tried X", from_id="abc"),
        CompactionSummaryMessage(summary="earlier work", tokens_before=5000),
        {"role": "mystery", "payload": 1},
        TraceNote(text="for the eyes only"),
        said("", stop_reason="error", error_message="503"),
        said("partial", stop_reason="aborted"),
    ]


def test_every_role_gets_a_row_with_its_status():
    messages = history()
    trace = trace_boundary(messages)
    assert rows_by_status(trace) == [
        (0, "user", "passed"),
        (1, "assistant", "passed"),
        (2, "toolResult", "passed"),
        (3, "bashExecution", "translated"),
        (4, "bashExecution", "dropped"),
        (5, "custom", "translated"),
        (6, "branchSummary", "translated"),
        (7, "compactionSummary", "translated"),
        (8, "mystery", "dropped"),
        (9, "traceNote", "dropped"),
        (10, "assistant", "dropped"),
        (11, "assistant", "dropped"),
    ]
    rows = trace.rows
    assert rows[3].produced_text == "Ran `ls`\n```\na.txt\n```" and rows[3].reason == "bashExecution → a user message"
    assert "excludeFromContext" in rows[4].reason and rows[4].llm == [] and rows[4].tokens == 0
    assert "display=False" in rows[5].reason and rows[5].produced_text == "a hidden note"
    assert rows[6].produced_text.startswith(BRANCH_SUMMARY_PREFIX + "we tried X")
    assert rows[7].produced_text.startswith(COMPACTION_SUMMARY_PREFIX + "earlier work")
    assert "unknown role 'mystery'" in rows[8].reason and rows[8].agent == {"role": "mystery", "payload": 1}
    assert rows[9].reason == "role 'traceNote' has no converter: UI only"
    assert rows[10].reason == rows[11].reason == ERROR_ASSISTANT_REASON
    assert rows[0].produced_text == "" and rows[0].llm == [to_pi_json(messages[0])] == [rows[0].agent]


def test_failed_assistants_are_in_llm_messages_but_not_in_provider_messages():
    messages = history()
    trace = trace_boundary(messages)
    expected = prepare_llm_messages(messages)
    assert [to_pi_json(m) for m in trace.llm_messages] == [to_pi_json(m) for m in expected]
    assert [m.stop_reason for m in trace.llm_messages if m.role == "assistant"] == ["stop", "error", "aborted"]
    assert [m for m in trace.provider_messages if m.role == "assistant"] == [trace.llm_messages[1]]
    sent = [m for row in trace.rows for m in row.llm]
    assert sent == [to_pi_json(m) for m in trace.provider_messages] and trace.aligned


def test_total_tokens_estimate_what_is_sent():
    trace = trace_boundary(history())
    assert trace.total_tokens == sum(estimate_tokens(m) for m in trace.provider_messages) > 0
    assert trace.rows[3].tokens == estimate_tokens(trace.rows[3].llm[0])
    assert all(r.tokens == 0 for r in trace.rows if r.status == "dropped")


def test_to_json_rows_have_the_inspector_keys():
    data = trace_boundary(history()).to_json()
    assert set(data) == {"rows", "llm_messages", "provider_messages", "total_tokens", "aligned", "error"}
    keys = {"index", "role", "status", "reason", "tokens", "agent", "llm", "produced_text"}
    assert all(set(row) == keys for row in data["rows"])


def test_a_compacting_transform_gives_summarised_and_injected_rows():
    messages = [user("A" * 40), said("B" * 40), user("C" * 40), said("D" * 40), user("now")]
    summary = CompactionSummaryMessage(summary="the gist", tokens_before=999)

    def compact(ms):
        return [summary, *ms[2:]]

    trace = trace_boundary(messages, compact)
    assert rows_by_status(trace) == [
        (0, "user", "summarised"),
        (1, "assistant", "summarised"),
        (None, "compactionSummary", "injected"),
        (2, "user", "passed"),
        (3, "assistant", "passed"),
        (4, "user", "passed"),
    ]
    injected = trace.rows[2]
    assert injected.produced_text == COMPACTION_SUMMARY_PREFIX + "the gist\n</summary>" and injected.tokens > 0
    assert "replaces 2" in injected.reason and trace.rows[0].reason == "replaced by the compaction summary"
    assert trace.rows[0].tokens == 0 and trace.rows[0].llm == []
    assert trace.total_tokens == sum(estimate_tokens(m) for m in prepare_llm_messages(messages, compact))


def test_the_real_compactor_summarises_through_the_faux_model():
    model = faux.model(context_window=2000)
    messages = [user("A" * 2000), said("B" * 2000), user("C" * 2000),
                said("D" * 400, usage=Usage(input=1500, output=100, total_tokens=1600)), user("next")]  # fmt: skip
    faux.set_responses(["THE SUMMARY"])
    compactor = Compactor(model, CompactionSettings(reserve_tokens=500, keep_recent_tokens=150))
    trace = trace_boundary(messages, compactor)  # async transform, no loop running: asyncio.run
    assert [r.status for r in trace.rows] == ["summarised", "summarised", "injected", "passed", "passed", "passed"]
    assert trace.rows[2].produced_text == COMPACTION_SUMMARY_PREFIX + "THE SUMMARY\n</summary>"


def test_a_transform_that_removes_messages_marks_them_dropped():
    messages = [user("one"), said("two"), BashExecutionMessage(command="ls"), user("three")]
    trace = trace_boundary(messages, lambda ms: [m for m in ms if m.role != "bashExecution"])
    assert rows_by_status(trace)[2] == (2, "bashExecution", "dropped")
    assert trace.rows[2].reason == "removed by transform_context" and trace.total_tokens > 0


def test_a_transform_that_adds_or_changes_messages():
    messages = [user("one"), said("two" * 50)]

    def prune(ms):
        shortened = ms[1].model_copy(update={"content": [TextContent(text="two…")]})
        return [ms[0], shortened, user("reminder")]

    trace = trace_boundary(messages, prune)
    assert rows_by_status(trace) == [
        (0, "user", "passed"),
        (1, "assistant", "dropped"),
        (None, "assistant", "injected"),
        (None, "user", "injected"),
    ]
    assert trace.rows[1].reason == "replaced by a changed copy from transform_context"
    assert trace.rows[2].reason == "changed copy of message 1 from transform_context"
    assert trace.rows[3].reason == "added by transform_context"


def test_identity_falls_back_to_equal_pi_json_and_keeps_duplicates_in_order():
    same = {"role": "user", "content": [{"type": "text", "text": "again"}], "timestamp": 1}
    messages = [same, dict(same), {"role": "user", "content": "last", "timestamp": 2}]
    # Copies defeat identity: equal Pi JSON matches them, equal duplicates in order.
    trace = trace_boundary(messages, lambda ms: [as_json_copy(m) for m in (ms[0], ms[2])])
    assert rows_by_status(trace) == [(0, "user", "passed"), (1, "user", "dropped"), (2, "user", "passed")]


def as_json_copy(message):
    return type(message).model_validate(to_pi_json(message))


def test_async_transform_and_convert_with_atrace_and_inside_a_running_loop():
    messages = [user("a"), said("b"), BashExecutionMessage(command="pwd", output="/")]

    async def transform(ms):
        await asyncio.sleep(0)
        return ms[1:]

    async def main():
        awaited = await atrace_boundary(messages, transform)
        threaded = trace_boundary(messages, transform)  # a loop is running here: a worker thread runs it
        return awaited, threaded

    awaited, threaded = asyncio.run(main())
    assert (
        rows_by_status(awaited)
        == rows_by_status(threaded)
        == [
            (0, "user", "dropped"),
            (1, "assistant", "passed"),
            (2, "bashExecution", "translated"),
        ]
    )


def test_a_failing_stage_raises_a_pipeline_error_naming_it():
    def broken(ms):
        raise ValueError("nope")

    with pytest.raises(ContextPipelineError) as err:
        trace_boundary([user("x")], broken)
    assert err.value.stage == "transform_context"
    with pytest.raises(ContextPipelineError) as err:
        trace_boundary([user("x")], lambda ms: "not a list")
    assert err.value.stage == "transform_context"


def test_a_merging_converter_is_reported_as_not_aligned():
    def merge(ms):
        texts = [b.text for m in ms for b in m.content if m.role == "user"]
        return [user("\n".join(texts))] if texts else []

    trace = trace_boundary([user("a"), user("b")], convert=merge)
    assert not trace.aligned and len(trace.llm_messages) == 1
    assert trace.llm_messages[0].content[0].text == "a\nb"
