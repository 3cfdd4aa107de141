"""Loading the extension in a kernel preloads the offline model in the background (the GGUF, and the start of the
prompt every first request shares), only when the next run's model is the local one, not when the environment
says ``PI_NOTEBOOK_NO_PRELOAD=1`` (as this suite does: tests/conftest.py) or ``warm_up`` is off. The real-kernel
side (a cell's prints during the preload, the "loading the model" status) is in
tests/reliability/test_preload_kernel.py."""

import threading

import pytest

from pi_notebook.ai.providers import local
from pi_notebook.ai.types import Context, UserMessage


@pytest.fixture
def preloading(monkeypatch):
    """The local model as the next run's (no key, nothing at OLLAMA_HOST) and preloading allowed."""
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there: the default is the local model
    monkeypatch.delenv("PI_NOTEBOOK_NO_PRELOAD", raising=False)


def test_the_local_model_is_loaded_in_the_background_with_the_start_of_its_prompt(shell, preloading, tmp_path):
    gguf = tmp_path / "model.gguf"  # the same model by another path: a load of its own, whatever ran before
    gguf.symlink_to(local.default_gguf_path())
    shell.cell(f"%agent_config default_model=local/{gguf}")
    thread = shell.session.warm_up()
    assert thread is not None
    thread.join(300)
    assert not thread.is_alive() and shell.session.warm_up_error is None
    plan = shell.session.next_plan()
    assert plan.model.id == str(gguf) and local.is_loaded(plan.model)  # the first %%agent does not wait for it...
    llm, _ = local._load(str(gguf), plan.model.context_window)
    tools = [tool.to_tool() for tool in plan.tools(shell.session.cwd)]
    first = Context(system_prompt=plan.system_prompt, messages=[UserMessage(content="What is here?")], tools=tools)
    tokens = llm.tokenize(local._prompt_for(llm, first, local._plan(first)).text.encode(), add_bos=True, special=True)
    read = list(llm.input_ids[: llm.n_tokens])
    # ...nor reads the instructions and worked examples again: its first request starts with what was read.
    assert len(read) > 200 and tokens[: len(read)] == read


def test_no_preload_when_the_environment_or_the_setting_says_so(shell, preloading, monkeypatch):
    monkeypatch.setenv("PI_NOTEBOOK_NO_PRELOAD", "1")
    assert shell.session.warm_up() is None
    monkeypatch.delenv("PI_NOTEBOOK_NO_PRELOAD")
    shell.cell("%agent_config warm_up=False")
    assert shell.session.warm_up() is None and shell.session.config.warm_up is False


def test_no_preload_when_the_next_model_is_not_the_local_one(shell, preloading, monkeypatch):
    calls = []
    monkeypatch.setattr(local, "preload", lambda *a, **k: calls.append(a))
    shell.cell("%agent_config default_model=faux/faux-1")
    thread = shell.session.warm_up()
    thread.join(30)
    assert calls == [] and shell.session.warm_up_error is None
    shell.cell("%agent_config default_model=local/smollm2-135m")
    shell.session.warm_up().join(30)
    assert [model.id for model, _ in calls] == ["smollm2-135m"]


def test_loading_the_extension_outside_a_kernel_starts_no_preload(shell):
    assert not [t for t in threading.enumerate() if t.name == "pi-warm-up"]  # the fixture loaded it in plain IPython


def test_the_preload_waits_while_a_cell_runs(shell, preloading, monkeypatch):
    started = threading.Event()

    def fake_preload(model, context=None, *, pause):
        pause()
        started.set()

    monkeypatch.setattr(local, "preload", fake_preload)
    thread = shell.session.warm_up(in_cell=True)  # as %load_ext starts it, from inside its cell
    shell.ip.user_ns["started"] = started
    shell.cell("pass")  # the %load_ext cell ends; the next one comes at once (as by Run All)
    shell.cell("import time\ntime.sleep(1.0)\nstarted_during_the_cell = started.is_set()")
    assert shell.ip.user_ns["started_during_the_cell"] is False
    assert started.wait(10)  # then the kernel is idle: it goes on
    thread.join(10)


def test_an_agent_asked_while_the_preload_loads_says_so_and_waits_for_that_load(
    shell, preloading, statuses, tmp_path, monkeypatch
):
    gguf = tmp_path / "model.gguf"  # a load of its own, whatever ran before in this process
    gguf.symlink_to(local.default_gguf_path())
    (tmp_path / "notes.txt").write_text("Buy milk.\n")
    shell.cell(f"%agent_config default_model=local/{gguf}")
    loading, release, loads = threading.Event(), threading.Event(), []
    real = local._quiet_llama

    def held_load():  # the preload's load, held until the agent cell has asked for the model
        cls = real()

        def load(**kwargs):
            loads.append(kwargs["model_path"])
            loading.set()
            release.wait(120)
            return cls(**kwargs)

        return load

    monkeypatch.setattr(local, "_quiet_llama", held_load)
    thread = shell.session.warm_up()
    assert loading.wait(120)  # the preload is loading the GGUF now
    threading.Timer(1.0, release.set).start()
    result = shell.agent("What files are here?", f"--model local/{gguf}")
    thread.join(300)
    assert result.success
    assert statuses[0].startswith("loading the model ({elapsed})"), statuses
    assert loads == [str(gguf)]  # the reply used the preload's model: loaded once
    replies = [m for m in shell.session.messages if m.role == "assistant"]
    assert replies and all(m.stop_reason != "error" for m in replies), replies
