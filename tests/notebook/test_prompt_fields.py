"""The ``{name}`` fields of a ``%%agent`` prompt, through a real IPython shell (#21, failure 8).

Every field that cannot be filled is a one-line ``UsageError`` naming the field and saying what is wrong — a
missing variable, key, index or attribute, a format spec the value does not take — and nothing runs. Before,
``{d:>5}`` with a dict gave a raw ``TypeError`` traceback and ``{d[b]}`` said that ``b`` (a missing key of the
notebook variable ``d``) was not a notebook variable.
"""

from __future__ import annotations

import datetime

import pytest
from IPython.core.error import UsageError

from pi_notebook.ai import faux

BRACES = " (write {{ and }} for literal braces)"


class Unprintable:
    """A value whose text, and one of whose properties, raise."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this one\nsecond line")

    @property
    def size(self) -> int:
        raise ValueError("not measured yet")


@pytest.fixture
def variables(shell):
    shell.ip.user_ns.update(
        d={"a": 1, 0: "zero"}, xs=[1, 2, 3], n=5, city="Lyon", pi=3.14159, w=8, obj=Unprintable(),
        day=datetime.date(2024, 1, 2),
    )  # fmt: skip
    return shell


def usage_error(shell, prompt: str, capsys) -> str:
    """Run ``%%agent`` on ``prompt``: it must fail with a one-line UsageError, shown as that line, before any call
    to the model or any record."""
    capsys.readouterr()
    result = shell.agent(prompt)
    out, err = capsys.readouterr()
    error = result.error_in_exec
    assert isinstance(error, UsageError), (prompt, error)
    assert "\n" not in str(error) and (err + out).strip() == f"UsageError: {error}", err + out
    assert faux.calls == [] and shell.session.messages == []
    return str(error)


@pytest.mark.parametrize(
    ("prompt", "said"),
    [
        ("Align {d:>5}", "{d:>5} in the prompt: the format spec '>5' does not apply to d (a dict): "
         "unsupported format string passed to dict.__format__"),
        ("Key {d[b]}", "{d[b]} in the prompt: d (a dict) has no key 'b'"),
        ("Key {d[1]}", "{d[1]} in the prompt: d (a dict) has no key 1"),
        ("Index {xs[5]}", "{xs[5]} in the prompt: xs (a list) has no index 5"),
        ("Index {xs[a]}", "{xs[a]} in the prompt: xs (a list) cannot be indexed by 'a': list indices must be "
         "integers or slices, not str"),
        ("Nested {d[a][b]}", "{d[a][b]} in the prompt: d[a] (an int) cannot be indexed by 'b': 'int' object is "
         "not subscriptable"),
        ("Attr {d.nope}", "{d.nope} in the prompt: d (a dict) has no attribute 'nope'"),
        ("Var {nowhere}", "{nowhere} in the prompt: nowhere is not a notebook variable"),
        ("Var {nowhere[b]}", "{nowhere[b]} in the prompt: nowhere is not a notebook variable"),
        ('JSON {"key": 1}', '{"key": 1} in the prompt: \'"key"\' is not a notebook variable'),
        ("Empty {}", "{} in the prompt: empty braces name no notebook variable"),
        ("Number {0}", "{0} in the prompt: a number names no notebook variable"),
        ("Conversion {d!x}", "{d!x} in the prompt: !x is not a conversion (!r, !s or !a)"),
        ("Number spec {pi:d}", "{pi:d} in the prompt: the format spec 'd' does not apply to pi (a float): "
         "Unknown format code 'd' for object of type 'float'"),
        ("Width {city:>99999999999}", "{city:>99999999999} in the prompt: a width of 99,999,999,999 is more than "
         "the 100,000 a field may take"),
        ("Digits {pi:.99999999f}", "{pi:.99999999f} in the prompt: a precision of 99,999,999 is more than the "
         "100,000 a field may take"),
        ("Raises {obj}", "{obj} in the prompt: formatting obj raised RuntimeError: no text for this one"),
        ("Raises {obj.size}", "{obj.size} in the prompt: reading obj.size raised ValueError: not measured yet"),
        ("Open {city", "a { in the prompt is never closed"),
        ("Close city}", "a single } in the prompt"),
    ],
)  # fmt: skip
def test_a_field_that_cannot_be_filled_is_one_line_naming_it(variables, capsys, prompt, said):
    assert usage_error(variables, prompt, capsys) == said + BRACES


def test_fields_that_can_be_filled_are(variables):
    faux.set_responses(["ok"])
    variables.agent("X{city!r:>{w}} {pi:.2f} {xs[1]} {d[a]} {d[0]} {day:%Y/%m} {day.year} {{literal}} {{d:>5}}")
    assert faux.calls[-1].messages[-1].content[0].text == "X  'Lyon' 3.14 2 1 zero 2024/01 2024 {literal} {d:>5}"
