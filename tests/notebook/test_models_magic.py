"""``%agent_models``, the default-model line of ``%agent_config`` and the note for an unknown id, through a
real IPython shell. No network: Ollama is a tiny server on 127.0.0.1 or a port nothing listens on; keys are
fake values made at run time."""

import secrets
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pi_notebook.ai import models as models_module
from pi_notebook.notebook import models_command
from tests.ollama_fake import fake_ollama


def fake_key() -> str:
    return "test-" + secrets.token_hex(8)


@pytest.fixture
def closed_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return port


@pytest.fixture(autouse=True)
def no_ollama(monkeypatch, closed_port):
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    models_module._ollama_tags.cache_clear()
    monkeypatch.setattr(models_command, "_noted", set())
    yield
    models_module._ollama_tags.cache_clear()


def output(shell, capsys, code):
    capsys.readouterr()
    result = shell.cell(code)
    assert result.error_in_exec is None and result.error_before_exec is None
    return capsys.readouterr().out


def rows(text):
    """The table rows as ``{spec: [mark, context, input, output, key...]}``."""
    out = {}
    for line in text.splitlines()[1:]:
        if not line.strip():
            break
        cells = line.split()
        mark = cells.pop(0) if cells[0] == "*" else ""
        out[cells[0]] = [mark, *cells[1:]]
    return out


def test_lists_todays_models_with_context_prices_and_keys(shell, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key())
    text = output(shell, capsys, "%agent_models")
    table = rows(text)
    assert table["anthropic/claude-sonnet-4-6"] == ["", "1,000,000", "3", "15", "not", "set"]
    assert table["openai/gpt-5.4"] == ["", "1,050,000", "2.5", "15", "set"]
    assert table["openai/gpt-5.5"][0] == "*"  # the default: OPENAI_API_KEY is set
    assert table["local/smollm2-135m"][-2:] == ["not", "needed"]
    assert text.splitlines()[0].split() == ["model", "context", "input", "output", "key"]
    assert "from genai-prices " in text and "* = the default model" in text
    assert "Set ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY in the kernel's environment to use anthropic." in text
    assert "Set OPENAI_API_KEY" not in text
    assert "No Ollama server answers at http://127.0.0.1:" in text


def test_filter_words_must_all_match(shell, capsys):
    table = rows(output(shell, capsys, "%agent_models Sonnet 4-6"))
    assert set(table) == {"anthropic/claude-sonnet-4-6"}
    assert set(rows(output(shell, capsys, "%agent_models openai/o4"))) == {"openai/o4-mini"}
    text = output(shell, capsys, "%agent_models no-such-model")
    assert text.strip() == "No model matches 'no-such-model'; %agent_models without a filter lists them all."


def test_lists_the_models_of_an_ollama_server(shell, capsys, monkeypatch):
    with fake_ollama(["qwen3:4b"]) as (server, _):
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{server.server_address[1]}")
        text = output(shell, capsys, "%agent_models ollama")
        assert rows(text) == {"ollama/qwen3:4b": ["*", "128,000", "0", "0", "not", "needed"]}
        assert "No Ollama server" not in text
        line = output(shell, capsys, "%agent_config").splitlines()[-1]
        assert line == (
            f"default model: ollama/qwen3:4b (no provider key is set; the Ollama server at "
            f"http://127.0.0.1:{server.server_address[1]} lists it first)"
        )


def test_agent_config_says_which_default_model_and_why(shell, capsys, monkeypatch):
    line = output(shell, capsys, "%agent_config").splitlines()[-1]
    assert line.startswith("default model: local/smollm2-135m (no ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY or ")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key())
    line = output(shell, capsys, "%agent_config").splitlines()[-1]
    assert line == "default model: anthropic/claude-opus-4-8 (ANTHROPIC_API_KEY is set)"
    # Setting values prints the settings only (as the committed notebooks show).
    assert "default model:" not in output(shell, capsys, "%agent_config default_model=faux/faux-1")
    line = output(shell, capsys, "%agent_config").splitlines()[-1]
    assert line == "default model: faux/faux-1 (the default_model setting)"
    assert rows(output(shell, capsys, "%agent_models claude-opus-4-8"))["anthropic/claude-opus-4-8"][0] == ""


def test_an_unknown_id_runs_with_a_note_printed_once(shell, capsys):
    # A key given in Python, and a payload hook that fails the call before it is sent: the run fails as data (an
    # error reply), after the note; nothing reaches the network. (Without a key the cell fails before it runs.)
    def offline(body, model):
        raise RuntimeError("stopped before the network")

    shell.session.agent.stream_options.update(api_key="sk-test-not-a-key", on_payload=offline)
    first = output(shell, capsys, "%%agent --model openai/tomorrows-model --tools none\nhi")
    note = first.splitlines()[0]
    assert note.startswith("Note: openai/tomorrows-model is not in the model catalogue (genai-prices ")
    assert "defaults from gpt-5.5" in note and "stopped before the network" in first
    assert shell.session.messages[-1].model == "tomorrows-model"
    second = output(shell, capsys, "%%agent --model openai/tomorrows-model --tools none\nhi again")
    assert "Note:" not in second
    assert "Note:" not in output(shell, capsys, "%%agent --model faux/faux-1 --tools none\nhi")


def test_help_is_the_docstring(shell):
    doc = shell.ip.find_line_magic("agent_models").__doc__
    assert "%agent_models [FILTER]" in doc
