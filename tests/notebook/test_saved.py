"""What a saved notebook keeps of a finished cell (#13): the saved form only, small, and the same everywhere."""

from __future__ import annotations

import json

from pi_notebook.agent import to_pi_json
from pi_notebook.ai import UserMessage
from pi_notebook.notebook.saved import STYLE, TRANSCRIPT_MIME, transcript_bundle
from tests.benchmarks.bench_saved import execute, session_file

SAVED_FORM = {TRANSCRIPT_MIME, "text/html", "text/plain"}


def test_a_notebook_executed_headless_keeps_each_cell_once_and_no_widget(tmp_path):
    cells = [
        "%load_ext pi_notebook\nfrom pi_notebook.ai import faux\nfaux.set_responses(['It is **done**.'])",
        "%%agent --model faux/faux-1 --tools none\nAre you there?",
        *["%bash echo hi"] * 3,
    ]
    with_state, _ = execute(tmp_path, cells)
    nb = json.loads(with_state.read_text())
    shown = [o for cell in nb["cells"][1:] for o in cell["outputs"] if o["output_type"] == "display_data"]
    assert len(shown) == 4 and all(set(o["data"]) == SAVED_FORM for o in shown)
    agent = {k: v if k == TRANSCRIPT_MIME else "".join(v) for k, v in shown[0]["data"].items()}
    assert [json.loads(m)["role"] for m in agent[TRANSCRIPT_MIME]["messages"]] == ["user", "assistant"]
    assert "It is **done**." in agent["text/html"] and agent["text/plain"].startswith("2 messages: user, assistant")
    # nbclient saves the last state of closed widgets: the cells emptied theirs before closing them
    models = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    assert all(len(json.dumps(model)) < 2_000 for model in models.values())
    assert with_state.stat().st_size < 30_000
    lines = [json.loads(line) for line in session_file(tmp_path).read_text().splitlines()]
    saved = [json.loads(m) for o in shown for m in o["data"][TRANSCRIPT_MIME]["messages"]]
    assert saved == [entry["message"] for entry in lines if entry.get("type") == "message"]  # the session, once


def test_a_long_text_is_whole_in_the_json_and_cut_in_the_fallbacks():
    text = "<script>alert(1)</script> " + "x" * 5_000_000
    bundle = transcript_bundle([to_pi_json(UserMessage(content=text))], ["both"])
    assert json.loads(bundle[TRANSCRIPT_MIME]["messages"][0])["content"] == text
    page = bundle["text/html"]
    assert len(page) < 5_000 and "more characters" in page and "&lt;script&gt;" in page
    assert page.count("<style>") == 1 and STYLE in page and "<script" not in page
    assert len(bundle["text/plain"]) < 1_000
