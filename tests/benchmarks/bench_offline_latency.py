"""P8: the offline model's first reply in a fresh kernel, with the preload after ``%load_ext`` and without it.

Each run is a fresh ``ipykernel`` (``jupyter_client``, as a notebook starts one) in a folder holding the
quickstart's ``demo/`` folder, with no provider key and nothing at ``OLLAMA_HOST``, so the next run's model is the
in-process ``local`` one. It runs the quickstart's code cells as they stand in ``notebooks/00-quickstart.ipynb``
up to its first question (``%load_ext``, ``%bash ls demo``, ``%bash cat demo/todo.txt``, ``%bash!``,
``%agent_config``), then ``%%agent --model local`` / ``What files are in the demo folder?``, timed by this process
from sending the cell to:

* the first visible token: the first comm message that puts content into the streaming reply (here the ``ls``
  tool call, which the cell shows once it is complete; before it the cell shows only a status);
* the answer: the kernel idle, the cell's final output written.

*Ours* waits after ``%load_ext`` until the preload is done (an idle kernel: a reader takes longer than that to
reach the question), runs the cells, pauses :data:`READER_PAUSE` seconds before the question (the kernel reads the
next request's start meanwhile), and reports what the preload cost: its wall time, the kernel's CPU time for it and
the resident memory it adds (against the baseline kernels at the same point). *The baseline* kernels have
``PI_NOTEBOOK_NO_PRELOAD=1`` and the same pauses: the first reply loads the model and reads its whole prompt itself.
Kernels of the two kinds alternate. P8b's note gives the kernel's CPU time for the question's cell, which on a
busy machine says more than the wall time about an idle one.

P8f, P8g and P8h are the preload's cost on the kernel's main thread: a cell running a fixed busy loop, sent the
moment ``%load_ext`` returns (P8f), a second later, with the preload under way (P8g), and the moment the preload
starts its one long step of Python work, importing jsonschema (P8h, the worst case: that import holds the GIL
for about a second and cannot stop halfway), against the same cell in a kernel without the preload. (The preload
goes on only while no cell runs: a cell shares the machine at most with the step under way.)

The goals are for an idle 2-core machine; the load average (what ``uptime`` prints) is in each row's note.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import Result, Stat, goal, measure, ratio_goal

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "00-quickstart.ipynb"
PRELOADING = "any(t.name == 'pi-warm-up' for t in __import__('threading').enumerate())"
KERNEL_STATE = """
import json as _json, resource as _resource, time as _time
def _bench_state():
    usage = _resource.getrusage(_resource.RUSAGE_SELF)
    with open("/proc/self/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return {"t": _time.perf_counter(), "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": rss}
_bench_start = _bench_state()
"""
WAIT_FOR_PRELOAD = """
import threading as _threading
def _bench_wait():  # on a thread: a cell waiting would hold the preload, which goes on only while no cell runs
    for _t in _threading.enumerate():
        if _t.name == 'pi-warm-up':
            _t.join()
    _end = _bench_state()
    _cost = {k: _end[k] - _bench_start[k] for k in _end} | {"rss_now_kb": _end["rss_kb"]}
    print("P8-preloaded", _json.dumps(_cost))
_threading.Thread(target=_bench_wait).start()
"""
BUSY_LOOP = f"""
import json as _json, time as _time
_t0 = _time.perf_counter()
_x = 0
for _i in range(15_000_000):
    _x += _i
print(_json.dumps({{"wall": _time.perf_counter() - _t0, "preloading": {PRELOADING}}}))
"""
WHEN_JSONSCHEMA_IMPORTS = """
import sys as _sys, threading as _threading, time as _time
def _bench_watch():  # a module is in sys.modules from the start of its import
    while "jsonschema" not in _sys.modules:
        _time.sleep(0.005)
    print("P8-jsonschema {}")
_threading.Thread(target=_bench_watch).start()
"""
READER_PAUSE = 3.0
"""Seconds between the last cell before the question and the question: a reader's, not Run All's (the kernel
reads ahead the next request meanwhile)."""
QUIET_NOTE = (
    "the preload imports jsonschema last, after 2 s without a cell (local.QUIET_LONG): a cell started in that "
    "second shares the GIL with it"
)
LOOP_AFTER = (0.0, 1.0)
"""When the busy-loop cell is sent after ``%load_ext`` returns: at once (as by Run All), and a second later (the
preload is loading or reading then, and finishes the step under way)."""
DUMP = "import pi_notebook\nprint(_json.dumps([m.to_pi_json() for m in pi_notebook.current_session().messages]))"


def quickstart_cells() -> tuple[list[str], str]:
    """The quickstart's code cells before its first ``%%agent``, and that cell."""
    notebook = json.loads(QUICKSTART.read_text(encoding="utf-8"))
    before = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if source.startswith("%%agent"):
            return before, source
        before.append(source)
    raise RuntimeError(f"no %%agent cell in {QUICKSTART}")


class Kernel:
    """A fresh ipykernel in ``folder`` (notebook ``folder/quickstart.ipynb``), the local model its default."""

    def __init__(self, folder: Path, preload: bool):
        from jupyter_client.manager import start_new_kernel

        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["JPY_SESSION_NAME"] = str(folder / "quickstart.ipynb")
        env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing answers there
        env.pop("PI_NOTEBOOK_NO_PRELOAD", None)
        if not preload:
            env["PI_NOTEBOOK_NO_PRELOAD"] = "1"
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(folder), env=env, startup_timeout=120)

    def execute(self, code: str, timeout: float = 600, silent: bool = False) -> list[tuple[float, dict[str, Any]]]:
        """Run ``code``: (seconds since it was sent, message) for each iopub message it caused, until idle.
        ``silent``: as a front end's own requests, which IPython does not count as cells (nor does the session)."""
        msg_id = self.kc.execute(code, silent=silent, store_history=not silent)
        sent = time.perf_counter()
        out: list[tuple[float, dict[str, Any]]] = []
        while True:
            try:
                message = self.kc.get_iopub_msg(timeout=max(0.1, sent + timeout - time.perf_counter()))
            except queue.Empty:
                raise TimeoutError(f"{code[:60]!r}: no idle in {timeout} s") from None
            if message["parent_header"].get("msg_id") != msg_id and not message["msg_type"].startswith("comm"):
                continue
            out.append((time.perf_counter() - sent, message))
            if message["msg_type"] == "error":
                raise RuntimeError(f"{code[:60]!r}: {message['content']['ename']}: {message['content']['evalue']}")
            idle = message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"
            if idle and message["parent_header"].get("msg_id") == msg_id:
                return out

    def output(self, code: str) -> str:
        """What ``code`` prints, run silently (the measure's own cells stay out of the model's context)."""
        return "".join(m["content"]["text"] for _, m in self.execute(code, silent=True) if m["msg_type"] == "stream")

    def json(self, code: str) -> Any:
        return json.loads(self.output(code).strip().splitlines()[-1])

    def printed(self, code: str, marker: str, timeout: float = 600) -> Any:
        """Run ``code`` silently; the JSON a thread it starts prints after ``marker`` (under that cell or later)."""
        streams = [m for _, m in self.execute(code, silent=True) if m["msg_type"] == "stream"]
        text, deadline = "".join(m["content"]["text"] for m in streams), time.monotonic() + timeout
        while True:
            for line in text.splitlines():
                if line.startswith(marker + " ") and line.endswith("}"):
                    return json.loads(line[len(marker) + 1 :])
            message = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            if message["msg_type"] == "stream":
                text += message["content"]["text"]

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def first_visible(messages: list[tuple[float, dict[str, Any]]]) -> float | None:
    """When the first comm message that puts content into the streaming reply arrived."""
    for at, message in messages:
        if message["msg_type"] != "comm_msg":
            continue
        content = message["content"].get("data", {}).get("content") or {}
        for op in content.get("ops", []) if content.get("pi") == "delta" else []:
            if op.get("op") == "streaming" and any(p[1][:1] == ["content"] for p in op.get("patch") or []):
                return at
    return None


