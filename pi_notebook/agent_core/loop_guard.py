"""The loop guard (not in Pi): notice a model that is stuck, tell it so, and stop the run if it persists.

Two patterns, after Gemini CLI's loop detection and opencode's ``doom_loop``:

* **the same tool call over and over** — name and canonical arguments (JSON with sorted keys, whitespace in
  strings normalised) repeated in a row. The ``note_at``-th identical call still runs, and a "step back" note is
  appended to its result; the ``stop_at``-th is not run and the run ends.
* **degenerate text** — the tail of a reply is one chunk repeated many times (``Your task is: [Your task is:
  [...`` until the token limit). The repetition is cut, keeping one occurrence, a note is appended and the run
  ends. Only words count: a chunk of at least ``min_chunk_chars`` that is not itself made of a shorter period
  (``-----``, ``0, 0, 0``, blank lines) and has ``min_distinct_letters`` different letters (not a row of zeros
  or empty table cells), repeated ``min_repeats`` times and over ``min_repeated_chars`` characters (more
  inside an open code fence, where identical lines are more common).

This module is pure logic; :mod:`.loop` applies it (while the reply streams, so a looping generation stops
early).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from .events import RunStop

_WHITESPACE = re.compile(r"\s+")
_QUICK = 8  # characters compared before the full check of a candidate period
_ENDS = ".!?\n"


@dataclass(frozen=True)
class LoopGuardSettings:
    """Thresholds of the loop guard. ``AgentLoopConfig(loop_guard=None)`` / ``Agent(loop_guard=False)`` turn
    it off."""

    note_at: int = 3
    """The n-th identical tool call in a row gets the "step back" note on its result (0 = never)."""
    stop_at: int = 4
    """The n-th identical tool call in a row is not run and the run ends (0 = never)."""
    min_chunk_chars: int = 10
    """Repeated text: the shortest repeating chunk that counts (shorter periods are rules, padding, zeros)."""
    max_chunk_chars: int = 400
    """Repeated text: the longest repeating chunk looked for."""
    min_distinct_letters: int = 3
    """Repeated text: the chunk has at least this many different letters (data such as ``0x00, `` has none)."""
    min_repeats: int = 5
    """Repeated text: at least this many occurrences of the chunk."""
    min_repeated_chars: int = 500
    """Repeated text: and at least this many characters of repetition (about 125 tokens)."""
    min_repeated_chars_in_code: int = 1500
    """The same, when the repetition starts inside an open code fence (tables of zeros, identical lines)."""


def canonical_arguments(arguments: Any) -> str:
    """Tool arguments as one comparable string: JSON with sorted keys, runs of whitespace in strings collapsed
    to one space and trimmed (``{"path": " a  b"}`` and ``{"path": "a b"}`` are the same call)."""
    return json.dumps(_normalise(arguments), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _normalise(value: Any) -> Any:
    if isinstance(value, str):
        return _WHITESPACE.sub(" ", value).strip()
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    return value


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 22nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --- repeated tool calls ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallCheck:
    """The guard's verdict on one tool call."""

    action: Literal["run", "note", "stop"]
    count: int
    """How many identical calls in a row, this one included."""


class LoopGuard:
    """The state of one run: the current streak of identical tool calls and their results."""

    def __init__(self, settings: LoopGuardSettings | None = None):
        self.settings = settings or LoopGuardSettings()
        self._last: tuple[str, str] | None = None
        self._streak = 0
        self._calls: dict[str, tuple[tuple[str, str], int]] = {}
        self._results: dict[tuple[str, str], list[str]] = {}

    def check_call(self, call_id: str, name: str, arguments: Any) -> CallCheck:
        """Count a call (in source order, before it runs) and say whether to run it, note it or stop."""
        key = (name, canonical_arguments(arguments))
        if key == self._last:
            self._streak += 1
        else:
            self._last, self._streak = key, 1
            self._results[key] = []
        self._calls[call_id] = (key, self._streak)
        s = self.settings
        if s.stop_at and self._streak >= s.stop_at:
            return CallCheck("stop", self._streak)
        if s.note_at and self._streak >= s.note_at:
            return CallCheck("note", self._streak)
        return CallCheck("run", self._streak)

    def result_note(self, call_id: str, name: str, result_text: str) -> str | None:
        """Remember a finished call's result; the "step back" note to append to it, if it is due one."""
        key, count = self._calls.pop(call_id, (None, 0))
        if key is None:
            return None
        earlier = self._results.setdefault(key, [])
        unchanged = bool(earlier) and all(text == result_text for text in earlier)
        earlier.append(result_text)
        s = self.settings
        if not s.note_at or count < s.note_at or (s.stop_at and count >= s.stop_at):
            return None
        said = "; the result will not change" if unchanged else " in a row"
        return (
            f"Note: this is the {ordinal(count)} identical call to {name} with the same arguments{said}. "
            "Step back: answer from what you have, or try something different."
        )

    @staticmethod
    def refused_text(name: str, count: int) -> str:
        """The result of the call that was not run."""
        return f"Not run: the {ordinal(count)} identical call to {name} in a row (loop guard). The run stops here."

    @staticmethod
    def stop_for_calls(name: str, count: int) -> RunStop:
        """How the run ends after too many identical calls."""
        return RunStop(
            "loop_guard",
            f"Stopped by the loop guard: the model called {name} with the same arguments {count} times in a row, "
            f"so the {ordinal(count)} call was not run. Rephrase the request or give the model what it is missing.",
            {"kind": "repeated_tool_call", "toolName": name, "count": count},
        )


