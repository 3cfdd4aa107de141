"""``python -m tests.benchmarks [--quick] [--only P1,P3] [--json PATH]``: run every measure, print the table.

Each ``bench_*.py`` module in this folder registers its measures with :func:`.harness.measure`. The table has
one row per result: measure, baseline, ours, ratio, goal, met. The same goes to ``--json`` (default
``tests/benchmarks/_results/latest.json``, git-ignored). Quick mode (CI) runs everything small, once, so the
suite cannot rot; it reports and never fails on a ratio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
import traceback
from pathlib import Path

from . import harness

HERE = Path(__file__).resolve().parent


def _format(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 10 else f"{value:.1f} s"
    return f"{value:,.1f} {unit}"


def _row(result: harness.Result) -> list[str]:
    base = "—" if result.baseline is None else _format(result.baseline.median, result.unit)
    ours = _format(result.ours.median, result.unit)
    spread = f" ({_format(result.ours.min, result.unit)}–{_format(result.ours.max, result.unit)})"
    ratio = "—" if result.ratio is None else f"{result.ratio:.2f}×"
    met = {True: "yes", False: "NO", None: "—"}[result.met]
    return [result.id, result.what, f"{result.baseline_name}: {base}", ours + spread, ratio, result.goal, met]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small inputs, one repeat (CI): report, never judge")
    parser.add_argument("--only", default="", help="comma-separated measure ids, e.g. P1,P5")
    parser.add_argument("--json", type=Path, default=HERE / "_results" / "latest.json")
    args = parser.parse_args(argv)

    for info in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda i: i.name):
        if info.name.startswith("bench_"):
            importlib.import_module(f"{__package__}.{info.name}")
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    results: list[harness.Result] = []
    failures: list[str] = []
    for measure_id, (title, fn) in sorted(harness.REGISTRY.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if wanted and measure_id not in wanted:
            continue
        print(f"{measure_id}: {title} ...", file=sys.stderr, flush=True)
        try:
            results += fn(args.quick)
        except Exception:
            failures.append(measure_id)
            traceback.print_exc()

    headers = ["#", "measure", "baseline (median)", "ours (median, min–max)", "ratio", "goal", "met"]
    rows = [headers] + [_row(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    for index, row in enumerate(rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("-|-".join("-" * width for width in widths))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "machine": {"python": platform.python_version(), "platform": platform.platform()},
                "quick": args.quick,
                "results": [r.to_json() for r in results],
                "failed": failures,
            },
            indent=1,
        )
    )
    goals = [r for r in results if r.goal]
    judged = [r for r in goals if r.met is not None]
    extra = len(results) - len(goals)
    if judged:
        summary = f"{sum(r.met is True for r in judged)} of {len(judged)} rows with a goal met"
    else:  # --quick: too small to judge
        summary = f"{len(goals)} rows with a goal, not judged in a quick run"
    print(f"\n{summary} ({extra} more for reference); JSON in {args.json}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
