"""One session line as JSON text and back, as Pi's ``JSON.stringify`` writes it and ``JSON.parse`` reads it:
pydantic-core (jiter, serde) where it gives the same result, the standard library where it cannot."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_line(obj: Any) -> bytes:
    """:func:`dumps_line` of ``obj`` and a newline, as UTF-8: what a session file gets for one entry.

    pydantic-core writes it (three times as fast as the standard encoder, the same text for JSON values), except
    when it cannot (a lone surrogate, a type it does not know) or wrote a ``NaN`` or an ``Infinity`` (maybe only
    inside a string): then the standard encoder does, with the rules below.
    """
    try:
        data = to_json(obj)
    except PydanticSerializationError:
        data = None
    if data is None or b"NaN" in data or b"Infinity" in data:
        return (_standard_line(obj) + "\n").encode("utf-8")
    return data + b"\n"


def dumps_line(obj: Any) -> str:
    """One compact JSON line as JS ``JSON.stringify`` writes it, safe to encode as UTF-8.

    Raw non-ASCII (U+2028 included) is kept; a lone surrogate is written as a ``\\udXXX`` escape (as JS
    does since ES2019; raw, it could not be encoded). NaN and infinities raise ``ValueError``; so does anything
    that is not JSON, except what pydantic-core writes as JSON (a pydantic model by its own rules, a datetime as
    ISO text, bytes as text).
    """
    return json_line(obj)[:-1].decode("utf-8")


def _standard_line(obj: Any) -> str:
    line = _ENCODER.encode(obj)
    if not line.isascii() and _SURROGATE.search(line):
        line = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
    return line


# One encoder for all lines (json.dumps with keyword arguments builds a new one per call).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def parse_json_line(line: bytes) -> Any:
    """``JSON.parse`` of one line (UTF-8 bytes): jiter (pydantic-core's parser, twice as fast as ``json.loads``,
    sharing its short strings) where it accepts the line, else the standard decoder, which also takes what JSON
    allows and jiter refuses (a lone surrogate escape, deep nesting) and says why a line is not JSON.
    ``ValueError`` (``UnicodeDecodeError`` for bad UTF-8) or ``RecursionError`` if it is not JSON."""
    try:
        return from_json(line, allow_inf_nan=False)
    except ValueError:
        return _DECODER.decode(line.decode("utf-8"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python accepts NaN/Infinity; JSON.parse (and so Pi) does not


# One decoder for all lines (json.loads with keyword arguments builds a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
