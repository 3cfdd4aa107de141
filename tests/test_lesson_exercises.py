"""The exercises of lessons 04–10, as a learner meets them.

In the notebooks: every exercise has a learner cell still holding ``...`` whose saved output says "not answered
yet", a hint and a solution folded in ``<details>``, and a hidden cell tagged ``solution`` that runs exactly the
solution shown (nbval runs it; its saved output is the checker's ✓). In the checkers: a typical wrong answer is
refused with a message that says what is wrong, and the right one is accepted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pi_notebook.agent_core import convert_to_llm
from pi_notebook.ai import UserMessage
from pi_notebook.lessons import WrongAnswer, lesson04, lesson05, lesson06, lesson07, lesson08, lesson09, lesson10

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = ["04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14"]


def _cells(number: str) -> list[dict]:
    (path,) = NOTEBOOKS.glob(f"{number}-*.ipynb")
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def _printed(cell: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o["output_type"] == "stream")


@pytest.mark.parametrize("number", LESSONS)
def test_each_lesson_states_one_goal_and_ends_with_checked_exercises(number):
    cells = _cells(number)
    assert _text(cells[0]).count("**Goal:**") == 1
    solutions = [i for i, c in enumerate(cells) if "solution" in c["metadata"].get("tags", [])]
    assert 2 <= len(solutions) <= 3
    for i in solutions:
        solution, folded, learner = cells[i], _text(cells[i - 1]), cells[i - 2]
        assert solution["metadata"]["jupyter"]["source_hidden"] is True
        assert _printed(solution).startswith("✓ "), _printed(solution)
        assert "<details><summary>Hint</summary>" in folded
        shown = re.search(r"<details><summary>Solution</summary>\s*```python\n(.*?)\n```", folded, re.S)
        assert shown and shown.group(1).strip() == _text(solution).strip()
        assert re.search(r"^answer = \.\.\.|^answer = \[\.\.\.|^answer = \{$|: \.\.\.,", _text(learner), re.M)
        assert "not answered yet" in _printed(learner)
        checker = re.search(r"(check_\w+)\(answer", _text(solution)).group(1)
        assert f"{checker}(answer" in _text(learner)


def _refused(check, *args) -> str:
    with pytest.raises(WrongAnswer) as caught:
        check(*args)
    return str(caught.value)


def test_the_checkers_say_what_is_wrong(capsys):
    assert "line 2 is '```'" in _refused(lesson04.check_bash_text, "Ran `make lint`\n```\n\n```")
    assert "row 2 is sent: display=False" in _refused(lesson04.check_dropped, {1, 2, 4})
    assert "must give None" in _refused(lesson04.check_converter, lambda m: UserMessage(content="x", timestamp=0))

    def by_exchange(n):
        return lambda ms: ms[[i for i, m in enumerate(ms) if m.role in ("user", "bashExecution")][-n] :]

    assert "[3, 4] are dropped" in _refused(lesson05.check_kept, [3, 4, 5, 6], by_exchange(2))
    assert "changed the list it was given" in _refused(lesson05.check_transform, lambda ms: ms.pop(2) and ms)
    assert "leaves the translation to stage 2" in _refused(lesson05.check_transform, convert_to_llm)
    assert "not convert_to_llm, transform_context" in _refused(
        lesson05.check_stage, dict(zip(lesson05.CHANGES, ["convert_to_llm", "convert_to_llm", "neither"], strict=True))
    )
    assert "message 5 is 'ui', not 'both'" in _refused(
        lesson06.check_levels, ["both", "ui", "llm", "both", "both", "both"]
    )
    assert "only row 2 should go" in _refused(
        lesson06.check_no_secrets, lambda ms: [m for m in ms if "TOKEN" not in str(m)]
    )
    assert "A comes from step [5]" in _refused(lesson07.check_steps, {"A": 4, "B": 2, "C": 6, "D": 1})
    assert "under 'input', not 'instructions'" in _refused(
        lesson07.check_system_keys,
        {"anthropic-messages": "system", "openai-responses": "instructions", "openai-completions": "messages",
         "google-generative-ai": "config"},
    )  # fmt: skip
    assert "['c3', 'd4'] are on the branch that was left" in _refused(
        lesson08.check_branch, ["a1", "b2", "c3", "d4", "e5", "f6", "g7"]
    )
    assert "the custom entry" in _refused(lesson08.check_reload, ["compactionSummary", "user", "assistant", "custom"])
    assert "12.5 requested" in _refused(
        lesson09.check_refund_converter,
        lambda m: None if m.withdrawn else UserMessage(
            content=f"[refund for order {m.order_id}] {m.amount_cents / 100} requested: {m.reason}",
            timestamp=m.timestamp,
        ),
    )  # fmt: skip
    assert "no converter is registered for role 'zzz'" in _refused(
        lesson09.check_dropped, set(), [UserMessage(content="a", timestamp=0), {"role": "zzz", "timestamp": 0}]
    )
    assert "no image block reaches it" in _refused(lesson10.check_blocks, ["text", "image"])
    assert "cell 2 ('%agent_private') is recorded" in _refused(
        lesson10.check_recorded, [True, False, False, False, True]
    )

    lesson08.check_branch(["a1", "b2", "e5", "f6", "g7"])
    lesson05.check_stage(dict.fromkeys(lesson05.CHANGES, ...))
    printed = capsys.readouterr().out
    assert "✓ Exercise 1 (follow the parents)" in printed
    assert "Exercise 3 (which stage changes): not answered yet" in printed
