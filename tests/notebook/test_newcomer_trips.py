"""What a newcomer trips over around a run (issue 24), met as a user meets it: through a real IPython shell, the
faux provider, and the real Anthropic provider with no key in the environment.

- a missing key fails the cell in one line saying what to run, before anything is recorded (so Run All stops);
- a running ``%bash`` says it is running, a waiting ``%%agent`` that the model loads or is waited for;
- ``%agent_config`` shows the tools and system prompt a plain ``%%agent`` really runs with;
- the export is titled with the notebook's name, marks what was never sent, and ``--no-private`` leaves it out;
- ``%agent_session`` speaks of the history and its latest message, not of leaves and entry kinds, and ``list``
  shows a failed reply as failed;
- the saved inspector shows what the LLM got exactly (line breaks kept);
- a finished cell's widget leaves a valid (empty) module in a headless run's saved state, so the notebook opens
  without "[anywidget] Failed to initialize model".
"""

from __future__ import annotations

import html
import json
import re
from types import SimpleNamespace

import nbformat
import pytest
from IPython.core.error import UsageError
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from pi_notebook.ai import faux, get_model, list_models
from pi_notebook.ai.keys import ENV_VARS, KEYLESS_PROVIDERS
from pi_notebook.coding_agent.run_policy import LOCAL_SYSTEM_PROMPT
from pi_notebook.notebook import run_status
from pi_notebook.notebook.commands import require_key
from pi_notebook.notebook.saved import inspector_html
from pi_notebook.notebook.widgets import DISCARDED_ESM, TranscriptWidget

SONNET = "anthropic/claude-sonnet-4-5"


def no_keys(monkeypatch) -> None:
    for names in ENV_VARS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


# --- a missing key ----------------------------------------------------------------------------------------------


def test_a_missing_key_fails_the_cell_in_one_line_before_anything_is_recorded(shell, monkeypatch, capsys):
    no_keys(monkeypatch)
    shell.cell("%bash echo before")
    before = shell.session.file.path.read_bytes()
    result = shell.agent("hello", f"--model {SONNET}")
    error = result.error_in_exec
    assert isinstance(error, UsageError)  # the cell fails: Run All stops here
    text = str(error)
    assert "\n" not in text
    assert text.startswith("ANTHROPIC_API_KEY is not set")
    assert 'os.environ["ANTHROPIC_API_KEY"] = getpass.getpass()' in text  # what to run, from the notebook
    assert "before starting Jupyter" in text and "api_key" not in text  # nothing a magic cannot do
    out = capsys.readouterr()
    assert "empty response" not in out.out + out.err
    assert shell.session.file.path.read_bytes() == before  # no prompt, no failed reply recorded
    # --new is refused the same way, before a new session file is made
    result = shell.agent("hello", f"--new --model {SONNET}")
    assert isinstance(result.error_in_exec, UsageError)
    assert shell.session.file.path.read_bytes() == before


@pytest.mark.parametrize("provider", sorted(p for p in ENV_VARS if p not in KEYLESS_PROVIDERS))
def test_every_providers_key_variable_is_named(shell, monkeypatch, provider):
    no_keys(monkeypatch)
    # a catalogue model of the provider, else one it would be given by name (only its provider and id are read)
    model = next((m for m in list_models() if m.provider == provider), None)
    model = model or SimpleNamespace(provider=provider, id="some-model")
    with pytest.raises(UsageError) as caught:
        require_key(shell.session, model)
    text = str(caught.value)
    named = text.split(" ", 1)[0]
    assert named in ENV_VARS[provider] and "\n" not in text
    assert f'os.environ["{named}"]' in text
    monkeypatch.setenv(named, "sk-test")
    require_key(shell.session, model)  # set: the run goes on


def test_a_key_given_in_python_or_a_keyless_model_runs(shell, monkeypatch):
    no_keys(monkeypatch)
    sonnet = get_model(SONNET)
    shell.session.agent.stream_options["api_key"] = "sk-given"
    require_key(shell.session, sonnet)
    del shell.session.agent.stream_options["api_key"]
    shell.session.agent.get_api_key = lambda provider: "sk-from-a-hook"
    require_key(shell.session, sonnet)
    shell.session.agent.get_api_key = None
    for spec in ("faux/faux-1", "local", "ollama/llama3.2"):
        require_key(shell.session, get_model(spec))


