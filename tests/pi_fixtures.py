"""Loading the golden fixtures computed by running Pi's own code (copied from ../shared/fixtures/pi)."""

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "pi"


def load_cases(name: str) -> list[dict]:
    """The golden cases of one fixture file (computed by running Pi's own code)."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def case_params(name: str) -> list:
    return [pytest.param(case, id=case["name"]) for case in load_cases(name)]
