"""JavaScript string rules that Pi's behaviour depends on: surrogate cleanup and JS `trim`/blank checks.

Pi's providers run in JavaScript, so two of its string rules need care in Python:

* ``sanitizeSurrogates`` drops UTF-16 surrogates that are not part of a pair. A Python ``str`` read from JSON
  already holds a valid pair ``\\ud83d\\ude00`` as one astral character, so a surrogate code point left in a
  ``str`` is lone (unless the string was built in Python from two halves, which we join like JS would).
* ``s.trim()`` strips JavaScript's whitespace set, which is not Python's ``str.isspace`` set (JS strips
  U+FEFF and not U+001C–U+001F or U+0085). Blank checks must use the JS set to skip the same blocks as Pi.
"""

from __future__ import annotations

import re

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