def test_run_all_stops_at_the_missing_key_cell(tmp_path, monkeypatch):
    """Through a real kernel (nbclient, as Run All): the cell fails with one line and the next cell never runs."""
    no_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext pi_notebook"),
        nbformat.v4.new_code_cell(f"%%agent --model {SONNET}\nWhat is 2 + 2?"),
        nbformat.v4.new_code_cell("print('after')"),
    ]
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError):
        client.execute()
    # IPython shows a UsageError as one line on stderr, and the cell's reply is an error: Run All stops
    (output,) = nb.cells[1].outputs  # nothing above the line: no transcript, no "(empty response)"
    assert output.output_type == "stream" and output.name == "stderr"
    assert output.text.startswith("UsageError: ANTHROPIC_API_KEY is not set") and output.text.count("\n") == 1
    assert nb.cells[2].outputs == [] and nb.cells[2].execution_count is None


# --- a running cell says what it is doing -----------------------------------------------------------------------


def test_a_running_bash_says_it_is_running(shell, statuses):
    shell.cell("%bash sleep 0.3")
    assert statuses == ["running for {elapsed}"]  # from its start to its end (then the view gives way)


def test_a_waiting_agent_says_it_waits_for_the_model(shell, statuses):
    faux.set_responses([[faux.tool_call("ls", {}, id="c1")], "One file."])
    assert shell.agent("What is here?", "--model faux/faux-1 --tools ls").success
    waiting = "waiting for the model ({elapsed})"
    assert statuses[:5] == [waiting, "", "running the tool ls ({elapsed})", "", waiting]
    assert statuses[-1] == ""


def test_the_offline_model_not_loaded_yet_says_it_is_loading(monkeypatch):
    from pi_notebook.ai.providers import local

    model = get_model("local")
    monkeypatch.setattr(local, "is_loaded", lambda m: False)
    assert run_status.waiting_for(model).startswith("loading the model ({elapsed})")
    monkeypatch.setattr(local, "is_loaded", lambda m: True)
    assert run_status.waiting_for(model) == run_status.WAITING
    assert run_status.waiting_for(get_model("faux/faux-1")) == run_status.WAITING


def test_is_loaded_follows_the_load(monkeypatch):
    pytest.importorskip("llama_cpp")
    from pi_notebook.ai.providers import local

    model = get_model("local")
    local._load(str(local.resolve_gguf(model.id)), model.context_window)
    assert local.is_loaded(model)
    assert not local.is_loaded(get_model("local//no/such/model.gguf"))


# --- %agent_config --------------------------------------------------------------------------------------------


def test_agent_config_shows_what_a_plain_agent_runs_with(shell, monkeypatch, capsys):
    no_keys(monkeypatch)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers: the default is the offline model
    shell.cell("%agent_config")
    out = capsys.readouterr().out
    plan = shell.session.plan_run(None)
    assert plan.model.api == "local"
    assert "a %%agent without options runs local/smollm2-135m with:" in out
    assert re.search(rf"^  tools +{re.escape(','.join(plan.tool_names))}  \(not the tools setting", out, re.M)
    assert f"  system prompt  {LOCAL_SYSTEM_PROMPT!r}  (not the system_prompt setting" in out
    shell.cell("%agent_config default_model=faux/faux-1")
    capsys.readouterr()
    shell.cell("%agent_config")
    out = capsys.readouterr().out
    assert "runs faux/faux-1 with:" in out and "not the tools setting" not in out
    assert re.search(rf"^  tools +{re.escape(shell.session.config.tools)}$", out, re.M)


# --- the export ---------------------------------------------------------------------------------------------------


def page_data(path) -> tuple[str, str]:
    text = path.read_text("utf-8")
    return text, re.search(r"<title>(.*?)</title>", text).group(1)


def test_the_export_is_titled_with_the_notebook_and_marks_what_was_never_sent(shell, capsys, tmp_path):
    shell.cell("%bash echo shared-output")
    shell.cell("%bash! echo DEMO_API_TOKEN=not-for-the-model")
    faux.set_responses(["ok"])
    assert shell.agent("hi").success
    capsys.readouterr()
    shell.cell("%agent_session export page.html")
    said = capsys.readouterr().out
    assert "1 message never sent to the LLM (%bash!, %agent_private): shown, marked so" in said
    text, title = page_data(tmp_path / "page.html")
    assert html.unescape(title) == "analysis.ipynb — agent session"
    assert "<h1>analysis.ipynb — agent session</h1>" in html.unescape(text)
    assert "DEMO_API_TOKEN=not-for-the-model" in text
    note = re.search(r'<p class="pi-export-private" data-private="shown">(.*?)</p>', text).group(1)
    assert "not sent to the LLM" in html.unescape(note) and "--no-private" in note

    shell.cell("%agent_session export shared.html --no-private")
    said = capsys.readouterr().out
    assert "exported 3 messages" in said and "left out" in said
    text, _ = page_data(tmp_path / "shared.html")
    assert "not-for-the-model" not in text  # nowhere: not in the transcript, the inspector or the header
    assert "shared-output" in text
    assert 'data-private="left-out"' in text

    shell.cell("%agent_session export shared.md --no-private")
    md = (tmp_path / "shared.md").read_text("utf-8")
    assert md.startswith("### analysis.ipynb — agent session") and "not-for-the-model" not in md
    result = shell.cell("%agent_session export copy.jsonl --no-private")
    assert isinstance(result.error_in_exec, UsageError) and ".html" in str(result.error_in_exec)
    assert isinstance(shell.cell("%agent_session export x.html --private-too").error_in_exec, UsageError)


