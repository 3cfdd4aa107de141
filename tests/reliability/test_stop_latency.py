"""The stop button stops within a second, on a real kernel (issue #21: the earlier cases allowed 2-60 s).

Each case starts a real ``ipykernel`` through ``jupyter_client`` (offline: the faux provider, no keys), starts a
cell that would run for half a minute, presses the stop button the way Jupyter does
(``KernelManager.interrupt_kernel``: SIGINT to the kernel, a ``KeyboardInterrupt`` in the cell) and measures from
the interrupt to the cell's reply being idle, as the front end sees it on iopub (``stop_seconds`` in the JUnit
report). Measured on a 2-core machine, idle, with four busy loops, and at a load average of 20: 5 to 310 ms. The
limit is the one a user is promised, :data:`LIMIT` seconds: three times the worst seen.
"""

from __future__ import annotations

import re
import time

from tests.reliability.test_real_kernel import SETUP, Kernel, Reply, _one_line, _sleeps_of, _texts, _wait_for

LIMIT = 1.0
"""Seconds from the interrupt to the cell being idle."""


def stop(kernel: Kernel, msg_id: str, reply: Reply | None = None) -> tuple[Reply, float]:
    """Press the stop button; the cell's reply once idle, and how long that took."""
    started = time.monotonic()
    kernel.km.interrupt_kernel()
    reply = kernel.watch(msg_id, reply, timeout=60)
    return reply, time.monotonic() - started


def test_stopping_a_streaming_agent_reply_takes_under_a_second(kernels, request):
    kernel = kernels()
    kernel.run(SETUP)
    words = " ".join(f"w{i}" for i in range(600))  # 600 words at 20 tokens/s: half a minute
    kernel.run(f"faux.provider.tokens_per_second = 20\nfaux.provider.chunk_chars = 4\nfaux.set_responses([{words!r}])")
    msg_id = kernel.send("%%agent --model faux/faux-1 --tools none\nCount slowly.", cell_id="c1")
    past_w12 = re.compile(r"\bw(1[2-9]|[2-9]\d|\d{3})\b")  # the live view shows part of the reply
    reply = kernel.watch(msg_id, until=lambda r: any(past_w12.search(c) for c in r.comm), timeout=90)
    assert not reply.idle
    reply, took = stop(kernel, msg_id, reply)
    request.node.user_properties.append(("stop_seconds", round(took, 3)))  # in a JUnit report
    assert took <= LIMIT, f"the streaming reply stopped {took:.2f} s after the interrupt"
    (error,) = reply.errors
    assert _one_line(error) == "Interrupted: the run was aborted; everything said so far is kept in the session."
    partial = kernel.messages()[-1]
    (said,) = _texts([partial])
    assert partial["stopReason"] == "aborted" and words.startswith(said) and "w12" in said


def test_stopping_bash_sleep_takes_under_a_second(kernels, request):
    kernel = kernels()
    kernel.run(SETUP)
    msg_id = kernel.send("%bash echo started; sleep 30; echo never", cell_id="c1")
    _wait_for(lambda: _sleeps_of(kernel, "30"), 60, "sleep 30 running under the kernel")
    reply, took = stop(kernel, msg_id)
    request.node.user_properties.append(("stop_seconds", round(took, 3)))  # in a JUnit report
    assert took <= LIMIT, f"%bash stopped {took:.2f} s after the interrupt"
    assert not _sleeps_of(kernel, "30")
    (error,) = reply.errors
    assert _one_line(error).startswith("Interrupted: the command was stopped")
    last = kernel.messages()[-1]
    assert last["role"] == "bashExecution" and last["cancelled"] is True and last["output"] == "started\n"


def test_stopping_a_tool_call_inside_an_agent_run_takes_under_a_second(kernels, request):
    kernel = kernels()
    kernel.run(SETUP)
    kernel.run('faux.set_responses([[faux.tool_call("bash", {"command": "sleep 30"})], "never said"])')
    msg_id = kernel.send("%%agent --model faux/faux-1 --tools bash\nWait for half a minute.", cell_id="c1")
    _wait_for(lambda: _sleeps_of(kernel, "30"), 60, "the agent's bash tool running sleep 30")
    reply, took = stop(kernel, msg_id)
    request.node.user_properties.append(("stop_seconds", round(took, 3)))  # in a JUnit report
    assert took <= LIMIT, f"the tool call stopped {took:.2f} s after the interrupt"
    assert not _sleeps_of(kernel, "30")
    (error,) = reply.errors
    assert _one_line(error) == "Interrupted: the run was aborted; everything said so far is kept in the session."
    call, result, aborted = kernel.messages()[-3:]
    assert call["stopReason"] == "toolUse" and call["content"][0]["arguments"] == {"command": "sleep 30"}
    assert result["role"] == "toolResult" and result["isError"] is True and _texts([result]) == ["Command aborted"]
    assert aborted["stopReason"] == "aborted" and "never said" not in reply.output