def first_reply(folder: Path, preload: bool) -> dict[str, Any]:
    """One fresh kernel through the quickstart to its first answer: the times, the preload's cost, the answer."""
    before, question = quickstart_cells()
    kernel = Kernel(folder, preload)
    try:
        kernel.execute(KERNEL_STATE, silent=True)
        kernel.execute(before[0])  # %load_ext pi_notebook
        cost = kernel.printed(WAIT_FOR_PRELOAD, "P8-preloaded")
        for cell in before[1:]:
            kernel.execute(cell)
        time.sleep(READER_PAUSE)
        kernel.execute("_bench_before_question = _bench_state()", silent=True)
        messages = kernel.execute(question)
        answer_at = messages[-1][0]
        cpu = kernel.json("print(_json.dumps(_bench_state()['cpu'] - _bench_before_question['cpu']))")
        visible = first_visible(messages)
        replies = [m for m in kernel.json(DUMP) if m["role"] == "assistant"]
        text = " ".join(b.get("text", "") for b in replies[-1]["content"]) if replies else ""
        visible = answer_at if visible is None else visible
        return {"visible": visible, "answer": answer_at, "cpu": cpu, "cost": cost, "text": text}
    finally:
        kernel.shutdown()


def busy_loop(folder: Path, preload: bool, after: float | None) -> dict[str, Any]:
    """A busy loop sent ``after`` seconds after ``%load_ext`` returns (``None``: the moment the preload starts
    importing jsonschema, its one long step of Python work): its wall time, and whether the preload had not
    finished when it ended."""
    before, _ = quickstart_cells()
    kernel = Kernel(folder, preload)
    try:
        kernel.execute(before[0])
        if after is None:
            kernel.printed(WHEN_JSONSCHEMA_IMPORTS, "P8-jsonschema")
        else:
            time.sleep(after)
        return kernel.json(BUSY_LOOP)
    finally:
        kernel.shutdown()


