"""The inspector says in plain words what the offline model is not sent (#24): earlier answers and tool calls left
out, the prompt before sent as a note to a prompt that refers back, a hidden command as a note that it ran (never
its output)."""

import json

from pi_notebook.agent import BashExecutionMessage
from pi_notebook.ai import AssistantMessage, TextContent, UserMessage
from pi_notebook.coding_agent.agent_session import AgentSession
from pi_notebook.coding_agent.context_fit import EARLIER, HIDDEN_NOTE, LEFT_OUT
from pi_notebook.coding_agent.run_policy import SessionSettings
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook.inspector_source import retrace, source_of


def _reply(text):
    return AssistantMessage(content=[TextContent(text=text)], api="local", provider="local", model="smollm2-135m")


def test_the_rows_of_the_offline_models_next_request_say_what_it_does_not_see(tmp_path):
    session = AgentSession(
        SessionFile.create(str(tmp_path / "s.jsonl"), cwd=str(tmp_path)), SessionSettings(default_model="local"),
        cwd=str(tmp_path),
    )  # fmt: skip
    history = [
        UserMessage(content="My name is Ada.", timestamp=1),
        _reply("Hi Ada!"),
        BashExecutionMessage(command="echo $TOKEN", output="s3cret", exclude_from_context=True),
        UserMessage(content="What is my name?", timestamp=2),
        _reply("Ada."),
    ]
    for message in history:
        session.record(message)
    rows = retrace(source_of(session), None, first_only=False).rows  # the next prompt: not known yet
    said = [(r["index"], r["status"], r["reason"], r["produced_text"]) for r in rows]
    assert said == [
        (0, "dropped", LEFT_OUT, ""),
        (1, "dropped", LEFT_OUT, ""),
        (2, "dropped", "excludeFromContext (%bash!): shown, never sent", ""),
        (None, "injected", "added by transform_context", HIDDEN_NOTE),
        (3, "dropped", LEFT_OUT, ""),
        (4, "dropped", LEFT_OUT, ""),
    ]
    sent = json.dumps([r["llm"] for r in rows])
    assert "s3cret" not in sent and "TOKEN" not in sent and "Hi Ada" not in sent
    # a prompt that refers back ("I") gets the prompt before it, as a note
    preview = session.preview("What did I ask?")
    texts = [m.content if isinstance(m.content, str) else m.content[0].text for m in preview.call.context.messages]
    assert texts == [HIDDEN_NOTE, EARLIER + "What is my name?", "What did I ask?"]
