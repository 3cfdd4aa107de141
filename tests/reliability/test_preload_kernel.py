"""The offline model preloaded after ``%load_ext pi_notebook``, in a real kernel (issue #27 item 3).

A background preload was reverted once because llama-cpp-python silences a model load by swapping
``sys.stdout`` (and file descriptors 1 and 2), which swallowed what a cell printed meanwhile. Here llama.cpp's
loading output goes to its log callback instead: what a notebook prints all through the preload (here from a thread
it started: the preload goes on only while no cell runs) keeps every line, and no loading output shows anywhere. An
``%%agent`` asked before the model is loaded says "loading the model", then answers. (An agent that waits for the
preload's own load: tests/notebook/test_warm_up.py.)
"""

from __future__ import annotations

import json
import time

import pytest

from tests.reliability.test_real_kernel import Kernel

PRINT_THROUGH_THE_PRELOAD = """
import json, sys, threading, time
import pi_notebook
from pi_notebook.ai.providers import local
def print_through_the_preload():
    model = pi_notebook.current_session().next_plan().model
    loaded_before, deadline, i = local.is_loaded(model), time.monotonic() + 300, 0
    while any(t.name == "pi-warm-up" for t in threading.enumerate()) and time.monotonic() < deadline:
        print(f"line {i}")
        sys.stderr.write(f"err {i}\\n")
        i += 1
        time.sleep(0.01)
    print(json.dumps({"lines": i, "loaded_before": loaded_before, "loaded_after": local.is_loaded(model)}))
    print("DONE")
    sys.stderr.write("DONE too\\n")
threading.Thread(target=print_through_the_preload).start()
"""


def stream_text_until(kernel: Kernel, text: str, markers: tuple[str, ...], timeout: float = 600) -> str:
    """``text`` and every later stream output of the kernel, whichever cell it is shown under, until ``markers``."""
    deadline = time.monotonic() + timeout
    while not all(marker in text for marker in markers):
        message = kernel.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if message["msg_type"] == "stream":
            text += message["content"]["text"]
    return text


@pytest.fixture
def preloading(monkeypatch, kernels, tmp_path):
    """A kernel whose next run's model is the local one (no key, nothing at OLLAMA_HOST), preloading allowed."""
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    monkeypatch.delenv("PI_NOTEBOOK_NO_PRELOAD", raising=False)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "todo.txt").write_text("Buy milk.\n")
    return kernels()


def test_what_a_notebook_prints_during_the_preload_keeps_every_line(preloading: Kernel):
    # The preload goes on while no cell runs: a thread the notebook started prints all through it.
    preloading.run("%load_ext pi_notebook")
    text = stream_text_until(preloading, preloading.run(PRINT_THROUGH_THE_PRELOAD), ("DONE\n", "DONE too\n"))
    counts = json.loads(next(line for line in text.splitlines() if line.startswith("{")))
    assert not counts["loaded_before"] and counts["loaded_after"], counts  # it printed while the model loaded
    assert counts["lines"] >= 10, counts
    for prefix in ("line", "err"):  # sys.stdout and sys.stderr
        assert [f"{prefix} {i}\n" in text for i in range(counts["lines"])] == [True] * counts["lines"], prefix
    for loading_output in ("llama_model_loader", "Model metadata", "llama_context", "load_tensors", "AVX"):
        assert loading_output not in text


def test_an_agent_asked_while_the_model_loads_says_so_then_answers(preloading: Kernel):
    # In the cell that loads the extension: the preload waits for the cell to end, so the reply loads the model.
    code = (
        "%load_ext pi_notebook\nimport json, pi_notebook\n"
        "get_ipython().run_cell_magic('agent', '--model local', 'What files are in the demo folder?')"
    )
    reply = preloading.watch(preloading.send(code), timeout=600)
    assert not reply.errors, reply.errors
    statuses = [json.loads(c).get("state", {}).get("status") for c in reply.comm]
    assert any(s and s.startswith("loading the model") for s in statuses), statuses
    messages = preloading.messages()
    answers = [m for m in messages if m["role"] == "assistant"]
    assert answers and all(m["stopReason"] != "error" for m in answers), answers


WAIT_FOR = """
import threading
def _wait():
    for t in threading.enumerate():
        if t.name == {name!r}:
            t.join()
    print("waited for {name}")
threading.Thread(target=_wait).start()
"""
HELD = """
from pi_notebook.ai.providers import local
session = pi_notebook.current_session()
plan = session.next_plan()
llm, _ = local._models[(str(local.resolve_gguf(plan.model.id)), plan.model.context_window)]
context = session.preview("What files are in the demo folder?", plan=plan).call.context
text = local._prompt_for(llm, context, local._plan(context)).text
request = [int(t) for t in llm.tokenize(text.encode(), add_bos=True, special=True)]
held = [int(t) for t in llm.input_ids[: llm.n_tokens]]
print(json.dumps({"held": len(held), "request": len(request), "starts_it": request[: len(held)] == held}))
"""


def wait_for(kernel: Kernel, thread_name: str) -> None:
    """Until no thread of that name runs in the kernel (waited for on a thread: a cell would pause them; sent as
    a front end's silent request, which the session does not record as a cell)."""
    kernel.kc.execute(WAIT_FOR.format(name=thread_name), silent=True, store_history=False)
    stream_text_until(kernel, "", (f"waited for {thread_name}\n",))


def test_after_a_cell_the_kernel_reads_ahead_the_next_request(preloading: Kernel):
    preloading.run("%load_ext pi_notebook\nimport json, pi_notebook")
    wait_for(preloading, "pi-warm-up")
    preloading.run("%bash ls demo")
    time.sleep(1.0)  # a reader's pause: the kernel is idle, the read-ahead starts 0.3 s after the cell
    wait_for(preloading, "pi-read-ahead")
    seen = json.loads(preloading.run("import json, pi_notebook\n" + HELD).strip().splitlines()[-1])
    # The model holds the next request up to the user's words: the question and what follows are all it reads.
    assert seen["starts_it"] and seen["request"] - seen["held"] <= 25, seen
