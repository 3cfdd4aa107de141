"""convert_to_llm and bash_execution_to_text against the outputs of Pi's own code."""

import pytest

from pi_notebook.agent import bash_execution_to_text, convert_to_llm, from_pi_json, to_pi_json
from tests.pi_fixtures import case_params


@pytest.mark.parametrize("case", case_params("convert_to_llm.json"))
def test_convert_to_llm_matches_pi(case):
    messages = [from_pi_json(m) for m in case["input"]]
    assert [to_pi_json(m) for m in convert_to_llm(messages)] == case["expected"]


@pytest.mark.parametrize("case", case_params("convert_to_llm.json"))
def test_convert_to_llm_accepts_pi_json_directly(case):
    assert [to_pi_json(m) for m in convert_to_llm(case["input"])] == case["expected"]


@pytest.mark.parametrize("case", case_params("convert_to_llm.json"))
def test_every_input_message_round_trips(case):
    for raw in case["input"]:
        assert to_pi_json(from_pi_json(raw)) == raw


@pytest.mark.parametrize("case", case_params("bash_to_text.json"))
def test_bash_execution_to_text_matches_pi(case):
    assert bash_execution_to_text(from_pi_json(case["input"])) == case["expected"]
    assert bash_execution_to_text(case["input"]) == case["expected"]
