"""``python -m tests.benchmarks [--quick] [--only P1,P3] [--check] [--save] [--readme]``: run every measure, print
the table.

Each ``bench_*.py`` module in this folder registers its measures with :func:`.harness.measure`. The table has
one row per result: measure, baseline, ours, ratio, goal, met. The same goes to ``--json`` (default
``tests/benchmarks/_results/latest.json``, git-ignored, a scratch file).

* ``--check``: exit 1 when a row with a goal misses it past the noise band the row declares (for an idle
  machine; with ``--from``, judge a results file without running anything).
* ``--save``: merge this run into the committed ``tests/benchmarks/results.json`` (a measure run again replaces
  its rows), with when it ran and the load average.
* ``--readme``: rewrite the README's table from ``tests/benchmarks/results.json`` (alone: nothing is run).

Quick mode (CI) runs everything small, once, so the suite cannot rot; it reports and never judges a goal, and
cannot be saved or checked.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import platform
import sys
import time
import traceback
from pathlib import Path

from . import harness, report

HERE = Path(__file__).resolve().parent
os.environ.setdefault("PI_NOTEBOOK_NO_PRELOAD", "1")  # kernels measured load no model meanwhile (P8 sets its own)


def load_measures() -> list[str]:
    """Import every ``bench_*`` module; the measure ids in table order."""
    for info in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda i: i.name):
        if info.name.startswith("bench_"):
            importlib.import_module(f"{__package__}.{info.name}")
    return sorted(harness.REGISTRY, key=lambda m: (len(m), m))


def run(wanted: set[str], quick: bool) -> tuple[dict[str, dict], list[harness.Result], list[str]]:
    """Run the measures (all, or ``wanted``): their run records, every row, the measures that failed."""
    runs, results, failures = {}, [], []
    for measure_id in load_measures():
        if wanted and measure_id not in wanted:
            continue
        title, fn = harness.REGISTRY[measure_id]
        load = os.getloadavg()
        print(f"{measure_id}: {title} (load {load[0]:.2f}) ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            rows = fn(quick)
        except Exception as error:
            failures.append(measure_id)
            traceback.print_exc()
            runs[measure_id] = report.run_record([], time.perf_counter() - start, load)
            runs[measure_id]["failed"] = f"{type(error).__name__}: {error}"[:300]
            continue
        results += rows
        runs[measure_id] = report.run_record(rows, time.perf_counter() - start, load)
    return runs, results, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small inputs, one repeat (CI): report, never judge")
    parser.add_argument("--only", default="", help="comma-separated measure ids, e.g. P1,P5")
    parser.add_argument("--json", type=Path, default=HERE / "_results" / "latest.json")
    parser.add_argument("--check", action="store_true", help="exit 1 if a goal is missed past its noise band")
    parser.add_argument("--from", dest="source", type=Path, help="judge / tabulate this results file, run nothing")
    parser.add_argument("--save", action="store_true", help=f"merge this run into {report.RESULTS.name}")
    parser.add_argument("--readme", action="store_true", help=f"rewrite the README's table from {report.RESULTS.name}")
    args = parser.parse_args(argv)
    if args.quick and (args.check or args.save):
        parser.error("a quick run is too small to judge or to save")
    if (args.readme and not (args.check or args.save or args.only or args.quick)) or args.source:
        return _from_file(args)

    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    started = time.perf_counter()
    runs, results, failures = run(wanted, args.quick)
    print(report.console_table(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    summary = {"quick": args.quick, "python": platform.python_version(), "failed": failures, "measures": runs}
    args.json.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    goals = [r for r in results if r.limit is not None]
    judged = [r for r in goals if r.met is not None]
    if judged and not args.quick:
        summary_line = f"{sum(harness.verdict(r) == 'met' for r in judged)} of {len(judged)} rows with a goal met"
    else:  # --quick: too small to judge
        summary_line = f"{len(goals)} rows with a goal, not judged in a quick run"
    print(f"\n{summary_line} ({len(results) - len(goals)} more for reference); {time.perf_counter() - started:.0f} s")
    print(f"JSON in {args.json}")
    if args.save and runs:
        report.merge(report.RESULTS, runs, load_measures())
        print(f"saved in {report.RESULTS}")
    if args.readme:
        _write_readme(report.RESULTS)
    missed = harness.check(results) if args.check else []
    for line in missed:
        print(f"MISSED: {line}", file=sys.stderr)
    return 1 if failures or missed else 0


def _from_file(args: argparse.Namespace) -> int:
    path = args.source or report.RESULTS
    data = report.load_results(path)
    results = [row for _, _, row in report.rows_of(data)]
    if args.readme:
        _write_readme(path)
    if not args.check:
        if not args.readme:
            print(report.console_table(results))
        return 0
    missed = harness.check(results)
    for line in missed:
        print(f"MISSED: {line}", file=sys.stderr)
    print(f"{path}: {len(missed)} goal(s) missed of {sum(r.limit is not None for r in results)}")
    return 1 if missed else 0


def _write_readme(path: Path) -> None:
    text = report.README.read_text(encoding="utf-8")
    report.README.write_text(report.readme_with_table(text, report.load_results(path)), encoding="utf-8")
    print(f"README table rewritten from {path}")


if __name__ == "__main__":
    sys.exit(main())