def _folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pi-bench-p8-"))
    shutil.copytree(ROOT / "notebooks" / "demo", folder / "demo")
    return folder


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


@measure("P8", "offline first reply: %%agent --model local on the quickstart's first question, fresh kernel")
def offline_first_reply(quick: bool) -> list[Result]:
    import llama_cpp  # noqa: F401 - the [local] extra: without it there is no offline model to measure

    repeats = 1 if quick else 3
    pairs = 1 if quick else 5
    started = _load()
    ours: list[dict[str, Any]] = []
    base: list[dict[str, Any]] = []
    loops: dict[tuple[float | None, bool], list[dict[str, Any]]] = {
        (a, p): [] for a in LOOP_AFTER for p in (False, True)
    }
    loops[None, True] = []
    for _ in range(repeats):
        for preload, runs in ((False, base), (True, ours)):
            folder = _folder()
            try:
                runs.append(first_reply(folder, preload))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    for _ in range(pairs):
        for after, preload in loops:
            folder = _folder()
            try:
                loops[after, preload].append(busy_loop(folder, preload, after))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    ended = _load()
    loops[None, False] = loops[LOOP_AFTER[-1], False]  # the same cell without a preload
    load_note = f"{started} at the start, {ended} at the end (2 cores; the goals are for an idle machine)"

    def stat(runs: list[dict[str, Any]], key: str) -> Stat:
        return Stat.of([float(r[key]) for r in runs])

    baseline_name = "no preload (PI_NOTEBOOK_NO_PRELOAD=1)"
    cpu_note = (
        f"{statistics.median(r['cpu'] for r in ours):.2f} s preloaded, "
        f"{statistics.median(r['cpu'] for r in base):.2f} s without (all threads; close to the wall time an idle "
        "machine would take with one llama.cpp thread)"
    )
    visible = Result(
        "P8", "%%agent → first visible token (the ls call), preloaded, idle kernel", baseline_name,
        stat(ours, "visible"), stat(base, "visible"), note=load_note,
    )  # fmt: skip
    answer = Result(
        "P8b", "%%agent → the answer (cell done), preloaded, idle kernel", baseline_name,
        stat(ours, "answer"), stat(base, "answer"),
        note=f"kernel CPU time for the cell: {cpu_note}; answers: {ours[-1]['text']!r}; {load_note}",
    )  # fmt: skip
    rss_base = statistics.median([r["cost"]["rss_now_kb"] for r in base])
    preload_wall = Result(
        "P8c", "the preload: %load_ext → model loaded and its prompt's start read (wall)", "—",
        Stat.of([r["cost"]["t"] for r in ours]), note=load_note,
    )  # fmt: skip
    preload_cpu = Result(
        "P8d", "the preload: kernel CPU time from %load_ext to its end (vs %load_ext alone)", "%load_ext alone",
        stat([r["cost"] for r in ours], "cpu"), stat([r["cost"] for r in base], "cpu"),
        note="CPU of the whole kernel process (all threads); the preload reads on one thread",
    )  # fmt: skip
    preload_rss = Result(
        "P8e", "the preload: resident memory added (kernel RSS after it − without it)", "—",
        Stat.of([(r["cost"]["rss_now_kb"] - rss_base) / 1024 for r in ours]), unit="MB",
        note=f"RSS after %load_ext without the preload: {rss_base / 1024:.0f} MB",
    )  # fmt: skip
    main_thread = []
    for row, after in zip(("P8f", "P8g", "P8h"), (*LOOP_AFTER, None), strict=True):
        with_it, without = loops[after, True], loops[after, False]
        unfinished = sum(bool(r["preloading"]) for r in with_it)
        if after is None:
            when = "as the preload starts importing jsonschema"
        else:
            when = f"{after:g} s after %load_ext returns" if after else "as %load_ext returns"
        result = Result(
            row, f"a busy-loop cell sent {when}: its wall time (the preload under way)", baseline_name,
            stat(with_it, "wall"), stat(without, "wall"),
            note=f"the preload had not finished when the loop ended in {unfinished} of {len(with_it)} runs; "
            f"{load_note}",
        )  # fmt: skip
        if after is None:  # the worst case, for reference: the one step that cannot wait halfway
            result.note = f"{result.note}; {QUIET_NOTE}"
        else:
            ratio_goal(result, 1.10, quick, noise=0.10)
        main_thread.append(result)
    goal(visible, 1.0, quick, text="≤ 1.0 s (idle)", noise=0.25)
    goal(answer, 2.5, quick, text="≤ 2.5 s (idle)", noise=0.25)
    return [visible, answer, preload_wall, preload_cpu, preload_rss, *main_thread]