# --- degenerate text -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepeatedTail:
    """Where a text's tail turns into one chunk repeated: ``text[start:]`` has period ``period``."""

    start: int
    period: int
    repeats: int
    """Whole occurrences of the chunk in ``text[start:]``."""

    @property
    def keep(self) -> int:
        """How many characters to keep: everything before the repetition and one occurrence."""
        return self.start + self.period

    def chunk(self, text: str) -> str:
        return text[self.start : self.keep]


GUARD_STEP = 32
"""Characters a streaming text grows by between two looks of :class:`StreamingText` for a repeating tail."""


class StreamingText:
    """The guard's look at one reply as it streams: :func:`find_repeated_tail` once every :data:`GUARD_STEP` new
    characters of a block, not on every delta (it would cost more than the rest of the loop's work on a delta). A
    repetition is hundreds of characters long, so it is stopped a few tokens later at most, and the reply is cut
    to one occurrence either way."""

    def __init__(self, settings: LoopGuardSettings) -> None:
        self.settings = settings
        self._seen = (-1, 0)  # (block, its length) at the last look

    def check(self, index: int, text: str) -> RepeatedTail | None:
        last_index, last_length = self._seen
        if index == last_index and len(text) - last_length < GUARD_STEP:
            return None
        self._seen = (index, len(text))
        return find_repeated_tail(text, self.settings)


def find_repeated_tail(text: str, settings: LoopGuardSettings | None = None) -> RepeatedTail | None:
    """The repeated tail of ``text``, if it is degenerate by ``settings`` (see the module docstring)."""
    s = settings or LoopGuardSettings()
    n = len(text)
    if n < max(s.min_repeated_chars, 2 * _QUICK):
        return None
    # Candidate periods are where the last few characters occurred before (found by ``rfind``, which is fast
    # enough to run on every streamed delta), shortest first.
    last, lowest = text[n - _QUICK :], max(0, n - _QUICK - s.max_chunk_chars)
    at = text.rfind(last, lowest, n - 1)
    while at != -1:
        period = n - _QUICK - at
        at = text.rfind(last, lowest, at + _QUICK - 1)
        need = max(max(2, s.min_repeats) * period, s.min_repeated_chars)
        if need > n:
            break  # ``need`` only grows with the period
        tail = text[n - need :]
        if tail[period:] != tail[:-period]:
            continue
        if period < s.min_chunk_chars:
            return None  # a short period (a rule, padding, a row of zeros): every longer one is its multiple
        start = n - need
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        # Keep whole sentences or lines where the chunk has one: "…again." rather than "…again" (any
        # rotation of the chunk is one occurrence).
        start += next((k for k in range(period) if text[start + k + period - 1] in _ENDS), 0)
        if len({c for c in text[start : start + period] if c.isalpha()}) < s.min_distinct_letters:
            return None
        if _inside_code_fence(text, start) and n - start < max(need, s.min_repeated_chars_in_code):
            return None
        return RepeatedTail(start, period, (n - start) // period)
    return None


def _inside_code_fence(text: str, position: int) -> bool:
    return text.count("```", 0, position) % 2 == 1


def repeats_from(text: str, start: int, period: int) -> int:
    """Whole occurrences of ``text[start:start+period]`` repeated from ``start`` (the reply may have grown since
    the repetition was found)."""
    end = start + period
    while end < len(text) and text[end] == text[end - period]:
        end += 1
    return (end - start) // period


def text_note(chunk: str, repeats: int) -> str:
    """The note that replaces a cut repetition."""
    return (
        f"[Note: this reply repeated {_preview(chunk)} {repeats} times; the repetition was cut here (loop guard). "
        "Step back: answer from what you have, or try something different.]"
    )


def stop_for_text(chunk: str, repeats: int) -> RunStop:
    """How the run ends after degenerate text."""
    return RunStop(
        "loop_guard",
        f"Stopped by the loop guard: the reply kept repeating {_preview(chunk)} ({repeats} times), so it was cut "
        "after the first occurrence. Run the cell again, or rephrase the request.",
        {"kind": "repeated_text", "chunk": chunk, "repeats": repeats},
    )


def _preview(chunk: str, width: int = 40) -> str:
    one_line = _WHITESPACE.sub(" ", chunk).strip()
    return json.dumps(one_line if len(one_line) <= width else one_line[: width - 1] + "…", ensure_ascii=False)
