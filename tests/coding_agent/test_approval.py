"""Asking before a tool acts (#23, approval), without a notebook: an ``AgentSession``, the scripted faux model
making real ``bash``, ``edit`` and ``write`` calls in a temporary folder, and an approver answering as a user
would. What a user notices: which calls ask (and why, per model kind), what they are shown before anything
happens (the command; for ``edit``/``write`` a diff against the file on disk), that a denied call changes nothing
and the model reads the denial, that "always" is remembered for the session, and that with nothing to ask a call
is refused at once with one clear result."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from pi_notebook.ai import faux, get_model
from pi_notebook.coding_agent import AgentSession, SessionSettings
from pi_notebook.coding_agent.approval import (
    DENIED_TEXT,
    STOPPED_TEXT,
    ApprovalRequest,
    Decision,
    approval_policy,
)
from pi_notebook.coding_agent.approval_preview import MATCH_BUDGET, preview_call, unified_diff


class Answers:
    """An approver that answers as scripted, and remembers what it was shown."""

    def __init__(self, *answers: Decision | Exception):
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def folder(tmp_path, fresh_faux):
    (tmp_path / "notes.txt").write_text("apples: 3\npears: 5\nplums: 7\n")
    return tmp_path


def open_session(folder, approve="bash,edit,write", **settings):
    settings = SessionSettings(default_model="faux/faux-1", approve=approve, **settings)
    return AgentSession.open(folder / "sessions", settings, cwd=str(folder))


def run(session, *calls, prompt="go", **choices):
    """One prompt: the model makes ``calls`` (name, arguments) one per turn, then says "done"."""
    faux.set_responses([*([faux.tool_call(name, args)] for name, args in calls), "done"])
    notes: list[str] = []
    new = asyncio.run(session.prompt(prompt, on_event=lambda e: notes.append(e.text) if e.type == "note" else None))
    return [m for m in new if m.role == "toolResult"], notes


def text_of(result) -> str:
    return result.content[0].text


# --- which calls ask ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "asks", "why"),
    [
        ("anthropic/claude-sonnet-4-5", ("python", "bash", "edit", "write"), "a model that acts for real"),
        ("ollama/llama3.2", ("python", "bash", "edit", "write"), "a model that acts for real"),
        ("faux/faux-1", (), "a scripted model: you wrote its calls"),
        ("local", (), "the offline model: its default tools only read"),
    ],
)
def test_the_default_asks_before_acting_tools_of_models_that_act_for_real(spec, asks, why):
    model = get_model(spec)
    policy = approval_policy("default", model)
    assert policy.tools == asks
    assert policy.describe().endswith(f"(the default for {model.provider}/{model.id}, {why})")


def test_the_setting_names_the_tools_or_none_and_a_wrong_name_is_refused():
    model = get_model("anthropic/claude-sonnet-4-5")
    assert approval_policy("edit, write", model).tools == ("edit", "write")
    assert approval_policy("edit,write", model).describe() == "edit,write"
    assert approval_policy("none", model).tools == ()
    with pytest.raises(ValueError, match=r"^approve: unknown tool\(s\) bsh; choose from read, bash"):
        approval_policy("bsh", model)
    with pytest.raises(ValueError, match="'default' stands alone"):
        approval_policy("default,bash", model)


def test_a_wrong_setting_fails_the_prompt_before_anything_is_recorded(folder):
    with open_session(folder, approve="bsh") as session:
        faux.set_responses(["never"])
        with pytest.raises(ValueError, match="approve: unknown tool"):
            asyncio.run(session.prompt("go"))
        assert session.messages == [] and faux.calls == []


def test_the_scripted_model_runs_its_calls_without_asking_by_default(folder):
    approver = Answers()  # asking would fail: it has no answer
    with open_session(folder, approve="default") as session:
        session.approver = approver
        [result], _ = run(session, ("bash", {"command": "echo ran > proof.txt"}))
    assert not result.is_error and (folder / "proof.txt").read_text() == "ran\n"
    assert approver.asked == [] and "approval" not in (result.details or {})


# --- nothing to ask ----------------------------------------------------------------------------------------


def test_with_no_approver_a_call_that_needs_approval_is_refused_at_once_and_nothing_runs(folder):
    with open_session(folder) as session:
        [result], notes = run(session, ("bash", {"command": "echo ran > proof.txt"}))
        path = session.file.path
    assert not (folder / "proof.txt").exists()
    assert result.is_error
    assert text_of(result) == (
        "This bash call needs approval, and nothing here can approve it (no approver is set): it did not run. "
        "To allow it, set approve='none' (or leave this tool out of approve) in the session's settings, or give "
        "the session an approver (session.approver)."
    )
    assert faux.calls[-1].messages[-1].content[0].text == text_of(result)  # what the model read next
    assert notes == ["bash did not run: it needs approval, and nothing here can approve it (no approver is set)"]
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    [entry] = [e for e in stored if e.get("message", {}).get("role") == "toolResult"]
    assert entry["message"]["details"] == {
        "approval": {"decision": "unanswered", "asked": False, "reason": "no approver is set"}
    }


def test_approve_none_runs_every_call_without_asking(folder):
    with open_session(folder, approve="none") as session:
        [result], _ = run(session, ("write", {"path": "new.txt", "content": "hi\n"}))
    assert not result.is_error and (folder / "new.txt").read_text() == "hi\n"


# --- what the user is shown --------------------------------------------------------------------------------


def test_an_edit_is_shown_as_a_diff_against_the_file_and_a_denial_leaves_it_unchanged(folder):
    approver = Answers(Decision.deny("pears stay at 5"))
    with open_session(folder) as session:
        session.approver = approver
        [result], notes = run(session, ("edit", {"path": "notes.txt", "oldText": "pears: 5", "newText": "pears: 6"}))
    [request] = approver.asked
    assert (request.tool_name, request.kind, request.path, request.note) == ("edit", "diff", "notes.txt", "")
    assert request.text == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n apples: 3\n-pears: 5\n+pears: 6\n plums: 7\n"
    )
    assert (folder / "notes.txt").read_text() == "apples: 3\npears: 5\nplums: 7\n"  # unchanged on disk
    assert result.is_error and text_of(result) == f"{DENIED_TEXT} Their reason: pears stay at 5"
    assert faux.calls[-1].messages[-1].content[0].text == text_of(result)
    assert result.details == {"approval": {"decision": "denied", "asked": True, "reason": "pears stay at 5"}}
    assert notes == ["you denied edit notes.txt: pears stay at 5"]


def test_an_approved_edit_changes_the_file_as_the_diff_showed(folder):
    approver = Answers(Decision.approve())
    with open_session(folder) as session:
        session.approver = approver
        [result], notes = run(session, ("edit", {"path": "notes.txt", "oldText": "plums: 7", "newText": "plums: 8"}))
    assert not result.is_error and (folder / "notes.txt").read_text() == "apples: 3\npears: 5\nplums: 8\n"
    shown = approver.asked[0].text
    assert applied(shown, "apples: 3\npears: 5\nplums: 7\n") == (
        "apples: 3\npears: 5\nplums: 7\n",
        (folder / "notes.txt").read_text(),
    )
    assert result.details["approval"] == {"decision": "approved", "asked": True, "always": False}
    assert "diff" in result.details  # the tool's own details are kept
    assert notes == ["you approved edit notes.txt"]


def test_a_write_is_diffed_from_the_file_or_from_dev_null(folder):
    approver = Answers(Decision.approve(), Decision.approve())
    with open_session(folder) as session:
        session.approver = approver
        run(
            session,
            ("write", {"path": "notes.txt", "content": "apples: 3\n"}),
            ("write", {"path": "sub/new.txt", "content": "first line\nno newline"}),
        )
    over, new = approver.asked
    assert over.text == "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1 @@\n apples: 3\n-pears: 5\n-plums: 7\n"
    assert new.note == "sub/new.txt would be created"
    assert new.text == (
        "--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+first line\n+no newline\n\\ No newline at end of file\n"
    )
    assert (folder / "sub" / "new.txt").read_text() == "first line\nno newline"


def test_a_bash_call_shows_its_command_and_an_edit_that_would_fail_says_so(folder):
    assert preview_call("bash", {"command": "rm -rf build"}, folder).text == "rm -rf build"
    missing = preview_call("edit", {"path": "notes.txt", "oldText": "kiwis: 1", "newText": "kiwis: 2"}, folder)
    assert missing.note == "the text to replace is not in notes.txt: the edit would fail"
    assert "-kiwis: 1\n+kiwis: 2\n" in missing.text
    twice = preview_call("edit", {"path": "notes.txt", "oldText": "s: ", "newText": "s = "}, folder)
    assert twice.note == "the text to replace occurs 3 times in notes.txt: the edit would fail"
    absent = preview_call("edit", {"path": "nope.txt", "oldText": "a", "newText": "b"}, folder)
    assert absent.note == "nope.txt does not exist: the edit would fail"
    (folder / "sub").mkdir()
    folder_write = preview_call("write", {"path": "sub", "content": "x"}, folder)
    assert folder_write.note == "sub is a directory: the write would fail"


def test_a_known_secret_in_a_file_is_masked_in_the_diff(folder, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-5f1e9a0c7b3d4e2a")
    (folder / ".env").write_text("MY_SERVICE_TOKEN=tok-5f1e9a0c7b3d4e2a\nDEBUG=0\n")
    approver = Answers(Decision.deny())
    with open_session(folder) as session:
        session.approver = approver
        run(session, ("edit", {"path": ".env", "oldText": "DEBUG=0", "newText": "DEBUG=1"}))
    assert "tok-5f1e9a0c7b3d4e2a" not in approver.asked[0].text
    assert " MY_SERVICE_TOKEN=[masked: MY_SERVICE_TOKEN]\n" in approver.asked[0].text


# --- always, stop, failures ----------------------------------------------------------------------------------


def test_always_this_session_does_not_ask_again_until_the_setting_changes(folder):
    approver = Answers(Decision.approve(always=True), Decision.deny())
    with open_session(folder) as session:
        session.approver = approver
        [first], notes = run(session, ("bash", {"command": "echo one"}))
        [second], _ = run(session, ("bash", {"command": "echo two"}))
        assert [text_of(first).strip(), text_of(second).strip()] == ["one", "two"]
        assert len(approver.asked) == 1
        assert notes == ["you approved bash `echo one` and every later bash call this session"]
        assert second.details["approval"] == {"decision": "approved", "asked": False, "always": True}
        session.settings.approve = "bash,edit"  # a new setting: asked again
        [third], _ = run(session, ("bash", {"command": "echo three"}))
    assert len(approver.asked) == 2 and third.is_error and text_of(third) == DENIED_TEXT


def test_an_approver_that_fails_refuses_the_call(folder):
    approver = Answers(RuntimeError("the page went away"))
    with open_session(folder) as session:
        session.approver = approver
        [result], _ = run(session, ("bash", {"command": "echo ran > proof.txt"}))
    assert not (folder / "proof.txt").exists()
    assert text_of(result).startswith(
        "This bash call needs approval, and nothing here can approve it (the approval prompt failed: the page went "
        "away): it did not run."
    )


def test_stopping_the_run_while_it_waits_ends_it_and_the_call_is_stopped(folder):
    class Slow:
        def __init__(self):
            self.cancelled = False

        async def ask(self, request):
            session.abort()  # the user stops the run while the prompt waits
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled = True
                raise
            return Decision.approve()

    with open_session(folder) as session:
        session.approver = approver = Slow()
        faux.set_responses([[faux.tool_call("bash", {"command": "echo ran > proof.txt"})], "never reached"])
        new = asyncio.run(asyncio.wait_for(session.prompt("go"), 10))
    [result] = [m for m in new if m.role == "toolResult"]
    assert result.is_error and text_of(result) == STOPPED_TEXT and result.details["approval"]["decision"] == "stopped"
    assert approver.cancelled and not (folder / "proof.txt").exists()
    assert new[-1].role == "assistant" and new[-1].stop_reason == "aborted"


def test_a_hook_set_on_the_agent_still_runs_after_the_approval(folder):
    seen: list[str] = []
    approver = Answers(Decision.approve())
    with open_session(folder) as session:
        session.approver = approver
        session.agent.before_tool_call = lambda context, signal: seen.append(context.tool_call.name)
        run(session, ("bash", {"command": "echo one"}), ("read", {"path": "notes.txt"}))
    assert seen == ["bash", "read"] and len(approver.asked) == 1


# --- the diff itself ---------------------------------------------------------------------------------------


def applied(diff: str, old: str) -> tuple[str, str]:
    """The two texts a unified diff says it joins, rebuilt from ``old`` and its hunks."""
    a = old.splitlines(keepends=True)
    before, after, pos = [], [], 0
    lines = diff.splitlines(keepends=True)[2:]
    for line in lines:
        if line.startswith("@@"):
            start = int(re.match(r"@@ -(\d+)(?:,(\d+))?", line).group(1))
            start = start - 1 if start else 0
            if re.match(r"@@ -\d+,0 ", line):
                start += 1
            before += a[pos:start]
            after += a[pos:start]
            pos = start
        elif line[0] in " -":
            assert a[pos] == line[1:], (a[pos], line)
            before.append(a[pos])
            if line[0] == " ":
                after.append(a[pos])
            pos += 1
        elif line[0] == "+":
            after.append(line[1:])
    return "".join(before + a[pos:]), "".join(after + a[pos:])


def test_the_diff_rebuilds_both_texts():
    rng = random.Random(23)
    words = ["alpha\n", "beta\n", "gamma\n", "delta\n", "eps\n"]
    for _ in range(300):
        old = "".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        new = "".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        diff = unified_diff(old, new, "a/f", "b/f")
        if old == new:
            assert diff == ""
            continue
        assert applied(diff, old) == (old, new)
        assert diff.startswith("--- a/f\n+++ b/f\n@@ -")


def test_rewriting_a_large_file_is_diffed_at_once_and_stays_a_correct_diff():
    old = "".join(f"line {i}\n" for i in range(int(MATCH_BUDGET**0.5) + 500))
    new = "".join(f"row {i}\n" for i in range(int(MATCH_BUDGET**0.5) + 500))
    diff = unified_diff("keep\n" + old + "end\n", "keep\n" + new + "end\n", "a/f", "b/f")
    assert diff.startswith("--- a/f\n+++ b/f\n@@ -1,")
    assert "\n keep\n-line 0\n" in diff and diff.count("\n@@ ") == 1  # one hunk: all removed, then all added
    assert re.search(r"\n\.\.\. the diff goes on \(\d+\+ more lines not shown\)\n\Z", diff)
    assert len(diff.splitlines()) == 2001
