"""JavaScript rules that Pi's behaviour depends on: surrogate cleanup, JS `trim`/blank checks, string length in
UTF-16 code units, `String(number)`, `JSON.stringify` and `JSON.parse`.

Pi's providers run in JavaScript, so two of its string rules need care in Python:

* ``sanitizeSurrogates`` drops UTF-16 surrogates that are not part of a pair. A Python ``str`` read from JSON
  already holds a valid pair ``\\ud83d\\ude00`` as one astral character, so a surrogate code point left in a
  ``str`` is lone (unless the string was built in Python from two halves, which we join like JS would).
* ``s.trim()`` strips JavaScript's whitespace set, which is not Python's ``str.isspace`` set (JS strips
  U+FEFF and not U+001C–U+001F or U+0085). Blank checks must use the JS set to skip the same blocks as Pi.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

# A high surrogate followed by a low one (a pair split into two code points), or any other surrogate.
_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim() removes.
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _join_or_drop(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:
        # Two halves of a valid pair: JS would keep them, so keep the character they encode.
        high, low = ord(found[0]), ord(found[1])
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return ""


def sanitize_surrogates(text: str) -> str:
    """Remove lone UTF-16 surrogates (code points U+D800–U+DFFF not part of a pair), as Pi's
    ``sanitizeSurrogates`` does, so the text can be encoded as UTF-8 JSON. Valid characters are untouched."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_join_or_drop, text)


def js_trim(text: str) -> str:
    """``text.trim()`` with JavaScript's whitespace set."""
    return text.strip(JS_WHITESPACE)


def is_blank(text: str | None) -> bool:
    """True when ``text`` is ``None``, empty, or only JavaScript whitespace (``!text || !text.trim()``)."""
    return not text or not js_trim(text)


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an astral character counts two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, units: int) -> str:
    """``text.slice(0, units)`` in JavaScript: the first ``units`` UTF-16 code units (a pair cut in two leaves
    its high half, a lone surrogate, as in JS)."""
    return text.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass")


def js_code_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (``text.charCodeAt(i)`` for each ``i``)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def js_json_parse(text: str) -> Any:
    """``JSON.parse(text)``, or ``None`` where it would throw (JavaScript knows no ``NaN``/``Infinity`` literals,
    which Python's parser accepts)."""

    def reject(constant: str) -> Any:
        raise ValueError(constant)

    try:
        return json.loads(text, parse_constant=reject)
    except ValueError:
        return None


def js_json_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` as Node prints it: compact, non-ASCII kept, lone surrogates escaped as
    ``\\udXXX``, integer-like keys first (JS object order), numbers in JS notation (``1.0`` → ``1``)."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return "null" if isinstance(value, float) and not math.isfinite(value) else js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        items = [(_js_key(key), item) for key, item in value.items()]
        index_keys = sorted((k for k, _ in items if _is_array_index(k)), key=int)
        order = {key: rank for rank, key in enumerate(index_keys)}
        items.sort(key=lambda kv: order.get(kv[0], len(order)))  # stable: other keys keep insertion order
        return "{" + ",".join(_js_string(k) + ":" + js_json_stringify(v) for k, v in items) + "}"
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


_JS_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _js_string(text: str) -> str:
    # Two halves of a pair stored as two code points are one character to JavaScript.
    text = _SURROGATE_PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _JS_ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _js_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    return js_json_stringify(key).strip('"')


def _is_array_index(key: str) -> bool:
    return (key == "0" or (key[:1] in "123456789" and key.isdigit() and key.isascii())) and int(key) < 2**32 - 1


def js_number(number: float) -> str:
    """``String(number)`` in JavaScript (also how a template literal prints it): ``2.0`` → ``2``, ``1e21`` →
    ``1e+21``, ``1e-7`` → ``1e-7``, ``nan`` → ``NaN``. An int is first made a double, as JavaScript has no other
    number (exact up to 2**53)."""
    if isinstance(number, int) and abs(number) <= 2**53:
        return str(number)
    number = float(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr() gives the shortest round-tripping digits, as JS does; only the layout differs.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    assert isinstance(exponent, int)  # a finite number's (the exponent of NaN and Infinity is a letter)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits, k = stripped, len(stripped)
    n = exponent + k  # value = 0.digits × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if n - 1 > 0 else '-'}{abs(n - 1)}"
