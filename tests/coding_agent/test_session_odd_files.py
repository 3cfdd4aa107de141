"""Odd session files Pi reads, against what Pi's own ``SessionManager`` computed from them (issue #21, item 2).

``fixtures/pi/sessions/odd/`` (see its README): an entry ``timestamp`` that is a number, on every entry type; a
session name not trimmed; a ``custom_message`` without ``display``. Each is read as Pi reads it (the context,
the path, the tree, the name, the ``/resume`` line) and written back as the file holds it.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.coding_agent.json_lines import dumps_line
from pi_notebook.coding_agent.pi_sessions import read_session_info
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_context import build_session_context
from pi_notebook.coding_agent.session_entries import (
    CompactionEntry,
    CustomMessageEntry,
    SessionWarning,
    UnknownEntry,
    js_date_ms,
)

from .test_session_conformance import compact_tree, exact

ODD = Path(__file__).parent.parent / "fixtures" / "pi" / "sessions" / "odd"
CASES: list[dict[str, Any]] = json.loads((ODD / "expected.json").read_text(encoding="utf-8"))
FILES = sorted({case["file"] for case in CASES})
LISTING: dict[str, dict[str, Any]] = json.loads((ODD / "listing.json").read_text(encoding="utf-8"))


def ours(expected: dict[str, Any]) -> dict[str, Any]:
    """Pi's context as this loader gives it. A custom message built from an entry without ``display`` says
    ``display: false`` here (a ``CustomMessage`` always has the key), where Pi's has none: both mean hidden in the
    UI and sent to the model. The entry itself is written back without one."""
    messages = [
        {**m, "display": False} if m.get("role") == "custom" and "display" not in m else m for m in expected["messages"]
    ]
    return {**expected, "messages": messages}


def open_copy(tmp_path: Path, name: str) -> SessionFile:
    copy = Path(shutil.copyfile(ODD / name, tmp_path / name))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SessionWarning)  # Pi reads these files without a complaint: so do we
        return SessionFile.open(copy)


def pi_lines(name: str) -> dict[str, str]:
    """Each entry's line as Pi wrote it, by id."""
    lines = (ODD / name).read_text(encoding="utf-8").split("\n")
    return {value["id"]: line for line in lines if line and (value := json.loads(line)).get("type") != "session"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['file']}:{c['leafName'] if 'leafId' in c else 'default'}")
def test_read_as_pi_reads_it(case: dict[str, Any], tmp_path: Path) -> None:
    with open_copy(tmp_path, case["file"]) as session:
        if "leafId" in case:
            context = build_session_context(session.entries, case["leafId"])
            session.branch(case["leafId"])
            assert exact(session.build_session_context().to_pi_json()) == exact(context.to_pi_json())
        else:
            context = session.build_session_context()
            assert session.leaf_id == case["leaf"]
            assert compact_tree(session.get_tree()) == case["tree"]
            assert session.session_name == case.get("sessionName")
        assert exact(context.to_pi_json()) == exact(ours(case["expected"]))
        assert [e.id for e in session.get_branch()] == case["path"]
    assert (tmp_path / case["file"]).read_bytes() == (ODD / case["file"]).read_bytes()


@pytest.mark.parametrize("name", FILES)
def test_written_back_as_the_file_holds_it(name: str, tmp_path: Path) -> None:
    """Every entry gives back the line Pi wrote, byte for byte; a copy of the session (Pi's v3 form) is the file
    itself, and a fork into a new file keeps every entry's values."""
    lines = pi_lines(name)
    with open_copy(tmp_path, name) as session:
        assert not any(isinstance(e, UnknownEntry) for e in session.entries)
        assert {e.id: dumps_line(e.to_pi_json()) for e in session.entries} == lines
        copy = session.write_migrated(tmp_path / "copy.jsonl")
        assert copy.read_bytes() == (ODD / name).read_bytes()
        with SessionFile.create(tmp_path / "fork.jsonl") as fork:
            fork.import_entries(e.to_pi_json() for e in session.entries)
    with SessionFile.open(tmp_path / "fork.jsonl", readonly=True) as fork:
        assert {e.id: dumps_line(e.to_pi_json()) for e in fork.entries} == lines


@pytest.mark.parametrize("name", FILES)
def test_resume_lists_it_as_pi_does(name: str) -> None:
    info = read_session_info(ODD / name)
    pi = LISTING[name]
    assert info is not None
    assert (info.message_count, info.first_message, round(info.modified * 1000)) == (
        pi["messageCount"],
        pi["firstMessage"],
        pi["modified"],
    )
    # /resume shows the name trimmed (JS trim: U+FEFF and U+00A0 too). A name that is empty once trimmed is no
    # name here, as in Pi 0.73 (0.58 listed it as "").
    assert (info.name or "") == (pi["name"] or "")


def test_a_numeric_timestamp_keeps_the_compactions_cut(tmp_path: Path) -> None:
    with open_copy(tmp_path, "numeric_timestamps.jsonl") as session:
        compaction = next(e for e in session.entries if e.type == "compaction")
        assert isinstance(compaction, CompactionEntry) and compaction.timestamp == 1772528436045
        sent = [json.dumps(m) for m in session.build_session_context().to_pi_json()["messages"]]
        assert "Plan the refactor." not in "".join(sent)  # compacted: not sent again
        assert sent[0].startswith('{"role": "compactionSummary"') and '"timestamp": 1772528436045' in sent[0]


def test_a_name_comes_back_as_written(tmp_path: Path) -> None:
    with open_copy(tmp_path, "session_name_as_written.jsonl") as session:
        assert session.session_name == " \u00a0Release notes\t\ufeff "
        session.append_session_info("  Renamed  ")  # Pi trims a name when it writes one
        assert session.session_name == "Renamed" and session.entries[-1].to_pi_json()["name"] == "Renamed"


def test_a_missing_display_stays_missing(tmp_path: Path) -> None:
    with open_copy(tmp_path, "custom_message_without_display.jsonl") as session:
        first = next(e for e in session.entries if isinstance(e, CustomMessageEntry))
        assert first.display is None and "display" not in first.to_pi_json()
        message = session.build_session_context().messages[2]
        # As Pi reads it: hidden in the UI (its TUI and export test `if (message.display)`), still sent.
        assert message.role == "custom" and message.display is False


def test_js_date_ms_reads_a_timestamp_as_new_date_does() -> None:
    # Values from Node 20's new Date(value).getTime() (NaN here None).
    assert js_date_ms("2026-03-01T13:01:23.280Z") == 1772370083280
    assert js_date_ms(1772370083280) == 1772370083280
    assert js_date_ms(1772370083280.999) == 1772370083280 and js_date_ms(-1.5) == -1  # cut toward zero
    assert js_date_ms(-0.5) == 0 and js_date_ms(8.64e15) == 8640000000000000
    assert js_date_ms(8.64e15 + 1) is None and js_date_ms(-9e15) is None
    assert js_date_ms(True) == 1 and js_date_ms(False) == 0 and js_date_ms(None) == 0  # JSON null
    for nan in ["not a date", [], {"a": 1}]:
        assert js_date_ms(nan) is None
