"""Text that leaves the kernel is UTF-8: a lone surrogate is shown as U+FFFD, never an encoding error.

A Python ``str`` may hold a lone UTF-16 surrogate (``'\\udc00'`` in a prompt, ``"\\ud800"`` in a Pi session file:
valid JSON, and Pi keeps it), which UTF-8 cannot encode. The session file's writer escapes it and the message keeps
what was written; everything this front end hands on (widget state and comm messages, which Jupyter sends as UTF-8
JSON, display bundles, exported files) passes :func:`utf8_safe` first. Each lone surrogate becomes one U+FFFD (one
UTF-16 code unit for one, so the live views' deltas keep their lengths); the two halves of a pair that a ``str``
holds apart become the character they encode, as JavaScript shows them. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any, TypeVar

__all__ = ["REPLACEMENT", "has_surrogates", "say", "utf8_safe", "utf8_text"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate is shown as."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")

T = TypeVar("T")


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (which UTF-8 cannot encode)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a pair held as two code points: the character it encodes
        return chr(0x10000 + ((ord(found[0]) - 0xD800) << 10) + (ord(found[1]) - 0xDC00))
    return REPLACEMENT


def utf8_text(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (the same object when it holds none)."""
    return _PAIR_OR_LONE.sub(_replace, text) if has_surrogates(text) else text


def utf8_safe(value: T) -> T:
    """A JSON value (dicts, lists, strings, numbers...) whose strings, keys included, UTF-8 can encode: each lone
    surrogate as U+FFFD. What needs no change is returned as it is (the same objects, nothing copied), so the
    usual case costs one look at each string."""
    kind = type(value)
    if kind is str:
        return utf8_text(value)  # type: ignore[arg-type,return-value]
    if kind is dict:
        out: dict[Any, Any] | None = None
        for i, (key, item) in enumerate(value.items()):  # type: ignore[attr-defined]
            safe_key = utf8_text(key) if type(key) is str else key
            safe = utf8_safe(item)
            if out is None and (safe is not item or safe_key is not key):
                out = dict(islice(value.items(), i))  # type: ignore[attr-defined]
            if out is not None:
                out[safe_key] = safe
        return value if out is None else out  # type: ignore[return-value]
    if kind is list or kind is tuple:
        changed: list[Any] | None = None
        for i, item in enumerate(value):  # type: ignore[arg-type]
            safe = utf8_safe(item)
            if safe is not item:
                if changed is None:
                    changed = list(value)  # type: ignore[call-overload]
                changed[i] = safe
        if changed is None:
            return value
        return changed if kind is list else tuple(changed)  # type: ignore[return-value]
    return value


def say(text: str) -> None:
    """``print(text)`` for a line that may hold a session's text (a name, a folder, a label): UTF-8 encodable."""
    print(utf8_text(text))