# --- %agent_session in the notebook's words ---------------------------------------------------------------------------


def test_agent_session_speaks_of_the_history_and_list_shows_a_failed_reply(shell, capsys):
    faux.set_responses(["Hello.", faux.message([], stop_reason="error", error_message="invalid request: bad schema")])
    shell.agent("hi", cell_id="a")
    shell.agent("and now?", cell_id="b")
    capsys.readouterr()
    shell.cell("%agent_session")
    out = capsys.readouterr().out
    assert "leaf" not in out and "entries:" not in out
    assert "history: 4 messages on the current branch" in out
    latest = shell.session.file.get_branch()[-1]
    assert f"latest message: {latest.id}  reply failed: invalid request: bad schema" in out
    shell.cell("%agent_session list")
    listing = capsys.readouterr().out
    assert "leaf" not in listing and "message assistant" not in listing
    assert "prompt: hi" in listing and "reply: Hello." in listing
    assert re.search(rf"^{latest.id}  reply failed: invalid request: bad schema   ← latest$", listing, re.M)

    faux.set_responses(["Fine now."])
    shell.agent("and now?", cell_id="b")  # the cell run again: its earlier try is on another branch
    capsys.readouterr()
    shell.cell("%agent_session")
    assert "other branches: 1" in capsys.readouterr().out
    shell.cell("%agent_session list")
    listing = capsys.readouterr().out
    assert "(other branch) reply failed: invalid request: bad schema" in listing
    assert re.search(r"reply: Fine now\.   ← latest$", listing, re.M)


# --- the saved inspector -----------------------------------------------------------------------------------------


def test_the_saved_inspector_shows_what_the_llm_got_exactly(shell):
    import pi_notebook

    shell.cell("%bash printf 'a.txt\\nb.txt\\n'")
    faux.set_responses(["Two files:\n\n- a.txt\n- b.txt"])
    assert shell.agent("List   them.").success
    widget = pi_notebook.inspect(shell.session)
    page = inspector_html(widget.get_state(), "summary")
    cells = [html.unescape(c) for c in re.findall(r"<pre>(.*?)</pre>", page, re.S)]
    assert "Ran `printf 'a.txt\\nb.txt\\n'`\n```\na.txt\nb.txt\n\n```" in cells  # fenced, line by line
    assert "List   them." in cells  # a passed prompt: its text, spaces kept (not "(the same message)")
    assert "Two files:\n\n- a.txt\n- b.txt" in cells
    widget.close()


# --- a finished cell's widget in a headless run's saved state ---------------------------------------------------------


def test_a_discarded_widget_keeps_a_module_anywidget_can_load():
    widget = TranscriptWidget()
    widget.set_status("running for {elapsed}")
    sent: list[dict] = []
    widget.comm.send = lambda data=None, **kw: sent.append(data)
    widget.discard()
    states = [m["state"] for m in sent if isinstance(m, dict) and "state" in m]
    assert states and states[0]["_esm"] == DISCARDED_ESM == "export default {};"
    assert states[0]["status"] == ""


def test_a_headless_run_saves_no_widget_anywidget_cannot_initialize(tmp_path, monkeypatch):
    no_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext pi_notebook"),
        nbformat.v4.new_code_cell("%bash echo one"),
        nbformat.v4.new_code_cell("%bash! echo two"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    # a headless kernel's magics open no widget at all (#25): nothing for anywidget to initialize, no widget state
    assert "widgets" not in nb.metadata, json.dumps(nb.metadata)[:300]
    assert [o["output_type"] for c in nb.cells[1:] for o in c.outputs] == ["display_data", "display_data"]
