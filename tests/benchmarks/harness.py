"""The benchmark harness: every measure against a baseline taken in the same run, as one table and one JSON file.

A measure is a function registered with :func:`measure`; it receives ``quick`` (True in CI: fewer repeats and
smaller inputs, so the suite cannot rot, not so its numbers mean much) and returns one or more :class:`Result`.
Time it with :func:`compare` (baseline and ours interleaved, ``repeats`` times each; median, min and max),
or fill a :class:`Result` yourself for measures that are not a time ratio (MB, updates per second, frames).

A row with a goal states it as numbers (:func:`goal`): the limit, what is held to it (``ours``' median or the
ratio) and the noise band the row declares (how far past the limit one run on a quiet machine may land before
``--check`` calls it a miss). :func:`check` judges rows by those numbers, never by the text.

Run everything: ``python -m tests.benchmarks [--quick] [--only P1,P3] [--json PATH] [--check]``.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

REGISTRY: dict[str, tuple[str, Callable[[bool], list[Result]]]] = {}
"""Measure id (``"P1"``) → (its title, the function that runs it)."""


@dataclass
class Stat:
    """One side of a comparison: median, min and max of the repeats (seconds, or the measure's unit)."""

    median: float
    min: float
    max: float
    samples: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, samples: list[float]) -> Stat:
        return cls(statistics.median(samples), min(samples), max(samples), list(samples))


@dataclass
class Result:
    """One row of the table."""

    id: str
    """The measure's id, e.g. ``"P1"`` or ``"P1b"``."""
    what: str
    """What is measured, in a few words."""
    baseline_name: str
    """What ours is compared with (``"—"`` for an absolute measure)."""
    ours: Stat
    baseline: Stat | None = None
    unit: str = "s"
    """Unit of the two stats: ``s``, ``ms``, ``MB``, ``updates/s``, ``ms/frame``..."""
    goal: str = ""
    """The goal as the issue states it, e.g. ``"≤ 2×"`` or ``"≤ +150 ms"``."""
    met: bool | None = None
    """Whether the goal is met (``None``: not judged, e.g. quick mode or no goal)."""
    note: str = ""
    limit: float | None = None
    """The goal as a number: ``value`` must be ≤ it (``None``: no goal, a reference row)."""
    on: str = "ours"
    """What is held to ``limit``: ``"ours"`` (the median of ours, in ``unit``) or ``"ratio"``."""
    noise: float = 0.0
    """The noise band the row declares, relative: ``--check`` fails it only past ``limit × (1 + noise)``."""
    floor: float | None = None
    """Where a goal is out of reach: the floor it stands on, as a number of the same kind as ``limit``, computed
    from a reference row measured in the same run (``floor_note`` names it). The row still shows its goal as
    missed; ``--check`` then holds it to the floor (``floor × (1 + noise)``), so it cannot slide further."""
    floor_note: str = ""

    @property
    def value(self) -> float | None:
        """The number held to the goal."""
        return self.ratio if self.on == "ratio" else self.ours.median

    @property
    def ratio(self) -> float | None:
        """ours / baseline, by medians (``None`` for an absolute measure)."""
        if self.baseline is None or self.baseline.median == 0:
            return None
        return self.ours.median / self.baseline.median

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = self.ratio
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        """A row as :meth:`to_json` wrote it (the committed results file)."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["ours"] = Stat(**data["ours"])
        fields["baseline"] = None if data.get("baseline") is None else Stat(**data["baseline"])
        return cls(**fields)


def measure(id: str, title: str) -> Callable[[Callable[[bool], list[Result]]], Callable[[bool], list[Result]]]:
    """Register a measure function under ``id`` (``"P1"``; it may return several rows, ``P1`` and ``P1b``)."""

    def register(fn: Callable[[bool], list[Result]]) -> Callable[[bool], list[Result]]:
        REGISTRY[id] = (title, fn)
        return fn

    return register


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes, with the cyclic GC collected before and paused during the call."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def run_async(make: Callable[[], Any]) -> Any:
    """``asyncio.run(make())`` on a fresh thread, whatever this thread runs: a measure that keeps a browser
    open (Playwright's sync API holds an event loop on the main thread) must not break the next one. Both sides
    of every async comparison go through here, so the thread's cost is in both."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(make())
        except BaseException as error:
            out["error"] = error

    thread = threading.Thread(target=target, name="bench-async")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def compare(baseline: Callable[[], Any], ours: Callable[[], Any], repeats: int) -> tuple[Stat, Stat]:
    """Time ``baseline`` and ``ours`` ``repeats`` times each, interleaved (b, o, b, o, ...) after one warm-up
    call of each, so that the machine's load affects both alike. Returns (baseline, ours)."""
    baseline()
    ours()
    b, o = [], []
    for _ in range(repeats):
        b.append(timed(baseline))
        o.append(timed(ours))
    return Stat.of(b), Stat.of(o)


def goal(result: Result, limit: float, quick: bool, *, on: str = "ours", text: str = "", noise: float = 0.10) -> Result:
    """Give ``result`` its goal: ``on`` (``"ours"`` or ``"ratio"``) ≤ ``limit``, shown as ``text``, with the
    noise band the row declares (relative; 0 for counts and sizes, which do not vary). Judged unless ``quick``."""
    result.limit, result.on, result.noise = limit, on, noise
    result.goal = result.goal or text or (f"≤ {limit:g}×" if on == "ratio" else f"≤ {limit:g} {result.unit}")
    value = result.value
    result.met = None if quick or value is None else value <= limit
    return result


def ratio_goal(result: Result, limit: float, quick: bool, noise: float = 0.10) -> Result:
    """Judge a ratio row against ``≤ limit×`` (not judged in quick mode)."""
    return goal(result, limit, quick, on="ratio", noise=noise)


def verdict(result: Result) -> str:
    """``"met"``, ``"within noise"`` (past the limit, inside the row's band), ``"at its floor"`` (past it, but
    within the band of the floor it declares), ``"missed"``, or ``""`` (no goal, or not judged)."""
    value = result.value
    if result.limit is None or result.met is None or value is None:
        return ""
    if value <= result.limit:
        return "met"
    if value <= result.limit * (1 + result.noise):
        return "within noise"
    if result.floor is not None and value <= result.floor * (1 + result.noise):
        return "at its floor"
    return "missed"


def check(results: list[Result]) -> list[str]:
    """What ``--check`` reports: one line per row whose goal is missed past its noise band (empty: all held)."""
    out = []
    for r in results:
        if verdict(r) == "missed":
            shown = f"{r.value:.2f}×" if r.on == "ratio" else f"{r.value:,.2f} {r.unit}"
            band = f" (+{r.noise:.0%} noise band)" if r.noise else ""
            floor = f"; its floor {r.floor:,.2f} ({r.floor_note})" if r.floor is not None else ""
            out.append(f"{r.id} {r.what}: {shown}, goal {r.goal}{band}{floor}")
    return out
