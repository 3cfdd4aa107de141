"""The offline model preloaded after ``%load_ext pi_notebook``, in a real kernel (issue #27 item 3).

A background preload was reverted once because llama-cpp-python silences a model load by swapping
``sys.stdout`` (and file descriptors 1 and 2), which swallowed what a cell printed meanwhile. Here llama.cpp's
loading output goes to its log callback instead: a cell that prints all through the preload keeps every line, and
no loading output shows anywhere. An ``%%agent`` asked while the load is still under way says "loading the model"
and then answers, from the model the preload loaded.
"""

from __future__ import annotations

import json

import pytest

from tests.reliability.test_real_kernel import Kernel

PRINT_THROUGH_THE_PRELOAD = """
import sys, threading, time
def preloading():
    return any(t.name == "pi-warm-up" for t in threading.enumerate())
during, deadline = 0, time.monotonic() + 300
for i in range(100000):
    busy = preloading()
    during += busy
    print(f"line {i}")
    sys.stderr.write(f"err {i}\\n")
    if not busy or time.monotonic() > deadline:
        break
    time.sleep(0.02)
print(json.dumps({"lines": i + 1, "during": during}))
"""


@pytest.fixture
def preloading(monkeypatch, kernels, tmp_path):
    """A kernel whose next run's model is the local one (no key, nothing at OLLAMA_HOST), preloading allowed."""
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    monkeypatch.delenv("PI_NOTEBOOK_NO_PRELOAD", raising=False)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "todo.txt").write_text("Buy milk.\n")
    return kernels()


def test_a_cell_printing_during_the_preload_keeps_every_line(preloading: Kernel):
    preloading.run("%load_ext pi_notebook\nimport json")
    reply = preloading.watch(preloading.send(PRINT_THROUGH_THE_PRELOAD), timeout=600)
    assert not reply.errors, reply.errors
    text = reply.output
    counts = json.loads(next(line for line in text.splitlines() if line.startswith("{")))
    assert counts["during"] >= 3, counts  # it printed while the model was loading, not only after
    for prefix in ("line", "err"):  # sys.stdout and sys.stderr
        assert [f"{prefix} {i}\n" in text for i in range(counts["lines"])] == [True] * counts["lines"], prefix
    for loading_output in ("llama_model_loader", "Model metadata", "llama_context", "load_tensors", "AVX"):
        assert loading_output not in text
    loaded = (
        "from pi_notebook.ai.providers import local\nlocal.is_loaded(pi_notebook.current_session().next_plan().model)"
    )
    assert preloading.run("import pi_notebook\n" + loaded).strip() == "True"


def test_an_agent_asked_while_the_model_loads_says_so_then_answers(preloading: Kernel):
    # In the cell that loads the extension: the preload has only just started when the run asks for the model.
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
