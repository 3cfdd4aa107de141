"""Count the reliability cases and how many hold, for the README's "N cases, N held".

    .venv/bin/python tests/reliability/count.py                  # run them all: "84 cases, 84 held"
    .venv/bin/python tests/reliability/count.py --collect-only   # only count them (seconds, runs nothing)

A case is one collected test (a parametrized test counts once per parameter). It holds when it passes; a known
bug kept as ``xfail(strict=True)`` is counted apart, as are skips, failures and errors. Extra arguments go to
pytest (e.g. ``-k kernel``). The exit status is pytest's.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
ROOT = FOLDER.parent.parent


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", str(FOLDER), "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def collected(extra: list[str]) -> int:
    """How many cases pytest collects (nothing is run)."""
    proc = _pytest("--collect-only", "-q", *extra)
    if proc.returncode not in (0, 5):  # 5: nothing collected
        sys.exit(proc.stdout[-3000:] + proc.stderr[-2000:])
    return sum(1 for line in proc.stdout.splitlines() if "::" in line)


def outcome(case: ET.Element) -> str:
    """passed, xfailed, skipped, failed or error, from a JUnit XML ``testcase``."""
    for child in case:
        if child.tag == "skipped":
            return "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        if child.tag in ("failure", "error"):
            return "failed" if child.tag == "failure" else "error"
    return "passed"


def results(extra: list[str]) -> tuple[dict[str, str], int]:
    """Run the cases; the outcome of each (by ``file::name``), and pytest's exit status."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        proc = _pytest("-q", f"--junitxml={report}", *extra)
        if not report.is_file():
            sys.exit(proc.stdout[-3000:] + proc.stderr[-2000:])
        cases = ET.parse(report).getroot().iter("testcase")
        return {f"{c.get('classname')}::{c.get('name')}": outcome(c) for c in cases}, proc.returncode


def main(argv: list[str]) -> int:
    extra = [a for a in argv if a != "--collect-only"]
    total = collected(extra)
    if "--collect-only" in argv:
        print(f"{total} cases")
        return 0
    outcomes, status = results(extra)
    counts = Counter(outcomes.values())
    line = f"{total} cases, {counts['passed']} held"
    others = [(counts[k], k) for k in ("xfailed", "skipped", "failed", "error") if counts[k]]
    if others:
        line += " (" + ", ".join(f"{n} {'xfail: known bugs' if k == 'xfailed' else k}" for n, k in others) + ")"
    print(line)
    for case, result in outcomes.items():
        if result != "passed":
            print(f"  {result}: {case}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
