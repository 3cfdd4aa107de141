"""Loading the extension gives the offline model a head start: it is loaded and has read its fixed prompt
before the first %%agent (only when the local model is the default, and only if not turned off)."""

from pi_notebook.ai.providers import local


def test_the_local_default_is_loaded_and_primed_in_the_background(shell, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there: the default is the local model
    local._load.cache_clear()
    thread = shell.session.warm_up()
    assert thread is not None
    thread.join(120)
    assert not thread.is_alive() and shell.session.warm_up_error is None
    assert local._load.cache_info().currsize == 1  # the GGUF is loaded
    # ... and the fixed start of the prompt (system prompt, tools, worked examples) is already evaluated
    llm, _ = local._load(str(local.default_gguf_path()), 8192)
    assert llm.n_tokens > 400


def test_loading_the_extension_outside_a_kernel_starts_no_warm_up(shell):
    import threading

    assert not [t for t in threading.enumerate() if t.name == "pi-warm-up"]  # the fixture loaded it in plain IPython


def test_no_warm_up_when_turned_off_or_when_the_default_is_not_local(shell, monkeypatch):
    shell.cell("%agent_config warm_up=False")
    assert shell.session.warm_up() is None and shell.session.config.warm_up is False
    shell.cell("%agent_config warm_up=True default_model=faux/faux-1")
    local._load.cache_clear()
    thread = shell.session.warm_up()
    thread.join(30)
    assert local._load.cache_info().currsize == 0
