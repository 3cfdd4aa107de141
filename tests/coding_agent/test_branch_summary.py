"""Branch summaries: Pi's model-written summary, and the digest written without a model."""

import asyncio

import pytest

from pi_notebook.agent import BashExecutionMessage
from pi_notebook.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, faux
from pi_notebook.coding_agent.branch_summary import (
    BRANCH_SUMMARY_PREAMBLE,
    BRANCH_SUMMARY_PROMPT,
    BranchSummaryError,
    describe_branch,
    summarize_branch,
)

pytestmark = pytest.mark.usefixtures("fresh_faux")


def branch():
    call = ToolCall(id="c1", name="edit", arguments={"path": "app.py", "oldText": "a", "newText": "b"})
    return [
        UserMessage(content="Rename a to b in app.py", timestamp=1),
        AssistantMessage(content=[call], api="a", provider="p", model="m", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="edit", content=[TextContent(text="Successfully replaced")]),
        BashExecutionMessage(command="pytest", output="1 failed", exit_code=1),
        AssistantMessage(content=[TextContent(text="Done, but a test fails.")], api="a", provider="p", model="m"),
    ]


def test_a_model_summary_follows_pis_prompt_and_lists_the_files():
    faux.set_responses(["## Goal\nRename a variable."])
    result = asyncio.run(summarize_branch(branch(), faux.model()))
    assert (
        result.summary
        == BRANCH_SUMMARY_PREAMBLE + "## Goal\nRename a variable.\n\n<modified-files>\napp.py\n</modified-files>"
    )
    assert result.details == {"readFiles": [], "modifiedFiles": ["app.py"]}
    call = faux.calls[-1]
    prompt = call.messages[0].content[0].text
    assert call.system_prompt.startswith("You are a context summarization assistant.")
    assert prompt.startswith("<conversation>\n[User]: Rename a to b in app.py") and prompt.endswith(
        BRANCH_SUMMARY_PROMPT
    )
    assert "[Tool result]" not in prompt  # tool results are left out: the call says what ran
    assert "Ran `pytest`" in prompt


def test_a_failing_model_raises_a_typed_error():
    faux.set_responses([faux.message([], stop_reason="error", error_message="overloaded")])
    with pytest.raises(BranchSummaryError, match="Branch summarization failed: overloaded"):
        asyncio.run(summarize_branch(branch(), faux.model()))


def test_the_summary_without_a_model_is_deterministic_and_readable():
    result = describe_branch(branch())
    assert result.summary.startswith(BRANCH_SUMMARY_PREAMBLE)
    assert "- The user asked: Rename a to b in app.py" in result.summary
    assert '- The assistant called edit({"path": "app.py"' in result.summary
    assert "- The user ran `pytest` (exit code 1)" in result.summary
    assert "- The assistant answered: Done, but a test fails." in result.summary
    assert result.summary == describe_branch(branch()).summary
    assert describe_branch([]).summary.endswith("No content to summarize")
