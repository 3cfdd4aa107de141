"""The exercises of lessons 00–03, as a learner meets them: the same structure as lessons 04 on
(``tests/test_lesson_exercises.py``: one goal, 2–3 exercises whose learner cell holds ``...`` and says "not answered
yet", the hint and the solution folded, a hidden solution cell running exactly the solution shown), and checkers
that refuse a typical wrong answer saying what is wrong."""

from __future__ import annotations

from typing import Literal

import pytest

from pi_notebook.agent_core import register_message_type
from pi_notebook.ai import PiModel, TextContent, ToolResultMessage, UserMessage
from pi_notebook.coding_agent import BashExecutionMessage
from pi_notebook.lessons import WrongAnswer, lesson00, lesson01, lesson02, lesson03
from pi_notebook.notebook.inspector import inspect
from tests.test_lesson_exercises import test_each_lesson_states_one_goal_and_ends_with_checked_exercises as shape


@pytest.mark.parametrize("number", ["00", "01", "02", "03"])
def test_each_lesson_states_one_goal_and_ends_with_checked_exercises(number):
    shape(number)


def _refused(check, *args) -> str:
    with pytest.raises(WrongAnswer) as caught:
        check(*args)
    return str(caught.value)


def test_the_checkers_say_what_is_wrong(capsys):
    swapped = dict(zip(lesson00.SITUATIONS, ["%bash!", "%bash", "%%agent"], strict=True))
    assert "whereas %bash! shows and stores the command but never sends it" in _refused(lesson00.check_magics, swapped)
    history = [BashExecutionMessage(command="ls", output="a", exit_code=0, timestamp=1), UserMessage(content="hi")]
    assert "is not it: leaving out your cells" in _refused(lesson00.check_sent_count, 3, inspect(history))

    call = lesson01.GREP_CALL.content[1]
    wrong_id = ToolResultMessage(tool_call_id="call_1", tool_name="grep", content=[TextContent(text="x")])
    assert "cannot tell which call this answers" in _refused(lesson01.check_tool_result, wrong_id)
    no_blocks = ToolResultMessage(tool_call_id=call.id, tool_name="grep", content=[])
    assert "not the tool's output" in _refused(lesson01.check_tool_result, no_blocks)
    assert "construction 3 is accepted" in _refused(lesson01.check_refused, {2, 3})
    acts_on_error = {"A": "run the tools", "B": "end the run", "C": "run the tools", "D": "end the run"}
    assert "reply C (stop_reason='error')" in _refused(lesson01.check_next_step, acts_on_error)

    def codes_only(text):  # forgets that a command which succeeded says nothing of its code
        return int(text.rsplit(" ", 1)[1]) if "exited with code" in text else None

    assert "for `ls demo` it returned None; the command's exit_code field is 0" in _refused(
        lesson02.check_exit_code_reader, codes_only
    )
    assert "the LLM never gets a bashExecution" in _refused(lesson02.check_sent_roles, ["user", "bashExecution"])
    assert "the model gets 3" in _refused(lesson02.check_sent_roles, ["user", "user", "user", "assistant"])

    class Unsent(PiModel):
        role: Literal["reviewNote"] = "reviewNote"
        file: str
        line: int
        text: str
        timestamp: int = 0

    register_message_type(Unsent, replace=True)
    assert "no converter: it is UI-only" in _refused(lesson03.check_review_role, Unsent)
    assert "row 2 is not sent: cursorMove is registered without a converter" in _refused(
        lesson03.check_sent_rows, {0, 1, 2}
    )
    for check in (lesson00.check_magics, lesson01.check_refused, lesson02.check_sent_roles, lesson03.check_sent_rows):
        check(...)
    assert capsys.readouterr().out.count("not answered yet") == 4
