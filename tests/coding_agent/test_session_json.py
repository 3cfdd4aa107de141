"""The session reader's fast path (``coding_agent/session_json.py``, #27 item 4) gives exactly what the standard
path gives: the same entries, warnings, contexts and typed messages (class, every field, explicit nulls, unknown
keys, which fields were set), on every Pi fixture session and on damaged lines, with the fast path on and off."""

from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from pi_notebook.agent_core import OpaqueMessage, register_message_type
from pi_notebook.ai import PiModel
from pi_notebook.coding_agent import session_entries
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionMessageEntry
from pi_notebook.coding_agent.session_json import message_from_line

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi" / "sessions"
SESSIONS = sorted(FIXTURES.rglob("*.jsonl"))

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}'
USAGE = (
    '"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
)


def _entry(entry_id: str, parent: str | None, message: str, extra: str = "") -> str:
    parent_json = "null" if parent is None else f'"{parent}"'
    return (
        f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},'
        f'"timestamp":"2026-01-01T00:00:01.000Z"{extra},"message":{message}}}'
    )


# Damaged and unusual lines, each kept or skipped by rules the fast path must not change.
DAMAGED = [
    HEADER,
    _entry("a1", None, '{"role":"user","content":"hello","timestamp":1}'),
    _entry("a2", "a1", '{"role":"user","content":"first","content":"second","timestamp":2}'),  # duplicate key
    _entry("a3", "a2", '{"role":"user","content":"lone \\ud800 surrogate","timestamp":3}'),  # jiter refuses it
    _entry("a4", "a3", '{"role":"user","content":"x","timestamp":NaN}'),  # not JSON: skipped
    _entry("a5", "a4", '{"role":"user","content":"big","timestamp":123456789012345678901234567890}'),
    _entry("a6", "a5", '{"role":"user","content":"huge","timestamp":1e400}'),
    _entry(
        "a7",
        "a6",
        '{"role":"assistant","content":[{"type":"text","text":"hi","textSignature":null},'
        '{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"f","path":"g","n":0.1}}],'
        f'"api":"anthropic-messages","provider":"anthropic","model":"m",{USAGE},"stopReason":"toolUse",'
        '"timestamp":7,"responseId":"r1","unknown":null}',
    ),
    _entry(
        "a8", "a7", '{"role":"toolResult","toolCallId":"t1","toolName":"read","content":7,"timestamp":8}'
    ),  # invalid
    _entry("a9", "a8", '{"role":"noSuchRole","text":"kept as written","timestamp":9}'),  # unknown role
    _entry("b1", "a9", '"a message that is a string"'),  # not a message entry
    _entry("b2", "b1", '{"role":"user","content":"ok","timestamp":10}', ',"type":"message","id":"b2"'),  # repeats
    '{"type":"message","id":"b3","parentId":"b2","message":{"role":"user","content":"cut off',  # truncated
    _entry(
        "b4",
        "b2",
        '{"role":"bashExecution","command":"ls","output":"","exitCode":null,"cancelled":true,'
        '"truncated":"yes","timestamp":11}',
    ),
    _entry("b4", "b4", '{"role":"user","content":"the same id again","timestamp":12}'),  # a second b4
    _entry("b5", "b4", '{"role":"user","content":' + "[" * 3000 + "]" * 3000 + ',"timestamp":13}'),  # deep
    _entry("b6", "b5", '{"role":"custom","customType":"c","content":"x","display":1,"timestamp":14}'),
    _entry("b7", "b6", '{"role":"user","content":"caf\u00e9 \\u00e9 \\ud83d\\ude00 \u2028","timestamp":15}'),
    "[1, 2, 3]",
    _entry("b8", "zz", '{"role":"user","content":"Infinity and NaN are words here","timestamp":16}'),
]


def _load(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Everything a reader sees of the file, read with the fast path on or off."""
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(session_entries, "message_from_line", lambda line, role: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            session = SessionFile.open(path, readonly=True)
            try:
                entries = session.entries
                messages = [e.message for e in entries if isinstance(e, SessionMessageEntry)]
                context = session.build_session_context()
                seen = {
                    "entries": [(type(e).__name__, e.id, e.parent_id, e.to_pi_json()) for e in entries],
                    "messages": messages,
                    "context": context.messages,
                    "entry_ids": context.entry_ids,
                    "session warnings": list(session.warnings),
                }
            finally:
                session.close()
    seen["warnings"] = [str(w.message).replace(str(path), "<file>") for w in caught]
    return seen


def same(a: Any, b: Any, where: str = "$") -> None:
    """``a`` and ``b`` are the same value: same classes all the way down, same fields, explicit nulls, unknown
    keys, fields set and private state; floats equal (NaN to NaN)."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, BaseModel):
        assert list(a.__dict__) == list(b.__dict__), where
        for key in a.__dict__:
            same(a.__dict__[key], b.__dict__[key], f"{where}.{key}")
        same(a.__pydantic_extra__, b.__pydantic_extra__, f"{where}(extra)")
        assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__, where
        assert a.__pydantic_private__ == b.__pydantic_private__, where
        assert a.to_pi_json() == b.to_pi_json() if isinstance(a, PiModel) else a == b, where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            same(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{index}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, (where, a, b)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_pi_fixture_session_reads_the_same_with_the_fast_path(path, tmp_path, monkeypatch):
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    same(_load(copy, True, monkeypatch), _load(copy, False, monkeypatch))


def test_damaged_lines_read_the_same_with_the_fast_path(tmp_path, monkeypatch):
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(DAMAGED) + "\n", encoding="utf-8")
    fast, standard = _load(path, True, monkeypatch), _load(path, False, monkeypatch)
    same(fast, standard)
    # The file really exercises the rules: skipped lines, an invalid and an unknown role kept opaque, repeats.
    assert len(fast["warnings"]) >= 5
    assert sum(isinstance(m, OpaqueMessage) for m in fast["messages"]) == 2
    assert [m.content for m in fast["messages"][:2]] == ["hello", "second"]


def test_the_fast_path_types_most_lines_itself_and_leaves_the_rest_to_the_standard_path(tmp_path):
    lines = [line.encode() for line in DAMAGED]
    typed = [message_from_line(line, "user") for line in lines[1:3]]
    assert [m.content for m in typed] == ["hello", "second"]
    assert message_from_line(lines[3], "user") is None  # the lone surrogate: JSON.parse's decoder decides
    assert message_from_line(lines[8], "toolResult") is None  # invalid: the standard path warns and keeps it
    assert message_from_line(lines[9], "noSuchRole") is None  # unknown role: opaque


def test_a_role_registered_later_is_typed_by_the_fast_path(tmp_path):
    line = _entry("c1", None, '{"role":"benchFastPathNote","text":"later","timestamp":1}').encode()
    assert message_from_line(line, "benchFastPathNote") is None  # unknown yet

    class BenchFastPathNote(PiModel):
        role: Literal["benchFastPathNote"] = "benchFastPathNote"
        text: str
        timestamp: int = 0

    register_message_type(BenchFastPathNote, replace=True)
    typed = message_from_line(line, "benchFastPathNote")
    assert type(typed) is BenchFastPathNote and typed.text == "later"
