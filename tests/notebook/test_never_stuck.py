"""A session never gets stuck on a small context window (issue: one huge %bash output made every later
%%agent fail with the same overflow, also after a restart)."""

import pi_notebook
from pi_notebook.ai import faux
from pi_notebook.coding_agent.agent_session import NOTICE

WINDOW = 4096


def _provider_with_a_window(context):
    # A provider that refuses a prompt larger than its window, as llama.cpp and the APIs do.
    chars = sum(len(str(m.model_dump())) for m in context.messages)
    if chars / 4 > WINDOW:
        raise RuntimeError(f"prompt is too long: {chars // 4} tokens exceeds the context window of {WINDOW}")
    return "ok"


def _ask(shell, prompt):
    session = shell.session
    model = faux.model("small", context_window=WINDOW)
    faux.append_responses([_provider_with_a_window] * 3)
    return session.run_prompt(prompt, model=model, tools=[])[0]


def _notices(session):
    return [m for m in session.messages if m.role == "custom" and m.custom_type == NOTICE]


def test_a_shell_output_larger_than_the_window_is_cut_for_the_model_and_named_once(shell):
    shell.cell("%bash seq 1 60000")
    stored = shell.session.messages[-1].output
    new = _ask(shell, "What is 2+2?")
    assert new[-1].role == "custom"  # the notice, after the answer
    answer = [m for m in new if m.role == "assistant"]
    assert [a.stop_reason for a in answer] == ["stop"] and answer[0].content[0].text == "ok"
    (notice,) = _notices(shell.session)
    assert notice.content.startswith("The output of `seq 1 60000` is about")
    assert "use %bash! (shown, never sent), or pick a model with a larger window" in notice.content
    assert shell.session.messages[0].output == stored  # the stored output is untouched
    sent = faux.calls[-1].messages[0].content[0].text
    assert "characters cut here" in sent and len(sent) < len(stored)
    # The next question works too, and the same message is not named again.
    assert _ask(shell, "And 3+3?")[-1].stop_reason == "stop"
    assert len(_notices(shell.session)) == 1


def test_after_a_restart_the_session_still_answers_and_names_nothing_twice(shell):
    shell.cell("%bash seq 1 60000")
    _ask(shell, "What is 2+2?")
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    assert _ask(shell, "Still there?")[-1].stop_reason == "stop"
    assert len(_notices(pi_notebook.current_session())) == 1


def test_a_transcript_shows_a_retried_failure_once_counted():
    from pi_notebook.notebook.widgets import show

    def failure(text):
        return faux.message([], stop_reason="error", error_message=text)

    history = [failure("503 overloaded")] * 4 + [failure("401 bad key"), faux.message([faux.text("hi")])]
    shown = show(history).messages
    assert [m.get("errorMessage") for m in shown] == ["503 overloaded (4×)", "401 bad key", None]
