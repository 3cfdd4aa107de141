"""The bash tool: Pi's texts for success, failure, truncation, abort and timeout; streamed partial output."""

from __future__ import annotations

import asyncio
import os
import re

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_bash_tool

from .helpers import call, error_of, run, text_of


def test_success_text_and_no_output(tmp_path):
    bash = create_bash_tool(tmp_path)
    result = call(bash, command="echo hi; echo there >&2")
    assert text_of(result) == "hi\nthere\n" and result.details is None
    assert text_of(call(bash, command="true")) == "(no output)"


def test_runs_in_the_tools_cwd(tmp_path):
    assert text_of(call(create_bash_tool(tmp_path), command="pwd")) == f"{tmp_path}\n"


def test_non_zero_exit_raises_with_output_and_code(tmp_path):
    bash = create_bash_tool(tmp_path)
    assert error_of(bash, command="echo bad; exit 2") == "bad\n\n\nCommand exited with code 2"
    assert error_of(bash, command="exit 1") == "(no output)\n\nCommand exited with code 1"


def test_truncation_by_lines_names_the_full_output_file(tmp_path):
    result = call(create_bash_tool(tmp_path), command="seq 1 3000")
    text = text_of(result)
    match = re.search(r"\n\n\[Showing lines 1002-3001 of 3001\. Full output: (.+)\]$", text)
    assert match, text[-200:]
    assert text.startswith("1002\n") and text[: match.start()].endswith("3000\n")
    path = match.group(1)
    assert result.details["fullOutputPath"] == path
    assert result.details["truncation"]["truncatedBy"] == "lines"
    with open(path) as file:
        assert file.read().splitlines() == [str(i) for i in range(1, 3001)]
    os.unlink(path)


def test_truncation_by_bytes(tmp_path):
    # 1000 lines of 100 bytes: under the line limit, over 50 KB.
    text = text_of(call(create_bash_tool(tmp_path), command="for i in $(seq 1 1000); do printf '%099d\\n' $i; done"))
    notice = re.search(r"\n\n\[Showing lines (\d+)-1001 of 1001 \(50\.0KB limit\)\. Full output: (.+)\]$", text)
    assert notice, text[-200:]
    # 512 lines of 100 bytes (with their newlines) plus the empty line after the last newline.
    assert int(notice.group(1)) == 1001 - 513 + 1
    assert text[: notice.start()] == "".join(f"{i:099d}\n" for i in range(489, 1001))
    os.unlink(notice.group(2))


def test_a_single_huge_line_shows_its_end(tmp_path):
    text = text_of(call(create_bash_tool(tmp_path), command="head -c 60000 /dev/zero | tr '\\0' x"))
    notice = re.search(r"\n\n\[Showing last 50\.0KB of line 1 \(line is 58\.6KB\)\. Full output: (.+)\]$", text)
    assert notice, text[-200:]
    assert text[: notice.start()] == "x" * 51200
    os.unlink(notice.group(1))


def test_abort_raises_command_aborted_with_output(tmp_path):
    controller = AbortController()

    def on_update(partial):
        if "started" in partial.content[0].text:
            controller.abort()

    message = error_of_with_updates(tmp_path, "echo started; sleep 30", controller.signal, on_update)
    assert message == "started\n\n\nCommand aborted"


def test_abort_before_start(tmp_path):
    controller = AbortController()
    controller.abort()
    assert error_of(create_bash_tool(tmp_path), signal=controller.signal, command="echo hi") == "Command aborted"


def test_timeout(tmp_path):
    bash = create_bash_tool(tmp_path)
    assert error_of(bash, command="sleep 30", timeout=0.2) == "Command timed out after 0.2 seconds"
    assert error_of(bash, command="echo x; sleep 30", timeout=1) == "x\n\n\nCommand timed out after 1 seconds"


def test_streams_partial_output(tmp_path):
    partials = []
    result = call(create_bash_tool(tmp_path), on_update=partials.append, command="echo a; sleep 0.2; echo b")
    assert text_of(result) == "a\nb\n"
    assert [p.content[0].text for p in partials][-1] == "a\nb\n"
    assert partials[0].content[0].text == "a\n"


def test_missing_working_directory(tmp_path):
    gone = tmp_path / "gone"
    assert (
        error_of(create_bash_tool(gone), command="true")
        == f"Working directory does not exist: {gone}\nCannot execute bash commands."
    )


def error_of_with_updates(cwd, command, signal, on_update):
    tool = create_bash_tool(cwd)
    try:
        run(tool.run("call_1", {"command": command}, signal, on_update))
    except Exception as exc:
        return str(exc)
    raise AssertionError("bash succeeded")


def test_tool_runs_concurrently_with_the_event_loop(tmp_path):
    async def main():
        tool = create_bash_tool(tmp_path)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.02)
                ticks += 1

        task = asyncio.ensure_future(ticker())
        await tool.run("c", {"command": "sleep 0.3"}, None, lambda _p: None)
        task.cancel()
        return ticks

    assert run(main()) >= 5
