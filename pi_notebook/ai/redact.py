"""Redaction of API keys from error texts, before an error becomes data (a message, a session line, output).

A transport error may quote a key in forms other than the key itself: ``Illegal header value b'Bearer
sk-…\\n'`` shows it as a bytes repr with ``\\n`` escaped, a proxy may echo it URL-encoded or JSON-escaped,
and a truncated quote shows only part of it. :func:`secret_forms` lists the whole forms;
:func:`redact` replaces them and, for keys of :data:`MIN_PARTIAL` characters or more, every run of text
made of pieces of a form at least that long (a prefix, a suffix, a cut-off middle).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from urllib.parse import quote, quote_plus

__all__ = [
    "MARKER",
    "MIN_PARTIAL",
    "MIN_SECRET",
    "auth_header_values",
    "mark_occurrences",
    "redact",
    "replace_marked",
    "secret_forms",
]

MARKER = "[redacted]"
"""What a redacted key reads as."""
MIN_SECRET = 4
"""Keys shorter than this are not redacted: replacing two letters everywhere would garble the text."""
MIN_PARTIAL = 8
"""A run of at least this many characters of a key (in any of its forms) is redacted too."""

_AUTH_HEADER_WORDS = ("auth", "key", "token", "secret", "cookie")


def secret_forms(secret: str) -> list[str]:
    """``secret`` as text may show it, longest first: raw, stripped of surrounding whitespace, Python
    ``str`` and ``bytes`` repr escapes, JSON escapes, URL encoding (``%20`` and ``+`` for spaces)."""
    forms: set[str] = set()
    for value in {secret, secret.strip()}:
        if not value:
            continue
        forms.update(
            (
                value,
                repr(value)[1:-1],
                repr(value.encode("utf-8", "surrogatepass"))[2:-1],
                json.dumps(value)[1:-1],
                json.dumps(value, ensure_ascii=False)[1:-1],
                quote(value, safe=""),
                quote_plus(value, safe=""),
            )
        )
    return sorted(forms, key=lambda f: (-len(f), f))


def auth_header_values(*headers: dict[str, str] | None) -> list[str]:
    """Values of headers whose name suggests a credential (``Authorization``, ``x-api-key``, …)."""
    found = []
    for mapping in headers:
        for name, value in (mapping or {}).items():
            if isinstance(value, str) and any(word in name.lower() for word in _AUTH_HEADER_WORDS):
                found.append(value)
    return found


def redact(text: str, secrets: Iterable[str | None], marker: str = MARKER) -> str:
    """``text`` with every form of every secret replaced by ``marker``, and with every run of
    :data:`MIN_PARTIAL` or more characters copied from a form (a partial key) replaced as well."""
    forms: list[str] = []
    for secret in secrets:
        if secret and len(secret.strip()) >= MIN_SECRET:
            forms.extend(secret_forms(secret))
    if not text or not forms:
        return text
    covered = bytearray(len(text))
    for form in forms:
        mark_occurrences(text, form, covered)
    grams = {form[i : i + MIN_PARTIAL] for form in forms for i in range(len(form) - MIN_PARTIAL + 1)}
    if grams:
        for i in range(len(text) - MIN_PARTIAL + 1):
            if text[i : i + MIN_PARTIAL] in grams:
                covered[i : i + MIN_PARTIAL] = b"\1" * MIN_PARTIAL
    return replace_marked(text, covered, lambda start, end: marker)


def mark_occurrences(text: str, form: str, covered: bytearray) -> None:
    """Mark every occurrence of ``form`` in ``text``, overlapping ones included."""
    start = text.find(form)
    while start != -1:
        covered[start : start + len(form)] = b"\1" * len(form)
        start = text.find(form, start + 1)


def replace_marked(text: str, covered: bytearray, replacement: Callable[[int, int], str]) -> str:
    """``text`` with each maximal run of covered characters replaced by ``replacement(start, end)``."""
    parts, position = [], 0
    start = covered.find(1)
    while start != -1:
        end = covered.find(0, start)
        end = len(text) if end == -1 else end
        parts += [text[position:start], replacement(start, end)]
        position = end
        start = covered.find(1, end)
    parts.append(text[position:])
    return "".join(parts)
