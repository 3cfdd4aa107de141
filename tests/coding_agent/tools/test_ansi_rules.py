"""The terminal-code rules, written once (shell_output.py) and used by the recorded shell output and by every static
form (forms.clean); widgets/src/ansi.js is held to the same cases (widgets/test/ansi-rules.test.js)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_notebook.coding_agent.tools.shell_output import OutputCollector, sanitize_output
from pi_notebook.notebook import forms
from pi_notebook.notebook.forms import clean

CASES = json.loads((Path(__file__).parents[3] / "widgets/test/ansi_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_recorded_output_and_the_static_forms_clean_alike(case):
    assert sanitize_output(case["input"]) == case["text"]
    assert clean(case["input"]) == case["text"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_sequence_cut_anywhere_by_a_chunk_boundary_is_still_cleaned(case):
    data = case["input"].encode("utf-8")
    for cut in range(len(data) + 1):
        collector = OutputCollector()
        collector.feed(data[:cut])
        collector.feed(data[cut:])
        collector.finish()
        assert collector.snapshot().content == case["text"], cut


def test_the_forms_have_no_rules_of_their_own():
    assert not any(name in vars(forms) for name in ("_ANSI", "_CONTROL", "re"))
