"""Issue #11, items 1, 4 and 13, and Pi's duplicated files: what a damaged or raced session file costs.

Each test reproduces what a user saw, with real session files written by ``SessionFile`` (damaged afterwards
the way a crash, a second writer or Pi itself damages them), and checks what the user notices: nothing
recorded is lost, the context the LLM gets, and the warning that explains it.
"""

from __future__ import annotations

import json
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.agent_core import OpaqueMessage, convert_to_llm
from pi_notebook.coding_agent.messages import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    CompactionSummaryMessage,
    CustomMessage,
)
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_context import build_session_context
from pi_notebook.coding_agent.session_entries import SessionWarning

# --- helpers --------------------------------------------------------------------------------------------


def user(text: str, ts: int = 1_772_400_000_000) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(text: str, ts: int = 1_772_400_000_001) -> dict[str, Any]:
    usage = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12}
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": usage,
        "stopReason": "stop",
        "timestamp": ts,
    }


def llm_texts(messages: list[Any]) -> list[str]:
    """What the LLM reads, one string per LLM message (text blocks joined)."""
    out = []
    for m in convert_to_llm(messages):
        content = m.content
        out.append(content if isinstance(content, str) else "".join(getattr(c, "text", "") for c in content))
    return out


def open_recording(path: Path, **kwargs: Any) -> tuple[SessionFile, list[str]]:
    """Open ``path``; return the session and the texts of the SessionWarnings that were raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = SessionFile.open(path, **kwargs)
    return session, [str(w.message) for w in caught if issubclass(w.category, SessionWarning)]


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines), encoding="utf-8")


def conversation(path: Path, turns: int) -> list[str]:
    """A Pi-like session: model and thinking level, then ``turns`` user/assistant pairs. Returns the ids."""
    with SessionFile.create(path, cwd="/project") as session:
        ids = [session.append_model_change("anthropic", "claude-sonnet-4-5").id]
        ids.append(session.append_thinking_level_change("medium").id)
        for n in range(1, turns + 1):
            ids.append(session.append_message(user(f"question {n}")).id)
            ids.append(session.append_message(assistant(f"answer {n}")).id)
    return ids


# --- item 1: appends from several threads -------------------------------------------------------------


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Let threads switch very often, as a loaded kernel does: the race shows within a few hundred appends."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def test_concurrent_appends_stay_on_one_branch_in_each_threads_order(tmp_path: Path, busy_switching: None) -> None:
    threads_n, per_thread = 4, 1500  # the 6,000 messages
    path = tmp_path / "threads.jsonl"
    session = SessionFile.create(path, cwd="/project")
    start = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                session.append_message(user(f"t{t}-{i}"))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    session.close()
    assert errors == []

    reopened, raised = open_recording(path, readonly=True)
    assert raised == []
    entries = reopened.entries
    assert len(entries) == threads_n * per_thread and len({e.id for e in entries}) == len(entries)
    # One branch: no entry has two children, and the leaf's path holds every message.
    parents = [e.parent_id for e in entries]
    assert len(set(parents)) == len(parents), f"{len(parents) - len(set(parents))} entries share a parent"
    texts = [e.message.content for e in reopened.get_branch()]
    assert len(texts) == threads_n * per_thread
    for t in range(threads_n):  # each thread's messages in the order it appended them
        assert [x for x in texts if x.startswith(f"t{t}-")] == [f"t{t}-{i}" for i in range(per_thread)]
    assert llm_texts(reopened.build_session_context().messages) == texts


def test_concurrent_records_through_the_notebook_session_reach_one_branch(tmp_path: Path, busy_switching: None) -> None:
    """``pi_notebook.record`` from threads: the kernel's file keeps every message on one branch."""
    from pi_notebook.notebook.config import PiNotebook
    from pi_notebook.notebook.kernel import NotebookSession

    path = tmp_path / "kernel.jsonl"
    notebook = NotebookSession(SessionFile.create(path, cwd="/project"), PiNotebook())
    threads_n, per_thread = 3, 400
    start = threading.Barrier(threads_n)

    def work(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            notebook.record(CustomMessage(custom_type="probe", content=f"t{t}-{i}", timestamp=i))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    notebook.file.close()

    reopened, raised = open_recording(path, readonly=True)
    assert raised == []
    on_branch = [m.content for m in reopened.build_session_context().messages]
    assert sorted(on_branch) == sorted(f"t{t}-{i}" for t in range(threads_n) for i in range(per_thread))
    for t in range(threads_n):
        assert [x for x in on_branch if x.startswith(f"t{t}-")] == [f"t{t}-{i}" for i in range(per_thread)]


def test_branch_with_summary_from_another_thread_is_atomic(tmp_path: Path, busy_switching: None) -> None:
    """Moving the leaf and appending the summary is one step: a concurrent append never lands in between."""
    path = tmp_path / "summary.jsonl"
    session = SessionFile.create(path, cwd="/project")
    anchor = session.append_message(user("anchor"))
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            session.append_message(user("noise"))

    worker = threading.Thread(target=chatter)
    worker.start()
    try:
        summaries = [session.branch_with_summary(anchor.id, f"summary {n}") for n in range(300)]
    finally:
        stop.set()
        worker.join()
    session.close()
    assert all(s.parent_id == anchor.id for s in summaries)


# --- item 4: a corrupt line in the middle --------------------------------------------------------------


def test_corrupt_middle_line_costs_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    ids = conversation(path, turns=3)
    lines = lines_of(path)
    torn = 1 + ids.index(ids[4]) + 1  # the line of "question 2" (the header is line 1)
    lines[torn - 1] = lines[torn - 1][: len(lines[torn - 1]) // 2]  # a torn write, as after a crash
    write_lines(path, lines)
    before = path.read_bytes()

    session, raised = open_recording(path)
    context = session.build_session_context()
    assert llm_texts(context.messages) == ["question 1", "answer 1", "answer 2", "question 3", "answer 3"]
    assert context.thinking_level == "medium"  # set before the damage, still in force after it
    assert context.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert len(raised) == 1 and raised == [f"{path}: {w}" for w in session.warnings]
    assert session.warnings[0].startswith(f"line {torn}: not valid JSON")
    assert f"line {torn + 1}" in session.warnings[0] and repr(ids[3]) in session.warnings[0]
    assert "re-attached" in session.warnings[0]
    assert [len(r.children) for r in session.get_tree()] == [1]  # one tree, not two
    # The file is never rewritten, and the entry still says what the file says.
    assert path.read_bytes() == before
    orphan = session.get_entry(ids[5])
    assert orphan.parent_id == ids[3] and orphan.to_pi_json()["parentId"] == ids[4]
    assert json.loads(lines[torn]) == orphan.to_pi_json()
    # Pi's own function over these entries gives the same context.
    assert build_session_context(session.entries).to_pi_json() == context.to_pi_json()

    # Recording goes on after the repair, and the next load gives the same history plus the new message.
    session.append_message(user("question 4"))
    session.close()
    again, _ = open_recording(path, readonly=True)
    assert llm_texts(again.build_session_context().messages)[-2:] == ["answer 3", "question 4"]
    assert len(llm_texts(again.build_session_context().messages)) == 6


def test_unreadable_lines_without_ids_and_skipped_entries_are_repaired_too(tmp_path: Path) -> None:
    path = tmp_path / "garbled.jsonl"
    ids = conversation(path, turns=4)
    lines = lines_of(path)
    q2, a3 = 1 + 4 + 1, 1 + 7 + 1  # lines of "question 2" and "answer 3"
    lines[q2 - 1] = "\x00" * 40  # zeroed bytes: nothing of the entry, not even its id, is readable
    broken = json.loads(lines[a3 - 1])
    del broken["message"]  # valid JSON, but not an entry: skipped, its id known
    lines[a3 - 1] = json.dumps(broken)
    write_lines(path, lines)

    session, raised = open_recording(path, readonly=True)
    texts = llm_texts(session.build_session_context().messages)
    assert texts == ["question 1", "answer 1", "answer 2", "question 3", "question 4", "answer 4"]
    assert len(raised) == 2
    assert session.warnings[0].startswith(f"line {q2}:") and repr(ids[3]) in session.warnings[0]
    assert session.warnings[1].startswith(f"line {a3}:") and repr(ids[8]) in session.warnings[1]
    assert [n.entry.id for n in session.get_tree()] == [ids[0]]


def test_consecutive_corrupt_lines_reattach_to_the_entry_before_them(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    ids = conversation(path, turns=3)
    lines = lines_of(path)
    for line_no in (6, 7):  # "question 2" and "answer 2"
        lines[line_no - 1] = lines[line_no - 1][:30]
    write_lines(path, lines)
    session, raised = open_recording(path, readonly=True)
    assert llm_texts(session.build_session_context().messages) == ["question 1", "answer 1", "question 3", "answer 3"]
    assert len(raised) == 2 and "re-attached" in session.warnings[1] and repr(ids[3]) in session.warnings[1]


def test_a_missing_parent_without_damage_stays_a_root_as_in_pi(tmp_path: Path) -> None:
    """Only entries orphaned by a line that was lost are re-attached: Pi's semantics otherwise hold."""
    path = tmp_path / "hand.jsonl"
    ids = conversation(path, turns=2)
    lines = lines_of(path)
    edited = json.loads(lines[5])
    edited["parentId"] = "feedbeef"  # a parent that never was in the file
    lines[5] = json.dumps(edited)
    write_lines(path, lines)
    session, raised = open_recording(path, readonly=True)
    assert [e.id for e in session.get_branch()] == [ids[4], ids[5]]
    assert len(raised) == 1 and "missing" in raised[0] and "re-attached" not in raised[0]


# --- item 13: a damaged field degrades one message ------------------------------------------------------


def entry_line(kind: str, eid: str, parent: str | None, **fields: Any) -> str:
    entry: dict[str, Any] = {"type": kind, "id": eid, "parentId": parent}
    if "timestamp" not in fields:
        entry["timestamp"] = "2026-03-02T12:00:30.000Z"
    elif fields["timestamp"] is None:
        del fields["timestamp"]
    return json.dumps({**entry, **fields})


def append_lines(path: Path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def test_fractional_tokens_before_in_a_compaction_entry(tmp_path: Path) -> None:
    path = tmp_path / "float.jsonl"
    ids = conversation(path, turns=2)
    fields = {"summary": "We talked about two questions.", "firstKeptEntryId": ids[4], "tokensBefore": 1234.5}
    append_lines(path, entry_line("compaction", "c0c0c0c0", ids[-1], **fields))
    session, raised = open_recording(path, readonly=True)
    assert raised == []
    context = session.build_session_context()
    summary = context.messages[0]
    assert isinstance(summary, CompactionSummaryMessage) and summary.tokens_before == 1234.5
    assert context.to_pi_json()["messages"][0]["tokensBefore"] == 1234.5
    assert llm_texts(context.messages) == [
        COMPACTION_SUMMARY_PREFIX + "We talked about two questions.\n</summary>",
        "question 2",
        "answer 2",
    ]


def test_the_notebook_loads_a_session_with_a_fractional_compaction(tmp_path: Path) -> None:
    """``%load_ext`` builds the kernel's history from the file: it must not fail on the float."""
    from pi_notebook.notebook.config import PiNotebook
    from pi_notebook.notebook.kernel import NotebookSession

    path = tmp_path / "nb.jsonl"
    ids = conversation(path, turns=2)
    fields = {"summary": "Earlier work.", "firstKeptEntryId": ids[4], "tokensBefore": 99.9}
    append_lines(path, entry_line("compaction", "c1c1c1c1", ids[-1], **fields))
    notebook = NotebookSession(SessionFile.open(path), PiNotebook())
    try:
        assert [m.role for m in notebook.llm_messages()] == ["user", "user", "assistant"]
    finally:
        notebook.file.close()


def test_fractional_tokens_before_in_a_compaction_summary_message(tmp_path: Path) -> None:
    path = tmp_path / "msg.jsonl"
    ids = conversation(path, turns=1)
    message = {"role": "compactionSummary", "summary": "Old work.", "tokensBefore": 1234.5, "timestamp": 5}
    append_lines(path, entry_line("message", "d0d0d0d0", ids[-1], message=message))
    session, raised = open_recording(path, readonly=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SessionWarning)  # a valid message: nothing to warn about
        context = session.build_session_context()
    assert raised == []
    assert isinstance(context.messages[-1], CompactionSummaryMessage)
    assert llm_texts(context.messages)[-1] == COMPACTION_SUMMARY_PREFIX + "Old work.\n</summary>"
    assert context.to_pi_json()["messages"][-1] == message


def test_summary_and_custom_entries_without_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "nots.jsonl"
    ids = conversation(path, turns=1)
    custom = {"customType": "reminder", "content": "Run the tests.", "display": True, "timestamp": None}
    append_lines(
        path,
        entry_line("custom_message", "e0e0e0e0", ids[-1], **custom),
        entry_line("branch_summary", "e1e1e1e1", "e0e0e0e0", fromId="e0e0e0e0", summary="Tried X.", timestamp=None),
        entry_line("message", "e2e2e2e2", "e1e1e1e1", message=user("question 2")),
    )
    session, raised = open_recording(path, readonly=True)
    context = session.build_session_context()
    assert raised == []
    messages = context.to_pi_json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "custom", "branchSummary", "user"]
    assert messages[2]["timestamp"] is None and messages[3]["timestamp"] is None  # Pi: NaN, written as null
    assert llm_texts(context.messages) == [
        "question 1",
        "answer 1",
        "Run the tests.",
        BRANCH_SUMMARY_PREFIX + "Tried X.</summary>",
        "question 2",
    ]


def test_an_invalid_message_degrades_alone_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    ids = conversation(path, turns=1)
    bad = {"role": "compactionSummary", "summary": 42, "tokensBefore": 10, "timestamp": 5}
    append_lines(
        path,
        entry_line("message", "f0f0f0f0", ids[-1], message=bad),
        entry_line("message", "f1f1f1f1", "f0f0f0f0", message=user("question 2")),
    )
    session, raised = open_recording(path, readonly=True)
    assert raised == []  # the file is fine as JSON; the message is typed when the context needs it
    with pytest.warns(SessionWarning) as caught:
        context = session.build_session_context()
    assert isinstance(context.messages[2], OpaqueMessage)
    assert context.to_pi_json()["messages"][2] == bad  # kept as written, nothing lost
    assert llm_texts(context.messages) == ["question 1", "answer 1", "question 2"]
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "'f0f0f0f0'" in text and "invalid 'compactionSummary' message" in text and "summary" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", SessionWarning)  # said once, not at every rebuild
        session.build_session_context()


def test_a_fractional_exit_code_is_still_sent(tmp_path: Path) -> None:
    path = tmp_path / "bash.jsonl"
    ids = conversation(path, turns=1)
    bash = {"role": "bashExecution", "command": "make", "output": "oops", "exitCode": 2.5, "cancelled": False}
    bash |= {"truncated": False, "timestamp": 7}
    append_lines(path, entry_line("message", "b0b0b0b0", ids[-1], message=bash))
    session, _ = open_recording(path, readonly=True)
    texts = llm_texts(session.build_session_context().messages)
    assert texts[-1] == "Ran `make`\n```\noops\n```\n\nCommand exited with code 2.5"


# --- Pi's duplicated files ------------------------------------------------------------------------------


def test_a_file_pi_wrote_twice_loads_once_with_one_warning(tmp_path: Path) -> None:
    """Pi re-appends every entry (header too) of a session without an assistant reply when it continues it."""
    path = tmp_path / "twice.jsonl"
    with SessionFile.create(path, cwd="/project") as session:
        first = [
            session.append_model_change("anthropic", "claude-sonnet-4-5"),
            session.append_thinking_level_change("low"),
            session.append_message(user("question 1")),
        ]
    written = lines_of(path)[:-1]
    with open(path, "a", encoding="utf-8") as f:  # Pi's flush at the first assistant message
        f.write("".join(line + "\n" for line in written))
        f.write(entry_line("message", "a1a1a1a1", first[-1].id, message=assistant("answer 1")) + "\n")
    session, raised = open_recording(path)

    assert [e.id for e in session.entries] == [*(e.id for e in first), "a1a1a1a1"]
    assert llm_texts(session.build_session_context().messages) == ["question 1", "answer 1"]
    assert [n.entry.id for n in session.get_tree()] == [first[0].id]
    assert len(raised) == 1
    assert session.warnings[0].startswith("lines 5-8: ") and "lines 1-4" in session.warnings[0]
    assert "one copy" in session.warnings[0]
    session.append_message(user("question 2"))  # recording carries on from the last entry
    session.close()
    again, raised = open_recording(path, readonly=True)
    assert llm_texts(again.build_session_context().messages) == ["question 1", "answer 1", "question 2"]
    assert len(raised) == 1


def test_entries_sharing_an_id_with_different_content_both_stay_reachable(tmp_path: Path) -> None:
    path = tmp_path / "clash.jsonl"
    ids = conversation(path, turns=1)
    append_lines(
        path,
        entry_line("message", "abcd0001", ids[-1], message=user("first copy")),
        entry_line("message", "abcd0002", "abcd0001", message=assistant("reply to the first")),
        entry_line("message", "abcd0001", ids[-1], message=user("second copy")),
        entry_line("message", "abcd0003", "abcd0001", message=assistant("reply to the second")),
    )
    session, raised = open_recording(path, readonly=True)
    assert len(raised) == 1 and "'abcd0001'" in raised[0] and "line 6" in raised[0] and "line 8" in raised[0]
    earlier = "abcd0001@6"
    assert f"{earlier!r}" in raised[0]
    # Lookups by id find the later copy, as in Pi; the earlier one and what hangs under it stay reachable.
    assert session.get_entry("abcd0001").message.content == "second copy"
    assert llm_texts(session.build_session_context().messages)[-2:] == ["second copy", "reply to the second"]
    assert llm_texts(session.build_session_context("abcd0002").messages)[-2:] == ["first copy", "reply to the first"]
    assert session.get_entry(earlier).to_pi_json()["id"] == "abcd0001"  # as the file has it
    assert len(session.entries) == len(ids) + 4
    tree = session.get_tree()
    assert len(tree) == 1


def test_a_compaction_summary_with_a_null_token_count_still_reaches_the_llm(tmp_path: Path) -> None:
    # JavaScript writes Infinity/NaN as null; Pi loads such a file and sends the summary all the same.
    from pi_notebook.agent_core import convert_to_llm, from_pi_json

    message = from_pi_json({"role": "compactionSummary", "summary": "Old work.", "tokensBefore": None, "timestamp": 5})
    assert isinstance(message, CompactionSummaryMessage) and message.tokens_before is None
    [sent] = convert_to_llm([message])
    assert "Old work." in sent.content[0].text
