"""The benchmark checker (``python -m tests.benchmarks --check``) and the README's generated table (#27 item 1).

The checker is tested on synthetic rows (a goal met, missed on purpose, missed inside its noise band, standing
on its floor) and through the command line, on a results file and on a real measure registered for the test
(a tiny timing whose goal is broken on purpose, then met). The README's table must be what ``--readme`` makes
of the committed ``tests/benchmarks/results.json``, and every goal missed there must be explained in the README.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.benchmarks import __main__ as cli
from tests.benchmarks import harness, report
from tests.benchmarks.harness import Result, Stat, check, goal, ratio_goal, verdict


def ratio_row(ours: float, baseline: float = 1.0, limit: float = 1.2, noise: float = 0.10, quick: bool = False):
    row = Result("T1", "a ratio", "the baseline", Stat.of([ours]), Stat.of([baseline]))
    return ratio_goal(row, limit, quick, noise=noise)


def test_a_met_goal_passes_and_a_goal_broken_on_purpose_fails():
    met, broken = ratio_row(1.1), ratio_row(1.5)
    assert (verdict(met), verdict(broken)) == ("met", "missed")
    assert check([met]) == []
    (line,) = check([met, broken])
    assert line.startswith("T1 a ratio: 1.50×, goal ≤ 1.2×")


def test_the_noise_band_the_row_declares_is_all_the_check_forgives():
    assert verdict(ratio_row(1.31)) == "within noise" and check([ratio_row(1.31)]) == []  # 1.2 × 1.10 = 1.32
    assert verdict(ratio_row(1.33)) == "missed" and len(check([ratio_row(1.33)])) == 1
    exact = ratio_row(1.21, noise=0)  # a size: no band
    assert check([exact]) != []


def test_a_value_goal_is_held_on_the_median_of_ours():
    row = Result("T2", "first rows", "—", Stat.of([0.9, 1.4, 1.3]), unit="s")  # median 1.3 s
    goal(row, 1.0, False, text="≤ 1 s")
    assert row.value == 1.3 and verdict(row) == "missed"
    assert "1.30 s, goal ≤ 1 s (+10% noise band)" in check([row])[0]


def test_a_row_on_its_floor_is_shown_missed_but_held_to_the_floor():
    row = ratio_row(1.8, limit=1.5)
    row.floor, row.floor_note = 1.7, "the parts measured alone"
    assert verdict(row) == "at its floor" and check([row]) == []  # 1.8 ≤ 1.7 × 1.1
    assert report.met_text(row).startswith("no: at its floor, 1.70×")
    row.ours = Stat.of([1.9])
    assert verdict(row) == "missed" and "its floor 1.70 (the parts measured alone)" in check([row])[0]


def test_quick_runs_and_rows_without_a_goal_are_not_judged():
    assert verdict(ratio_row(9.0, quick=True)) == "" and check([ratio_row(9.0, quick=True)]) == []
    reference = Result("T3", "a reference", "—", Stat.of([99.0]))
    assert verdict(reference) == "" and check([reference]) == []


def _results_file(tmp_path: Path, rows: list[Result]) -> Path:
    path = tmp_path / "results.json"
    report.merge(path, {"T1": report.run_record(rows, 1.0, (0.5, 0.5, 0.5))}, ["T1"])
    return path


def test_check_from_a_results_file_exits_non_zero_only_on_a_miss(tmp_path, capsys):
    assert cli.main(["--check", "--from", str(_results_file(tmp_path, [ratio_row(1.1)]))]) == 0
    assert cli.main(["--check", "--from", str(_results_file(tmp_path, [ratio_row(1.1), ratio_row(2.0)]))]) == 1
    assert "MISSED: T1 a ratio: 2.00×" in capsys.readouterr().err


def test_rows_survive_the_results_file(tmp_path):
    row = ratio_row(1.8, limit=1.5)
    row.floor, row.floor_note, row.note = 1.7, "parts", "a note"
    (back,) = [r for _, _, r in report.rows_of(report.load_results(_results_file(tmp_path, [row])))]
    assert back == row and back.ratio == row.ratio and verdict(back) == verdict(row)


@pytest.fixture
def tiny_measure(monkeypatch):
    """A real measure, registered for the test: ``ours`` does ``factor`` times the baseline's work, held to
    ``≤ limit×``; timed by the harness and judged by the command line as any other."""
    settings = {"factor": 1, "limit": 1.0}

    def spin(n: int) -> None:
        end = time.perf_counter() + n * 0.002
        while time.perf_counter() < end:
            pass

    def tiny(quick: bool) -> list[Result]:
        base, ours = harness.compare(lambda: spin(1), lambda: spin(settings["factor"]), 5)
        return [ratio_goal(Result("T9", "spin", "one spin", ours, base), settings["limit"], quick, noise=0.10)]

    monkeypatch.setitem(harness.REGISTRY, "T9", ("a tiny measure for the checker's test", tiny))
    return settings


def test_check_runs_the_measures_and_fails_on_a_goal_broken_on_purpose(tiny_measure, tmp_path, capsys):
    out = tmp_path / "run.json"
    tiny_measure.update(factor=10, limit=2.0)  # 10× the work against a goal of 2×: broken on purpose
    assert cli.main(["--only", "T9", "--check", "--json", str(out)]) == 1
    assert "MISSED: T9 spin" in capsys.readouterr().err
    (row,) = json.loads(out.read_text())["measures"]["T9"]["rows"]
    assert row["limit"] == 2.0 and row["ratio"] > 5
    tiny_measure.update(factor=1, limit=3.0)  # the same work against 3×: met
    assert cli.main(["--only", "T9", "--check", "--json", str(out)]) == 0


def test_a_quick_run_cannot_be_checked_or_saved():
    with pytest.raises(SystemExit):
        cli.main(["--quick", "--check"])
    with pytest.raises(SystemExit):
        cli.main(["--quick", "--save"])


# --- the committed results and the README -------------------------------------------------------------------


def test_the_readme_table_is_the_committed_results_file():
    readme = report.README.read_text(encoding="utf-8")
    data = report.load_results()
    assert data["measures"], "tests/benchmarks/results.json is missing or empty: run the benchmarks with --save"
    block = readme[readme.index(report.BEGIN) : readme.index(report.END) + len(report.END)]
    assert block == report.readme_block(data), "the README's table is stale: run python -m tests.benchmarks --readme"


def test_the_committed_results_are_whole_runs_of_every_measure():
    data = report.load_results()
    assert set(data["measures"]) == set(cli.load_measures())
    for measure_id, run in data["measures"].items():
        rows = [Result.from_json(row) for row in run["rows"]]
        assert rows or run.get("failed"), measure_id  # a measure that failed says why (and the README shows it)
        assert all(r.met is not None for r in rows if r.limit is not None), f"{measure_id}: a quick run?"


def test_every_goal_missed_in_the_committed_results_is_explained_in_the_readme():
    readme = report.README.read_text(encoding="utf-8")
    after = readme[readme.index(report.END) :]
    missed = {
        row.id for _, _, row in report.rows_of(report.load_results()) if verdict(row) in ("missed", "at its floor")
    }
    for row_id in missed:
        # a bold lead naming the row, e.g. "- **P4, P4b, P4r** (...): why"
        assert re.search(rf"\*\*[^*]*\b{row_id}\b[^*]*\*\*", after), (
            f"{row_id} misses its goal: the README must say why"
        )
