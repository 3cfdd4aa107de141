"""Loading the extension gives the offline model a head start (its libraries are imported in the background),
only when the local model is the default, only in a Jupyter kernel, and never at the cost of a cell's output."""

import threading

from pi_notebook.ai.providers import local


def test_the_local_default_gets_its_libraries_imported_in_the_background(shell, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there: the default is the local model
    local._load.cache_clear()
    thread = shell.session.warm_up()
    assert thread is not None
    thread.join(60)
    assert not thread.is_alive() and shell.session.warm_up_error is None
    # It loads no model: llama-cpp-python silences a load by swapping sys.stdout, which would eat a cell's prints.
    assert local._load.cache_info().currsize == 0


def test_loading_the_extension_outside_a_kernel_starts_no_warm_up(shell):
    assert not [t for t in threading.enumerate() if t.name == "pi-warm-up"]  # the fixture loaded it in plain IPython


def test_no_warm_up_when_turned_off_or_when_the_default_is_not_local(shell, monkeypatch):
    shell.cell("%agent_config warm_up=False")
    assert shell.session.warm_up() is None and shell.session.config.warm_up is False
    shell.cell("%agent_config warm_up=True default_model=faux/faux-1")
    thread = shell.session.warm_up()
    thread.join(30)
    assert shell.session.warm_up_error is None
