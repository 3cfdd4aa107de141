"""JavaScript's number and string rules, as Pi's texts and bodies depend on them (values checked in Node)."""

import math

import pytest

from pi_notebook.ai.jstext import js_code_units, js_json_parse, js_json_stringify, js_length, js_number, js_slice


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (2.0, "2"),
        (-3, "-3"),
        (0.5, "0.5"),
        (1e21, "1e+21"),
        (123e18, "123000000000000000000"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (2**60, "1152921504606847000"),  # beyond 2**53 an int is a double, as in JavaScript
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
    ],
)
def test_js_number_prints_as_string_of_a_number_does(value, text):
    assert js_number(value) == text


def test_json_stringify_writes_null_for_numbers_json_cannot_hold():
    assert js_json_stringify([math.nan, math.inf, 2.0, 1e21]) == "[null,null,2,1e+21]"


def test_json_parse_is_none_where_javascript_would_throw():
    assert js_json_parse('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    assert js_json_parse('{"a": NaN}') is None and js_json_parse("Infinity") is None
    assert js_json_parse("{not json") is None


def test_lengths_and_slices_count_utf16_code_units():
    assert js_length("a😀") == 3 and js_code_units("a😀") == [0x61, 0xD83D, 0xDE00]
    assert js_slice("a😀b", 3) == "a😀" and js_slice("a😀b", 2) == "a\ud83d"  # a pair cut in two, as in JS
