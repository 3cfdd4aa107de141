"""Pi's session folder: where Pi looks, what ``/resume`` shows, and drafts that Pi cannot duplicate.

Pi's facts (``config.ts``, ``core/session-manager.ts`` at pi-mono 83378aad; the session-dir overrides from
pi-coding-agent 0.73.1) are restated here as expected values. The last test checks them against a real Pi
when ``PI_CODING_AGENT_JS`` names an installed ``@mariozechner/pi-coding-agent`` (never in CI).
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

from pi_notebook.ai import AssistantMessage, TextContent, UserMessage
from pi_notebook.coding_agent import BashExecutionMessage
from pi_notebook.coding_agent.pi_sessions import (
    encode_cwd,
    is_draft,
    list_pi_sessions,
    new_draft_path,
    new_pi_session_path,
    pi_agent_dir,
    pi_session_dir,
    publish_draft,
    read_session_info,
)
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning

PI_FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi" / "sessions"
PI_NAME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl"
)


@pytest.fixture
def agent_dir(tmp_path, monkeypatch):
    """Pi's agent dir in tmp_path (and HOME too, so nothing real is read or written)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return tmp_path / "agent"


def _pi_file(folder: Path, fixture: str) -> Path:
    """A session file exactly as Pi wrote it (Pi lists any ``.jsonl`` file, whatever its name)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(PI_FIXTURES / fixture, folder / fixture))


def _assistant(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], api="faux", provider="faux", model="faux-1")


# --- where Pi looks ---------------------------------------------------------------------------------------


def test_the_agent_dir_is_home_dot_pi_agent_unless_the_environment_moves_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    assert pi_agent_dir() == tmp_path / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "")  # empty is unset, as in JS
    assert pi_agent_dir() == tmp_path / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/elsewhere")
    assert pi_agent_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "/opt/pi")
    assert pi_agent_dir() == Path("/opt/pi")


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/user/proj", "--home-user-proj--"),
        ("/", "----"),
        ("/a:b/c d/", "--a-b-c d---"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("\\\\server\\share", "---server-share--"),  # only one leading separator is dropped
    ],
)
def test_the_cwd_is_encoded_as_pi_encodes_it(cwd, folder):
    assert encode_cwd(cwd) == folder


def test_the_session_folder_and_file_names_are_pis(agent_dir):
    assert pi_session_dir("/home/user/proj") == agent_dir / "sessions" / "--home-user-proj--"
    path = new_pi_session_path("/home/user/proj")
    assert path.parent == agent_dir / "sessions" / "--home-user-proj--" and PI_NAME.fullmatch(path.name)
    draft = new_draft_path("/home/user/proj")
    assert draft.parent == path.parent and draft.name.endswith(".jsonl.draft") and is_draft(draft)


def test_newer_pi_session_dir_overrides_env_then_settings(agent_dir, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"sessionDir": "~/global-sessions"}))
    assert pi_session_dir(project) == tmp_path / "home" / "global-sessions"
    (project / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": ".pi/sessions"}))
    assert pi_session_dir(project) == project / ".pi" / "sessions"  # the project's wins; relative to the cwd
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "flat"))
    assert pi_session_dir(project) == tmp_path / "flat"


# --- what /resume shows --------------------------------------------------------------------------------


def test_the_listing_shows_this_cwds_sessions_newest_first_and_not_another_cwds(agent_dir):
    cwd = "/home/user/project"
    older = _pi_file(pi_session_dir(cwd), "labels_session_info.jsonl")  # 2026-03-01
    newer = _pi_file(pi_session_dir(cwd), "duplicate_header.jsonl")  # 2026-03-02
    _pi_file(pi_session_dir("/home/user/other"), "branch_summary.jsonl")
    (pi_session_dir(cwd) / "notes.txt").write_text("not a session")
    (pi_session_dir(cwd) / "broken.jsonl").write_text('{"type":"message"}\n')
    (pi_session_dir(cwd) / "x.jsonl.draft").write_text((PI_FIXTURES / "blank_lines.jsonl").read_text())
    sessions = list_pi_sessions(cwd)
    assert [s.path for s in sessions] == [newer, older]
    cats = sessions[1]
    # Its last session_info entry has an empty name, which clears it (Pi 0.73's /resume then shows none).
    assert (cats.name, cats.first_message, cats.message_count) == (None, "Name a cat.", 6)
    assert cats.id == "053ef890-a5f5-4414-a127-2ca8ee134fbb" and cats.cwd == cwd
    last_reply = [json.loads(line) for line in older.read_text().splitlines() if '"role":"assistant"' in line][-1]
    assert cats.modified == last_reply["message"]["timestamp"] / 1000  # /resume's "last activity"
    assert list_pi_sessions("/home/user/nowhere") == []


def test_a_session_without_messages_falls_back_to_its_header_time(agent_dir, tmp_path):
    with SessionFile.create(tmp_path / "s.jsonl", cwd="/p") as file:
        header = file.header
    info = read_session_info(tmp_path / "s.jsonl")
    assert (info.message_count, info.first_message, info.name) == (0, "", None)
    assert info.created == header.timestamp and info.id == header.id


def test_reading_the_info_of_a_file_pi_duplicated_counts_each_message_once(tmp_path):
    lines = (PI_FIXTURES / "labels_session_info.jsonl").read_text().splitlines()
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join(lines + lines) + "\n")  # what Pi's re-append leaves: everything twice
    assert read_session_info(path).message_count == 6


def test_lines_not_written_as_pi_writes_them_are_still_read(tmp_path):
    header = {"type": "session", "version": 3, "id": "abc", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    user = {
        "id": "u1",
        "type": "message",
        "message": {"content": [{"type": "text", "text": "reordered"}], "role": "user"},
    }
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(map(json.dumps, [header, user])) + "\n")  # spaces and another key order
    info = read_session_info(path)
    assert (info.first_message, info.message_count) == ("reordered", 1)


# --- drafts -------------------------------------------------------------------------------------------


def test_a_draft_gets_its_pi_name_only_once_it_holds_an_assistant_message(agent_dir):
    cwd = "/home/user/proj"
    file = SessionFile.create(new_draft_path(cwd), cwd=cwd)
    assert publish_draft(file) is None  # header only: Pi would write its header again
    file.append_message(BashExecutionMessage(command="ls", output="a\n", exit_code=0))
    file.append_message(UserMessage(content="hi"))
    assert publish_draft(file) is None  # %bash and a prompt: Pi would write both again
    assert list_pi_sessions(cwd) == []
    file.append_message(_assistant("hello"))
    published = publish_draft(file)
    assert not file.path.exists() and publish_draft(published) is None
    header = published.header
    stamp = header.timestamp.replace(":", "-").replace(".", "-")
    assert published.path == pi_session_dir(cwd) / f"{stamp}_{header.id}.jsonl"
    assert [e.role for e in published.entries] == ["bashExecution", "user", "assistant"]
    published.append_message(UserMessage(content="again"))  # still ours to write
    published.append_session_info("  my analysis ")
    [info] = list_pi_sessions(cwd)
    assert (info.path, info.message_count, info.name, info.first_message) == (published.path, 4, "my analysis", "hi")
    published.close()


def test_a_draft_whose_pi_name_is_taken_gets_a_new_one(agent_dir):
    cwd = "/p"
    file = SessionFile.create(new_draft_path(cwd), cwd=cwd)
    file.append_message(_assistant("hi"))
    stamp = file.header.timestamp.replace(":", "-").replace(".", "-")
    taken = file.path.with_name(f"{stamp}_{file.header.id}.jsonl")
    taken.write_text("someone else's\n")
    published = publish_draft(file)
    assert published.path != taken and PI_NAME.fullmatch(published.path.name)
    assert published.header.id == file.header.id
    assert taken.read_text() == "someone else's\n"
    published.close()


def test_a_file_pi_duplicated_loads_without_doubling_the_history(tmp_path):
    # What Pi leaves when it continues a %bash-only file: header and entries twice, then its new entries.
    cwd = "/p"
    with SessionFile.create(tmp_path / "s.jsonl", cwd=cwd) as file:
        file.append_message(BashExecutionMessage(command="ls", output="a\n", exit_code=0))
    written = (tmp_path / "s.jsonl").read_text()
    bash_id = json.loads(written.splitlines()[1])["id"]
    user = {"type": "message", "id": "0000000a", "parentId": bash_id, "timestamp": "2026-03-01T00:00:00.000Z"}
    user["message"] = {"role": "user", "content": "hi", "timestamp": 1}
    (tmp_path / "s.jsonl").write_text(written + written + json.dumps(user, separators=(",", ":")) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SessionWarning)
        reopened = SessionFile.open(tmp_path / "s.jsonl", readonly=True)
    assert [m.role for m in reopened.build_session_context().messages] == ["bashExecution", "user"]
    assert read_session_info(tmp_path / "s.jsonl").message_count == 2


# --- against a real Pi (optional) ------------------------------------------------------------------------
