"""The data of an export page, each text once: a JSON value whose repeated parts are written once and referred to.

The page's views draw one state (the transcript's messages, the inspector's rows and the request body of every
provider it offers), in which each message's text occurs many times: as the message, as the row's AgentMessage
and what the LLM gets, and in each provider's request body. :class:`Packer` writes each string of
:data:`MIN_TEXT` characters or more once, and each object or list whose packed JSON is :data:`MIN_PART`
characters or more once (a message's JSON is the same in the transcript and in its row), as a numbered *part*;
where it occurs, the value holds a reference: U+E000 followed by the part's number. A string that starts with
U+E000 itself is always written as a part, so a reference is never ambiguous. The parts come before anything
that refers to them. ``widgets/src/packed.js`` (``unpack``) gives the views the state as it was (each object a
copy, each string shared), and :func:`unpack` here does the same in Python.

The JSON is written to sit inside ``<script type="application/json">`` (:func:`script_safe`): a ``<`` followed by
``/`` or ``!`` is escaped, so no text can end the element or open a comment in it (an HTML tokenizer leaves the
script's data state only there), and a lone surrogate is written as its ``\\uXXXX`` escape (UTF-8 cannot hold
it; ``JSON.parse`` gives it back). Nothing else is escaped: text full of ``<x>`` costs what it weighs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["MIN_PART", "MIN_TEXT", "REF", "Packer", "script_json", "script_safe", "unpack"]

REF = "\ue000"
"""The first character of a reference to a part (a private-use character)."""
MIN_TEXT = 32
"""Strings this long or longer are written once, as parts (a reference costs about eight characters)."""
MIN_PART = 48
"""Objects and lists whose packed JSON is this long or longer are written once, as parts."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_string = json.encoder.encode_basestring  # a str as JSON, as json.dumps(ensure_ascii=False) writes it


def script_safe(text: str) -> str:
    """JSON text made safe inside ``<script type="application/json">``: ``</`` as ``<\\/`` and ``<!`` as
    ``<\\u0021`` (both occur only inside strings, where these escapes mean the same characters), lone surrogates
    as ``\\uXXXX``. The same object when nothing needed escaping."""
    if "<" in text:
        text = text.replace("</", "<\\/").replace("<!", "<\\u0021")
    if not text.isascii() and _LONE_SURROGATE.search(text) is not None:
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script type="application/json">`` (:func:`script_safe`)."""
    return script_safe(_dumps(value))


def _key(key: Any) -> str:
    """A dict key as JSON writes it: a string (``json.dumps`` turns numbers, booleans and None into strings)."""
    if type(key) is str:
        return key
    if key is None or isinstance(key, bool):
        return _dumps(key)
    if isinstance(key, int | float):
        return _dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


class Packer:
    """Packs JSON values into references to parts written once (see the module's docstring)."""

    def __init__(self) -> None:
        self._parts: list[str] = []  # a text part: the string itself; an object or list: its packed JSON
        self._is_text: list[bool] = []
        self._texts: dict[str, str] = {}  # text → its reference, as JSON
        self._objects: dict[str, str] = {}  # packed JSON → its reference, as JSON

    def __len__(self) -> int:
        return len(self._parts)

    def _add(self, key: str, is_text: bool) -> str:
        ref = f'"{REF}{len(self._parts)}"'
        self._parts.append(key)
        self._is_text.append(is_text)
        return ref

    def json(self, value: Any) -> str:
        """The JSON of ``value`` packed: its long strings and large objects and lists as references (each written
        once, as a part, the first time it is met). Only JSON types are accepted, as ``json.dumps`` takes them."""
        kind = type(value)
        if kind is str:
            if len(value) < MIN_TEXT and not value.startswith(REF):
                return _string(value)
            ref = self._texts.get(value)
            if ref is None:
                ref = self._texts[value] = self._add(value, True)
            return ref
        if kind is dict:
            text = "{" + ",".join([_string(_key(k)) + ":" + self.json(v) for k, v in value.items()]) + "}"
        elif kind is list or kind is tuple:
            text = "[" + ",".join([self.json(v) for v in value]) + "]"
        else:
            return _dumps(value)
        if len(text) < MIN_PART:
            return text
        ref = self._objects.get(text)
        if ref is None:
            ref = self._objects[text] = self._add(text, False)
        return ref

    def pack(self, value: Any) -> Any:
        """``value`` packed (see :meth:`json`), as a JSON value."""
        return json.loads(self.json(value))

    def parts_json(self) -> Iterator[str]:
        """The JSON list of the parts, script-safe, in pieces (the page is written piece by piece)."""
        yield "["
        for i, (part, is_text) in enumerate(zip(self._parts, self._is_text, strict=True)):
            yield ("," if i else "") + script_safe(_string(part) if is_text else part)
        yield "]"


def unpack(data: dict[str, Any]) -> Any:
    """The value a page's packed data holds (``{"parts": [...], "state": ...}``), with every reference replaced by
    its part: what ``widgets/src/packed.js`` gives the views."""
    parts = data["parts"]

    def resolve(value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith(REF):
                part = parts[int(value[1:])]
                return part if isinstance(part, str) else resolve(part)
            return value
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        return value

    return resolve(data["state"])
