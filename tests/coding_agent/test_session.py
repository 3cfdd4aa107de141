"""SessionFile and build_session_context: the rules a user notices, each on a small file built here."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_notebook.agent import BashExecutionMessage, CustomMessage, OpaqueMessage
from pi_notebook.ai import AssistantMessage, TextContent, UserMessage
from pi_notebook.coding_agent.json_lines import dumps_line
from pi_notebook.coding_agent.session import (
    EntryNotFoundError,
    InvalidSessionError,
    SessionClosedError,
    SessionFile,
    SessionLockedError,
    SessionReadOnlyError,
)
from pi_notebook.coding_agent.session_context import build_session_context
from pi_notebook.coding_agent.session_entries import SessionWarning, UnknownEntry, new_entry_id, parse_iso_ms

SESSIONS = Path(__file__).parent.parent / "fixtures" / "pi" / "sessions"
HEADER = {"type": "session", "version": 3, "id": "0b5e1f4e-0000-4000-8000-000000000001", "cwd": "/p"}
EMPTY = {"messages": [], "thinkingLevel": "off", "model": None}
COST = {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.30000000000000004}
USAGE = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3, "cost": COST}


def ts(i: int) -> str:
    return f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}.000Z"


def user(text: str, t: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": t}


def assistant(text: str, provider: str = "anthropic", model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    head = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider}
    return {**head, "model": model, "usage": USAGE, "stopReason": "stop", "timestamp": 2}


def E(kind: str, eid: str | None, parent: str | None, **fields: Any) -> dict[str, Any]:
    """An entry line; ``write`` gives it a timestamp from its position unless it has one."""
    return {"type": kind, "id": eid, "parentId": parent, **fields}


def M(eid: str, parent: str | None, message: dict[str, Any] | str) -> dict[str, Any]:
    """A message entry line; a string is a user message."""
    return E("message", eid, parent, message=user(message) if isinstance(message, str) else message)


def write(path: Path, *lines: Any, end: str = "\n") -> Path:
    out = []
    for i, line in enumerate(lines):
        if isinstance(line, dict) and line.get("type") != "session":
            line = {"timestamp": ts(i), **line}
        out.append(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False))
    path.write_text("\n".join(out) + end, encoding="utf-8")
    return path


def quiet_open(path: Path, **kwargs: Any) -> SessionFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SessionWarning)
        return SessionFile.open(path, **kwargs)


def texts(context: Any) -> list[Any]:
    out = []
    for m in context.to_pi_json()["messages"]:
        content = m.get("content", m.get("summary"))
        out.append(content if isinstance(content, str) else [c.get("text") for c in content])
    return out


def linear(tmp_path: Path, name: str = "s.jsonl") -> Path:
    return write(tmp_path / name, HEADER, M("u1", None, "Hi."), M("a1", "u1", assistant("Yo.")))


# --- creating, appending, reopening ---------------------------------------------------------------------


def test_create_writes_the_header_at_once(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "s.jsonl"
    with SessionFile.create(path, cwd="/work", parent_session="/old.jsonl") as session:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 1
        header = json.loads(lines[0])
        assert list(header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
        assert header["version"] == 3 and header["cwd"] == "/work" and header["id"] == session.session_id
        assert re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", header["id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["timestamp"])
        assert session.leaf_id is None and session.entries == [] and session.cwd == "/work"
    with pytest.raises(FileExistsError):
        SessionFile.create(path)


def fill(session: SessionFile) -> None:
    """One of every entry type, with branches, labels and a name."""
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_thinking_level_change("medium")
    first = session.append_message(UserMessage(content="Hi.", timestamp=1))
    session.append_message(AssistantMessage.model_validate(assistant("Hello.")))
    session.append_message(BashExecutionMessage(command="ls", output="a\nb", exit_code=0, timestamp=3))
    session.append_message({"role": "custom", "customType": "legacy", "content": "old", "timestamp": 4})
    session.append_message({"role": "notification", "text": "raw", "timestamp": 5})
    session.append_custom_entry("ext", {"k": [1, 2.5, None]})
    session.append_custom_entry("ext-no-data")
    session.append_custom_message_entry("note", [{"type": "text", "text": "n"}], False, {"d": 1})
    kept = session.append_message(UserMessage(content=[TextContent(text="More.")], timestamp=6))
    session.append_compaction("summary", kept.id, 1234, details={"readFiles": []}, from_hook=True)
    session.append_label_change(first.id, "start")
    session.append_label_change(kept.id, "kept")
    session.append_label_change(kept.id, None)
    session.append_session_info("  My session  ")
    session.branch_with_summary(first.id, "left a branch", details={"x": 1})
    session.append_message(user("Branched.", 7))
    session.branch_with_summary(None, "from scratch", from_hook=False)
    session.reset_leaf()
    session.append_message(user("New root.", 8))
    session.branch(kept.id)


def test_round_trip_every_entry_type(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionFile.create(path, cwd="/p") as session:
        fill(session)
        before = [e.to_pi_json() for e in session.entries]
        contexts = {e.id: session.build_session_context(e.id).to_pi_json() for e in session.entries}
        label, name, leaf = session.get_label(session.entries[2].id), session.session_name, session.leaf_id
    with SessionFile.open(path) as reopened:
        assert reopened.warnings == []
        assert [e.to_pi_json() for e in reopened.entries] == before
        assert {e.id: reopened.build_session_context(e.id).to_pi_json() for e in reopened.entries} == contexts
        assert reopened.get_label(reopened.entries[2].id) == label == "start"
        assert reopened.session_name == name == "My session"
        assert reopened.leaf_id == reopened.entries[-1].id != leaf  # after a load the leaf is the last entry
        assert len(reopened.get_tree()) == 3  # the first root, the "root" summary, the reset-leaf root
        lines = path.read_text(encoding="utf-8").splitlines()[1:]
        assert lines == [dumps_line(e.to_pi_json()) for e in reopened.entries]  # re-read: identical lines


def test_entry_json_has_pis_shapes(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path / "s.jsonl") as s:
        a = s.append_message(user("x"))
        shapes = {
            "custom": s.append_custom_entry("t"),
            "custom_message": s.append_custom_message_entry("t", "c"),
            "label": s.append_label_change(a.id, None),
            "compaction": s.append_compaction("s", a.id, 5),
            "branch_summary": s.branch_with_summary(a.id, "s"),
            "session_info": s.append_session_info("n"),
        }
    keys = {kind: list(e.to_pi_json()) for kind, e in shapes.items()}
    base = ["type", "id", "parentId", "timestamp"]
    assert keys["custom"] == ["type", "customType", *base[1:]]  # data None: no key
    assert keys["custom_message"] == ["type", "customType", "content", "display", *base[1:]]
    assert keys["label"] == [*base, "targetId"]  # label None: no key, as Pi writes undefined
    assert keys["compaction"] == [*base, "summary", "firstKeptEntryId", "tokensBefore"]
    assert keys["branch_summary"] == [*base, "fromId", "summary"]
    assert keys["session_info"] == [*base, "name"]
    assert a.to_pi_json()["parentId"] is None and list(a.to_pi_json()) == [*base, "message"]


def test_ids_are_8_hex_and_redrawn_on_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    draws = iter(["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(uuid, "uuid4", lambda: type("U", (), {"hex": next(draws) + "0" * 24})())
    assert new_entry_id(set()) == "aaaaaaaa"
    assert new_entry_id({"aaaaaaaa"}) == "bbbbbbbb"


def test_append_message_checks_its_argument(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path / "s.jsonl") as s:
        with pytest.raises(ValueError, match="own entry type"):
            s.append_message({"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 1})
        with pytest.raises(TypeError):
            s.append_message("hello")
        assert s.entries == []
        s.append_message({**assistant("x"), "usage": {**USAGE, "input": float("nan")}})
    assert '"input":null' in (tmp_path / "s.jsonl").read_text()  # NaN is written as null, as JSON.stringify


# --- Pi's loading rules ---------------------------------------------------------------------------------


def test_bom_and_crlf_load_like_plain_lines(tmp_path: Path) -> None:
    expected = quiet_open(linear(tmp_path), readonly=True).build_session_context().to_pi_json()
    path = tmp_path / "bom_crlf.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + linear(tmp_path, "b.jsonl").read_bytes().replace(b"\n", b"\r\n"))
    with SessionFile.open(path) as session:
        assert session.warnings == [] and session.session_id == HEADER["id"]
        assert session.build_session_context().to_pi_json() == expected
        session.append_message(user("after", 9))
    with SessionFile.open(path) as session:
        assert texts(session.build_session_context()) == ["Hi.", ["Yo."], "after"]


def test_unicode_line_separators_inside_strings(tmp_path: Path) -> None:
    tricky = "a\u2028b\u2029c\u0085d\u000b\f\u001c\u0000 😀 e\u0301 שלום 漢字"
    escaped = '{"type":"message","id":"u2","parentId":"u1","timestamp":"x","message":{"role":"user",'
    escaped += '"content":"x\\ud83dy","timestamp":2}}'
    path = write(tmp_path / "u.jsonl", HEADER, M("u1", None, tricky), escaped)
    assert "\u2028".encode() in path.read_bytes()  # raw, as JSON.stringify writes it
    with SessionFile.open(path) as session:
        assert session.warnings == []
        assert texts(session.build_session_context()) == [tricky, "x\ud83dy"]
        session.append_message(user("lone \udc00 and \ud83d surrogates\u2028"))
    data = path.read_bytes()
    data.decode("utf-8")  # still valid UTF-8
    assert b"\\udc00" in data and b"\\ud83d" in data and "\u2028".encode() in data
    with SessionFile.open(path) as session:
        assert texts(session.build_session_context())[-1] == "lone \udc00 and \ud83d surrogates\u2028"


def test_blank_malformed_and_non_entry_lines_are_skipped_with_warnings(tmp_path: Path) -> None:
    junk = ['{"type":"message","id":', "plain text", "{'type': 'message'}", "null", "42", '"a string"']
    junk += ["[1, 2]", "{}", '{"type": 1, "id": "x"}', json.dumps(E("custom", None, "u1", customType="?"))]
    junk += [json.dumps(E("message", "m0", "u1")), '{"type":"message","id":"n","message":{"content":NaN}}']
    lines = ["", HEADER, " \t ", M("u1", None, "Hi."), *junk, M("a1", "u1", "!"), "", ""]
    with pytest.warns(SessionWarning) as caught:
        session = SessionFile.open(write(tmp_path / "m.jsonl", *lines), readonly=True)
    assert [e.id for e in session.entries] == ["u1", "a1"]
    assert texts(session.build_session_context()) == ["Hi.", "!"]
    assert [w.split(":")[0] for w in session.warnings] == [f"line {n}" for n in range(5, 17)]
    assert "null is not an entry object" in session.warnings[3]
    assert "without a message" in session.warnings[10] and "NaN is not JSON" in session.warnings[11]
    assert len(caught) == 12


def test_first_parsed_line_must_be_the_header(tmp_path: Path) -> None:
    ok = write(tmp_path / "ok.jsonl", '{"type":"session","id":', HEADER, M("u1", None, "Hi."))
    assert [e.id for e in quiet_open(ok, readonly=True).entries] == ["u1"]
    for name, first in [("no_id", {"type": "session", "id": 7}), ("entry", M("u0", None, "?"))]:
        path = write(tmp_path / f"{name}.jsonl", first, M("u1", None, "Hi."))
        before = path.read_bytes()
        with pytest.warns(SessionWarning, match="not a session header"), SessionFile.open(path) as session:
            assert session.entries == [] and session.leaf_id is None and session.header is None
            assert session.build_session_context().to_pi_json() == EMPTY
            with pytest.raises(InvalidSessionError, match="no valid session header"):
                session.append_message(user("lost?"))
        assert path.read_bytes() == before  # Pi would have overwritten it with a fresh header
    (tmp_path / "e.jsonl").write_text("\n \n")
    with pytest.warns(SessionWarning, match="empty"), SessionFile.open(tmp_path / "e.jsonl") as session:
        assert session.entries == []
    with pytest.raises(FileNotFoundError):
        SessionFile.open(tmp_path / "missing.jsonl")
    assert not (tmp_path / "missing.jsonl").exists()


def test_duplicate_header_ignored_and_duplicate_ids_reported(tmp_path: Path) -> None:
    other = {**HEADER, "id": "another-session"}
    path = write(tmp_path / "d.jsonl", HEADER, M("u1", None, "a"), HEADER, M("u1", None, "b"), other)
    session = quiet_open(path, readonly=True)
    assert len(session.entries) == 2 and session.get_entry("u1").message.content == "b"
    assert session.get_entry("u1@2").message.content == "a"  # the earlier copy, renamed in memory
    assert session.warnings[0].startswith("line 3: repeats line 1 exactly")  # the same header again
    assert "'u1' was already used on line 2" in session.warnings[1]
    assert "second session header" in session.warnings[2]


def test_missing_parent_makes_a_root(tmp_path: Path) -> None:
    session = quiet_open(write(tmp_path / "p.jsonl", HEADER, M("u1", None, "a"), M("a2", "gone", "b")))
    assert [n.entry.id for n in session.get_tree()] == ["u1", "a2"]
    assert [e.id for e in session.get_branch()] == ["a2"] and "missing" in session.warnings[0]


def test_cycles_and_self_parents_terminate(tmp_path: Path) -> None:
    lines = [M("a", "b", "a"), M("b", "a", "b"), M("s", "s", "self"), M("c", "s", "child of self")]
    with pytest.warns(SessionWarning, match="cycle|own parent"):
        session = SessionFile.open(write(tmp_path / "c.jsonl", HEADER, *lines), readonly=True)
    assert any("cycle 'a' -> 'b' -> 'a'" in w for w in session.warnings)
    assert any("'s' is its own parent" in w for w in session.warnings)
    with pytest.warns(SessionWarning, match="cycle"):
        assert [e.id for e in session.get_branch("b")] == ["a", "b"]
        assert [e.id for e in session.get_branch("c")] == ["s", "c"]
        assert texts(build_session_context(session.entries, "a")) == ["b", "a"]
    tree = session.get_tree()  # nothing lost: the cycle is cut at its first entry
    assert [n.entry.id for n in tree] == ["s", "a"] and [n.entry.id for n in tree[1].children] == ["b"]


def test_unknown_and_invalid_entries_and_roles_are_kept_raw(tmp_path: Path) -> None:
    odd = {**E("future_kind", "f1", "u1", payload={"a": [1, 2.0]}, hint=None), "timestamp": ts(2)}
    bad = {**E("model_change", "m1", "f1", provider="x"), "timestamp": ts(3)}  # no modelId
    note = {"role": "notification", "text": "done", "level": "info", "timestamp": 5}
    path = write(tmp_path / "x.jsonl", HEADER, M("u1", None, "a"), odd, bad, M("n1", "m1", note))
    session = quiet_open(path, readonly=True)
    f1, m1 = session.get_entry("f1"), session.get_entry("m1")
    assert isinstance(f1, UnknownEntry) and f1.to_pi_json() == odd and f1.type == "future_kind"
    assert isinstance(m1, UnknownEntry) and "invalid 'model_change'" in m1.reason and m1.to_pi_json() == bad
    assert [e.id for e in session.get_branch()] == ["u1", "f1", "m1", "n1"]
    assert isinstance(session.get_entry("n1").message, OpaqueMessage)
    context = session.build_session_context()
    assert context.to_pi_json()["messages"] == [user("a"), note] and context.model is None


# --- migrations -----------------------------------------------------------------------------------------


def test_v2_migrates_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    path.write_bytes((SESSIONS / "v2_migration.jsonl").read_bytes())
    before = path.read_bytes()
    with SessionFile.open(path) as session:
        assert session.file_version == 2 and session.header.version == 3 and session.warnings == []
        assert isinstance(session.build_session_context().messages[1], CustomMessage)
        copy = session.write_migrated(tmp_path / "v3.jsonl")
        with pytest.raises(FileExistsError):
            session.write_migrated(copy)
        session.append_message(user("v2 files have ids, so appending is fine"))
    assert path.read_bytes().startswith(before) and b"hookMessage" in path.read_bytes()
    assert b'"version":3' in copy.read_bytes() and b"hookMessage" not in copy.read_bytes()
    with SessionFile.open(copy) as migrated:
        assert migrated.file_version == 3 and migrated.warnings == []
        assert migrated.build_session_context().to_pi_json()["messages"][1]["role"] == "custom"


def test_v1_migrates_in_memory_only(tmp_path: Path) -> None:
    hook = {**user("hook"), "role": "hookMessage", "customType": "h", "display": True}
    compaction = {"type": "compaction", "summary": "S", "firstKeptEntryIndex": 3, "tokensBefore": 9}
    lines = [{"type": "message", "message": m} for m in (user("one"), assistant("two"), user("three"), hook)]
    lines.insert(1, "not json")  # not a parsed line: firstKeptEntryIndex does not count it
    header = {"type": "session", "id": "v1-session", "cwd": "/p"}
    lines += [compaction, {"type": "message", "message": user("after")}]
    path = write(tmp_path / "v1.jsonl", header, *lines)
    before = path.read_bytes()
    with quiet_open(path) as session:
        assert session.file_version == 1 and session.header.version == 3
        ids = [e.id for e in session.entries]
        assert len(set(ids)) == 6 and all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
        assert [e.parent_id for e in session.entries] == [None, *ids[:-1]]
        assert session.entries[4].first_kept_entry_id == ids[2]  # index 3 counts the header: "three"
        assert "firstKeptEntryIndex" not in session.entries[4].to_pi_json()
        context = session.build_session_context()
        roles = [m["role"] for m in context.to_pi_json()["messages"]]
        assert roles == ["compactionSummary", "user", "custom", "user"]
        assert texts(context) == ["S", "three", "hook", "after"]
        with pytest.raises(InvalidSessionError, match="v1"):
            session.append_message(user("no"))
        copy = session.write_migrated(tmp_path / "v3.jsonl")
    assert path.read_bytes() == before
    with SessionFile.open(copy) as migrated:
        assert [e.id for e in migrated.entries] == ids
        assert migrated.build_session_context().to_pi_json() == context.to_pi_json()


def test_header_without_version_is_read_as_v1(tmp_path: Path) -> None:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    branched = [M("u1", None, "q"), M("a1", "u1", assistant("first")), M("a2", "u1", assistant("second"))]
    session = quiet_open(write(tmp_path / "h.jsonl", header, *branched), readonly=True)
    assert [e.id for e in session.entries] != ["u1", "a1", "a2"]  # regenerated, as Pi does
    assert texts(session.build_session_context()) == ["q", ["first"], ["second"]]  # flattened into one path
    assert len(session.get_tree()) == 1


# --- the context ----------------------------------------------------------------------------------------


def test_leaf_semantics_of_build_session_context(tmp_path: Path) -> None:
    entries = quiet_open(linear(tmp_path), readonly=True).entries
    assert build_session_context(entries, None).to_pi_json() == EMPTY
    full = build_session_context(entries).to_pi_json()
    assert build_session_context(entries, "zzzzzzzz").to_pi_json() == full
    assert build_session_context(entries, "").to_pi_json() == full
    assert texts(build_session_context(entries, "u1")) == ["Hi."]
    assert build_session_context([]).to_pi_json() == EMPTY


def test_compaction_edge_cases(tmp_path: Path) -> None:
    def compaction(eid: str, parent: str, summary: str, kept: str, **extra: Any) -> dict[str, Any]:
        return E("compaction", eid, parent, summary=summary, firstKeptEntryId=kept, tokensBefore=10, **extra)

    lines = [E("thinking_level_change", "t1", None, thinkingLevel="high"), M("u1", "t1", "one")]
    lines += [M("u2", "u1", "two")]
    lines += [compaction("c1", "u2", "S1", "u2"), M("u3", "c1", "three")]
    lines += [compaction("c2", "u3", "S2", "u1", fromHook=True), compaction("c3", "c2", "S3", "nope")]
    lines += [M("u4", "c3", "four"), compaction("c4", "u4", "S4", "u4", timestamp="not a date")]
    session = quiet_open(write(tmp_path / "c.jsonl", HEADER, *lines), readonly=True)
    c2 = build_session_context(session.entries, "c2")  # keeps from before c1, so c1 adds nothing
    assert texts(c2) == ["S2", "one", "two", "three"] and c2.thinking_level == "high"
    assert texts(build_session_context(session.entries, "u4")) == ["S3", "four"]  # unknown id: nothing kept
    last = session.build_session_context()  # c4 keeps only its parent and is itself the leaf
    assert texts(last) == ["S4", "four"]
    assert last.to_pi_json()["messages"][0] == {
        "role": "compactionSummary",
        "summary": "S4",
        "tokensBefore": 10,
        "timestamp": None,  # Date.parse gives NaN, which JSON writes as null
    }


def test_branch_summaries_custom_messages_and_models(tmp_path: Path) -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    legacy = {"role": "custom", "customType": "legacy", "content": "old", "display": True, "timestamp": 1}
    lines = [E("model_change", "m1", None, provider="openai", modelId="gpt-5.1")]
    lines += [M("a1", "m1", assistant("x", provider="google", model="gemini"))]
    lines += [E("branch_summary", "b1", "a1", fromId="a1", summary="")]
    lines += [E("branch_summary", "b2", "b1", fromId="a1", summary="went elsewhere", details={"f": []})]
    note = {"customType": "t", "content": [{"type": "text", "text": "hi"}, image], "display": False}
    lines += [E("custom_message", "n1", "b2", **note, details={"k": 1})]
    lines += [E("custom_message", "n2", "n1", customType="t", content=[], display=True)]
    lines += [E("custom", "x1", "n2", customType="state", data={"s": 1}), M("l1", "x1", legacy)]
    context = quiet_open(write(tmp_path / "b.jsonl", HEADER, *lines), readonly=True).build_session_context()
    ms = lambda i: parse_iso_ms(ts(i))  # noqa: E731
    assert context.model == {"provider": "google", "modelId": "gemini"}
    assert context.to_pi_json()["messages"][1:] == [
        {"role": "branchSummary", "summary": "went elsewhere", "fromId": "a1", "timestamp": ms(4)},
        {"role": "custom", **note, "details": {"k": 1}, "timestamp": ms(5)},
        {"role": "custom", "customType": "t", "content": [], "display": True, "timestamp": ms(6)},
        legacy,
    ]


def test_date_parse_matches_javascript() -> None:
    # Values from Node 20's Date.parse.
    assert parse_iso_ms("2026-03-01T13:01:23.280Z") == 1772370083280
    assert parse_iso_ms("2026-03-01T13:01:23.2801234Z") == 1772370083280
    assert parse_iso_ms("2026-03-01") == 1772323200000 and parse_iso_ms("2026") == 1767225600000
    assert parse_iso_ms("2026-02-31T00:00:00Z") == 1772496000000  # V8 rolls the day over
    assert parse_iso_ms("2026-03-01T24:00:00Z") == 1772409600000
    assert parse_iso_ms("+002026-03-01T00:00:00Z") == 1772323200000
    assert parse_iso_ms("2026-03-01T13:01:23+01:00") == 1772366483000
    for bad in [
        "2026-02-32T00:00:00Z",
        "2026-03-01T24:00:01Z",
        "-000000-01-01T00:00:00Z",
        "٢٠٢٦-03-01",
        None,
    ]:
        assert parse_iso_ms(bad) is None


# --- the tree, the leaf, labels, names ------------------------------------------------------------------


def test_branch_reset_leaf_and_branch_with_summary(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path / "s.jsonl") as s:
        u1 = s.append_message(user("q"))
        s.append_message(assistant("a"))
        s.branch(u1.id)
        other = s.append_message(assistant("b"))
        assert other.parent_id == u1.id and s.leaf_id == other.id
        with pytest.raises(EntryNotFoundError, match="zzzzzzzz") as error:
            s.branch("zzzzzzzz")
        assert isinstance(error.value, KeyError)
        summary = s.branch_with_summary(u1.id, "tried b")
        assert (summary.parent_id, summary.from_id, s.leaf_id) == (u1.id, u1.id, summary.id)
        assert texts(s.build_session_context()) == ["q", "tried b"]
        new_root = s.branch_with_summary(None, "fresh start", details={"d": 1}, from_hook=True)
        assert new_root.parent_id is None and new_root.from_id == "root" and new_root.to_pi_json()["fromHook"]
        s.reset_leaf()
        assert s.build_session_context().messages == []
        root = s.append_message(user("again"))
        assert root.parent_id is None and [e.id for e in s.get_branch()] == [root.id]
        assert [n.entry.id for n in s.get_tree()] == [u1.id, new_root.id, root.id]


def test_tree_children_sorted_by_timestamp(tmp_path: Path) -> None:
    late, early = {**M("late", "u1", "later clock"), "timestamp": ts(9)}, M("early", "u1", "earlier clock")
    tree = quiet_open(write(tmp_path / "t.jsonl", HEADER, M("u1", None, "q"), late, early, M("r2", None, "")))
    assert [n.entry.id for n in tree.get_tree()] == ["u1", "r2"]  # roots stay in file order
    assert [n.entry.id for n in tree.get_tree()[0].children] == ["early", "late"]


def test_labels_and_session_name(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path / "s.jsonl") as s:
        a = s.append_message(user("q"))
        assert s.session_name is None
        s.append_session_info("  Cats  ")
        s.append_session_info("   ")  # stored as "", skipped
        assert s.session_name == "Cats" and s.entries[-1].name == ""
        s.append_label_change(a.id, "start")
        assert s.get_label(a.id) == "start" and s.get_tree()[0].label == "start"
        s.append_label_change(a.id, "beginning")
        assert s.get_label(a.id) == "beginning"
        s.append_label_change(a.id, "")
        assert s.get_label(a.id) is None and s.entries[-1].to_pi_json()["label"] == ""
        s.append_label_change(a.id, "again")
        s.append_label_change(a.id, None)
        assert s.get_label(a.id) is None and "label" not in s.entries[-1].to_pi_json()
        with pytest.raises(EntryNotFoundError):
            s.append_label_change("nope", "x")
        assert s.get_branch()[-1].type == "label"  # label entries sit on the path


# --- writing safely -------------------------------------------------------------------------------------


def test_truncated_last_line_then_append_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes((SESSIONS / "truncated_last_line.jsonl").read_bytes())
    before = path.read_bytes()
    assert not before.endswith(b"\n")
    with quiet_open(path) as session:
        old = [e.to_pi_json() for e in session.entries]
        new = session.append_message(user("after the crash"))
    assert path.read_bytes().startswith(before + b"\n")
    with quiet_open(path) as session:
        assert [e.to_pi_json() for e in session.entries] == [*old, new.to_pi_json()]
        assert len(session.warnings) == 1 and session.warnings[0].startswith("line 7:")


def test_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionFile.create(path)
    with pytest.raises(SessionLockedError, match="readonly=True"):
        SessionFile.open(path)  # flock is per open file description: the same process conflicts too
    script = f"from pi_notebook.coding_agent.session import SessionFile; SessionFile.open({str(path)!r})"
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert other.returncode != 0 and "SessionLockedError" in other.stderr
    with SessionFile.open(path, readonly=True) as reader:  # readers never lock
        assert reader.session_id == writer.session_id
    writer.close()
    with SessionFile.open(path) as again:
        again.append_message(user("x"))
    dropped = SessionFile.open(path)  # the context manager released it
    del dropped
    gc.collect()
    SessionFile.open(path).close()  # garbage collection released it


def test_readonly_and_closed_refuse_appends(tmp_path: Path) -> None:
    path = linear(tmp_path)
    before = path.read_bytes()
    reader = SessionFile.open(path, readonly=True)
    with pytest.raises(SessionReadOnlyError):
        reader.append_message(user("x"))
    with pytest.raises(SessionReadOnlyError):
        reader.append_label_change("u1", "l")
    with pytest.raises(SessionReadOnlyError):
        reader.branch_with_summary("u1", "s")
    assert reader.leaf_id == "a1"  # the refused branch_with_summary did not move the leaf
    reader.branch("u1")  # moving the leaf is fine
    assert texts(reader.build_session_context()) == ["Hi."]
    writer = SessionFile.open(path)
    writer.close()
    with pytest.raises(SessionClosedError):
        writer.append_session_info("x")
    assert path.read_bytes() == before


# --- property: whatever is appended comes back ----------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=()), max_size=20)  # surrogates and U+2028 included


def bash(command: str, output: str, code: int | None, exclude: bool | None) -> dict[str, Any]:
    message = {"role": "bashExecution", "command": command, "output": output, "exitCode": code}
    message |= {"cancelled": code is None, "truncated": False, "timestamp": 3}
    return message if exclude is None else {**message, "excludeFromContext": exclude}


def custom(content: str, details: Any) -> dict[str, Any]:
    return {"role": "custom", "customType": "ext", "content": content, "display": True, "details": details}


MESSAGES = st.one_of(
    st.builds(user, TEXT, st.integers(0, 2**45)),
    st.builds(assistant, TEXT, st.sampled_from(["anthropic", "openai"])),
    st.builds(bash, TEXT, TEXT, st.none() | st.integers(0, 255), st.none() | st.booleans()),
    st.builds(custom, TEXT, st.none() | st.floats(allow_nan=False) | st.integers() | TEXT),
)
OPS = st.lists(
    st.tuples(st.sampled_from(["message"] * 3 + ["branch", "reset", "thinking", "label"]), MESSAGES, TEXT),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, picks=st.randoms(use_true_random=False))
def test_appends_round_trip(tmp_path_factory: pytest.TempPathFactory, ops: list[Any], picks: Any) -> None:
    path = tmp_path_factory.mktemp("prop") / "s.jsonl"
    with SessionFile.create(path) as session:
        for op, message, text in ops:
            ids = [e.id for e in session.entries]
            if op == "branch" and ids:
                session.branch(picks.choice(ids))
            elif op == "reset":
                session.reset_leaf()
            elif op == "thinking":
                session.append_thinking_level_change(text)
            elif op == "label" and ids:
                session.append_label_change(picks.choice(ids), text)
            else:
                session.append_message({**message, "timestamp": 5} if "timestamp" not in message else message)
        written = [e.to_pi_json() for e in session.entries]
        leaves = [None, *(e.id for e in session.entries)]
        contexts = [session.build_session_context(leaf).to_pi_json() for leaf in leaves]
        default = build_session_context(session.entries).to_pi_json()  # at the last entry
    with SessionFile.open(path) as reopened:
        assert reopened.warnings == []
        assert [e.to_pi_json() for e in reopened.entries] == written
        assert [reopened.build_session_context(leaf).to_pi_json() for leaf in leaves] == contexts
        assert reopened.build_session_context().to_pi_json() == default


def test_json_line_writes_the_standard_encoders_text_and_falls_back_where_pydantic_core_cannot():
    from pi_notebook.coding_agent.json_lines import _standard_line as _dumps_line
    from pi_notebook.coding_agent.json_lines import json_line

    values = [
        {"a": [1, 2.5, -0.0, 1e21, 3e-6, 12345678901234567890123, True, None], "é": "x\u2028y\u0000\u001f\u007f"},
        {"text": "NaN and Infinity are words here"},  # the fallback path: the same text
        [{"nested": {"deep": ["😀", "שלום", "e\u0301"]}}],
    ]
    for value in values:
        line = json_line(value)
        assert line.endswith(b"\n") and json.loads(line) == json.loads(_dumps_line(value))
        assert line == (dumps_line(value) + "\n").encode()
    assert json_line({"s": "lone \udc00"}) == b'{"s":"lone \\udc00"}\n'  # pydantic-core refuses: escaped as JS does
    with pytest.raises(ValueError):
        json_line({"n": float("nan")})
    with pytest.raises(TypeError):
        json_line({"p": object()})
