"""run_shell with real processes: exit codes, merged output, cleaning, bounded memory, cancellation."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import run_shell
from pi_notebook.coding_agent.tools import shell_output as shell_output_module
from pi_notebook.coding_agent.tools.shell_output import BUFFER_CHARS, OutputCollector, sanitize_output
from pi_notebook.coding_agent.truncate import DEFAULT_MAX_BYTES

from .helpers import run


def shell(command: str, cwd, **kw):
    return run(run_shell(command, cwd=cwd, **kw))


def group_exists(pgid: int) -> bool:
    """Whether a live (non-zombie) process is in the group: killed orphans may wait a while for init."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                state, _, pgrp = file.read().rsplit(b")", 1)[1].split()[:3]
        except OSError:
            continue
        if int(pgrp) == pgid and state != b"Z":
            return True
    return False


def test_exit_codes_are_data(tmp_path):
    ok = shell("echo hello", tmp_path)
    assert (ok.output, ok.exit_code, ok.cancelled, ok.truncated) == ("hello\n", 0, False, False)
    assert ok.full_output_path is None
    failed = shell("echo oops; exit 3", tmp_path)
    assert (failed.output, failed.exit_code, failed.cancelled) == ("oops\n", 3, False)


def test_runs_in_cwd_with_given_env_and_no_stdin(tmp_path):
    result = shell('pwd; echo "$GREETING"; cat', tmp_path, env={"GREETING": "hi", "PATH": os.environ["PATH"]})
    assert result.output == f"{tmp_path}\nhi\n"


def test_stderr_is_merged_in_order(tmp_path):
    result = shell("echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three", tmp_path)
    assert result.output == "one\ntwo\nthree\n"


def test_killed_by_a_signal_reports_128_plus_n(tmp_path):
    result = shell("kill -9 $$", tmp_path)
    assert (result.exit_code, result.cancelled) == (137, False)


def test_ansi_is_stripped_from_output_but_passed_to_on_output(tmp_path):
    seen: list[str] = []
    result = shell(r"printf '\033[31mred\033[0m\r\n\033]0;title\007done\n'", tmp_path, on_output=seen.append)
    assert result.output == "red\ndone\n"
    assert "".join(seen) == "\x1b[31mred\x1b[0m\r\n\x1b]0;title\x07done\n"


def test_escape_sequences_split_across_chunks_are_still_stripped():
    collector = OutputCollector()
    for piece in (b"a\x1b[3", b"1mred\x1b", b"[0m\xe2\x82", b"\xac\n"):
        collector.feed(piece)
    collector.finish()
    assert collector.snapshot().content == "ared€\n"


def test_binary_output_is_sanitised(tmp_path):
    result = shell("head -c 3000 /dev/urandom; printf '\\0\\1\\2tab\\there\\n'", tmp_path)
    assert isinstance(result.output, str)
    result.output.encode("utf-8")  # valid text: no lone surrogates
    assert result.output.endswith("tab\there\n")
    assert not any((ch < " " and ch not in "\t\n") or "\x7f" <= ch <= "\x9f" for ch in result.output)
    assert sanitize_output("a\x00b\x07c\x1b[1md\r\n\t") == "abcd\n\t"


def test_huge_output_keeps_bounded_memory_and_a_full_log(tmp_path, monkeypatch):
    peaks: list[int] = []

    class Watched(OutputCollector):
        def _record(self, clean: str) -> None:
            super()._record(clean)
            peaks.append(self.buffered_chars)

    monkeypatch.setattr(shell_output_module, "OutputCollector", Watched)
    monkeypatch.setattr("pi_notebook.coding_agent.tools.shell.OutputCollector", Watched)
    result = shell("seq 1 2000000", tmp_path)
    assert max(peaks) <= BUFFER_CHARS + 65536  # the bound plus at most one read
    assert result.exit_code == 0 and result.truncated
    lines = result.output.split("\n")
    assert lines[-2:] == ["2000000", ""] and len(lines) == 2000
    assert result.truncation.total_lines == 2000001
    assert os.path.basename(result.full_output_path).startswith("pi-bash-")
    with open(result.full_output_path) as file:
        assert file.read() == "".join(f"{i}\n" for i in range(1, 2000001))
    os.unlink(result.full_output_path)


def test_small_output_makes_no_temp_file(tmp_path):
    result = shell(f"head -c {DEFAULT_MAX_BYTES - 10} /dev/zero | tr '\\0' x", tmp_path)
    assert result.full_output_path is None and not result.truncated


def test_abort_kills_the_whole_group_quickly(tmp_path):
    controller = AbortController()
    pids: list[int] = []

    def on_output(text: str) -> None:
        pids.append(int(text.split()[0]))
        controller.abort()

    started = time.monotonic()
    result = shell("echo $$; sleep 30 & sleep 30", tmp_path, signal=controller.signal, on_output=on_output)
    assert time.monotonic() - started < 10
    assert (result.cancelled, result.exit_code, result.timed_out) == (True, None, False)
    assert result.output.strip() == str(pids[0])
    assert not group_exists(pids[0])


@pytest.mark.parametrize("traps", ["INT", "INT TERM"])
def test_abort_escalates_past_ignored_signals(tmp_path, traps):
    controller = AbortController()

    async def main():
        asyncio.get_running_loop().call_later(0.2, controller.abort)
        return await run_shell(f"trap '' {traps}; sleep 30; echo survived", cwd=tmp_path, signal=controller.signal)

    started = time.monotonic()
    result = run(main())
    assert time.monotonic() - started < 15
    assert result.cancelled and "survived" not in result.output


def test_timeout(tmp_path):
    started = time.monotonic()
    result = shell("echo start; sleep 30", tmp_path, timeout=0.3)
    assert time.monotonic() - started < 10
    assert (result.cancelled, result.timed_out, result.exit_code) == (True, True, None)
    assert result.output == "start\n"


def test_already_aborted_signal_runs_nothing(tmp_path):
    controller = AbortController()
    controller.abort()
    result = shell(f"touch {tmp_path}/ran", tmp_path, signal=controller.signal)
    assert result.cancelled and not (tmp_path / "ran").exists()


def test_cancelling_the_caller_kills_the_group_and_reraises(tmp_path):
    pids: list[int] = []

    async def main():
        task = asyncio.ensure_future(
            run_shell("echo $$; sleep 30", cwd=tmp_path, on_output=lambda t: pids.append(int(t)))
        )
        while not pids:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    time.sleep(0.1)
    assert not group_exists(pids[0])


def test_a_background_child_holding_the_pipe_does_not_block(tmp_path):
    started = time.monotonic()
    result = shell("sleep 30 & echo done", tmp_path)
    assert time.monotonic() - started < 10 and result.output == "done\n" and result.exit_code == 0


def test_progress_snapshots_are_throttled_tails(tmp_path):
    partials = []
    shell("for i in 1 2 3; do echo $i; sleep 0.15; done", tmp_path, on_progress=partials.append)
    assert 2 <= len(partials) <= 4
    assert all(p.exit_code is None and not p.cancelled for p in partials)
    assert partials[-1].output == "1\n2\n3\n"


def test_missing_cwd_is_misuse(tmp_path):
    with pytest.raises(FileNotFoundError, match="Working directory does not exist"):
        shell("true", tmp_path / "nope")


def test_a_failing_on_output_callback_stops_the_command_and_propagates(tmp_path):
    def broken(_text: str) -> None:
        raise ValueError("display broke")

    started = time.monotonic()
    with pytest.raises(ValueError, match="display broke"):
        shell("echo hi; sleep 30", tmp_path, on_output=broken)
    assert time.monotonic() - started < 10
