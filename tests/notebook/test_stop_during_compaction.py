"""Ctrl-C while an automatic compaction writes its summary: the summary call stops and nothing is recorded (Pi)."""

import _thread
import json
import threading
import time

from pi_notebook.ai import faux


def entry_types(path):
    return [json.loads(line)["type"] for line in path.read_text().splitlines()]


def test_stopping_a_cell_during_its_compaction_aborts_the_summary_and_records_no_compaction(shell, monkeypatch):
    shell.cell("%agent_config reserve_tokens=100 keep_recent_tokens=60")
    shell.session.resolve_model = lambda spec: faux.model(context_window=400)
    summary_started = threading.Event()

    def model(context):  # the same scripted model answers turns and writes summaries
        if "context summarization assistant" in (context.system_prompt or ""):
            summary_started.set()
            return "## Goal\n" + "A very slow summary. " * 200
        return "An answer. " * 20

    faux.set_responses([model] * 10)
    shell.agent("Tell me about A. " * 30)
    assert "compaction" not in entry_types(shell.session.file.path)

    monkeypatch.setattr(faux.provider, "tokens_per_second", 20)  # the summary streams for a minute if let run
    monkeypatch.setattr(faux.provider, "chunk_chars", 4)
    stopper = threading.Thread(target=lambda: summary_started.wait(10) and (time.sleep(0.3), _thread.interrupt_main()))
    stopper.start()
    started = time.monotonic()
    shell.agent("Tell me about B. " * 30)  # over the threshold: this prompt compacts before its LLM call
    stopper.join()
    assert summary_started.is_set()
    assert time.monotonic() - started < 10  # stopped mid-summary, not after it
    after = entry_types(shell.session.file.path)
    assert "compaction" not in after
    # No LLM call followed the stopped summary, and the history holds no summary of the half-written kind.
    assert "context summarization assistant" in (faux.calls[-1].system_prompt or "")
    assert all(m.role != "compactionSummary" for m in shell.session.messages)

    monkeypatch.setattr(faux.provider, "tokens_per_second", None)
    faux.set_responses(["## Goal\nLearn about A and B.", "Back."])
    shell.agent("Go on.")
    assert shell.session.messages[-1].content[0].text == "Back."
    assert entry_types(shell.session.file.path).count("compaction") == 1
