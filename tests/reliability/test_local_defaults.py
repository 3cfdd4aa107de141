"""A plain ``%%agent`` with no key and no Ollama runs the offline model with its own defaults, on a real kernel.

What the small-model policy promises (``coding_agent/run_policy.py``), checked through the magic a user types and
not through ``plan_run``: the model is the in-process ``local`` one; its tools are the read-only ``read``,
``ls`` and the notebook's ``vars``, never ``bash``, ``edit``, ``write`` or ``python``; each tool's ``path`` is a
JSON-Schema ``enum`` of the entries that exist (two levels down, plus a deeper one the prompt names; hidden ones
and the session folder left out), so the grammar-constrained model cannot invent a path; and the system prompt is
the short local one. Read from what leaves the kernel for the model (the provider's ``on_payload`` hook) and from
the agent's state after the run.
"""

from __future__ import annotations

import json

import pytest

from pi_notebook.ai.keys import ENV_VARS
from pi_notebook.coding_agent.run_policy import LOCAL_SYSTEM_PROMPT
from tests.reliability.test_real_kernel import SETUP

HOOK = """
payloads = []
pi_notebook.current_session().agent.stream_options["on_payload"] = (
    lambda body, model: payloads.append(json.loads(json.dumps(body))))
"""
STATE = """
state = pi_notebook.current_session().agent.state
print(json.dumps({"model": [state.model.provider, state.model.api, state.model.id],
                  "system": state.system_prompt,
                  "tools": {t.name: t.parameters for t in state.tools},
                  "payloads": payloads}))
"""


@pytest.fixture
def offline(monkeypatch):
    pytest.importorskip("llama_cpp")  # installed here and in CI: skipped only where the extra is missing
    for variable in {v for names in ENV_VARS.values() for v in names}:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there


def test_a_plain_agent_cell_runs_the_local_model_with_read_only_tools_and_existing_paths(offline, kernels, tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    (tmp_path / "notes" / "deep").mkdir(parents=True)
    (tmp_path / "notes" / "todo.txt").write_text("buy milk\n")
    (tmp_path / "notes" / "deep" / "plan.md").write_text("# Plan\n")  # three levels down: only if named
    (tmp_path / "notes" / "deep" / "other.md").write_text("# Other\n")
    (tmp_path / ".env").write_text("SECRET=1\n")  # hidden: never offered
    kernel = kernels()
    kernel.run(SETUP)
    kernel.run(HOOK)
    prompt = "Is there a file notes/deep/plan.md here? Answer yes or no."
    kernel.run(f"%%agent\n{prompt}", cell_id="c1", timeout=600)  # a 135M model, but on a busy 2-core machine
    seen = json.loads(kernel.run(STATE).strip().splitlines()[-1])

    assert seen["model"] == ["local", "local", "smollm2-135m"]
    assert seen["system"] == LOCAL_SYSTEM_PROMPT
    tools = seen["tools"]
    assert list(tools) == ["read", "ls", "vars"]  # read-only, and only these three (vars: the notebook's own)
    assert tools["read"]["properties"]["path"]["enum"] == ["data.csv", "notes/todo.txt", "notes/deep/plan.md"]
    assert tools["ls"]["properties"]["path"]["enum"] == [".", "notes", "notes/deep"]

    # What the model was given: the short prompt, and the two tools it may call (the provider writes them into
    # the system message; its grammar takes the paths from the enums above).
    first = seen["payloads"][0]
    assert first["model"] == "smollm2-135m"
    system = first["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(LOCAL_SYSTEM_PROMPT + "\n\n")
    listed = [line.split()[1] for line in system["content"].splitlines() if line.startswith("- ")]
    assert listed == ["read", "ls", "vars"]
    for other in ("bash", "edit", "write", "grep", "find", "python", "new_cell"):
        assert f'"name": "{other}"' not in system["content"]
    messages = kernel.messages()
    assert messages[0]["role"] == "user" and messages[0]["content"][0]["text"] == prompt
    replies = [m for m in messages if m["role"] == "assistant"]
    assert replies and all(m["provider"] == "local" and m["stopReason"] != "error" for m in replies), replies
