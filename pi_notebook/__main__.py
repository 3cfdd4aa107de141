"""``python -m pi_notebook``: a short tour of the two message layers, in the terminal.

It builds an agent history with every coding-agent role, shows what the UI keeps (AgentMessage[]) and what
the LLM is sent (Message[] after convert_to_llm), and saves it as a Pi session file.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from .agent_core import convert_to_llm, to_pi_json, visibility
from .ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from .coding_agent import BashExecutionMessage, CompactionSummaryMessage, CustomMessage
from .coding_agent.session import SessionFile


def demo_history() -> list:
    """A small coding-agent history using every visibility level."""
    return [
        CompactionSummaryMessage(summary="The user set up a Python project.", tokens_before=48_000),
        BashExecutionMessage(command="pytest -q", output="1 failed, 4 passed", exit_code=1),
        BashExecutionMessage(command="cat .env", output="TOKEN=...", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="git-status", content="Branch: main, 2 files changed", display=False),
        UserMessage(content=[TextContent(text="Why does the test fail?")]),
        AssistantMessage(
            content=[ToolCall(id="call_1", name="read", arguments={"path": "test_app.py"})],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="assert add(2, 2) == 5")]),
        AssistantMessage(
            content=[TextContent(text="The test expects 2 + 2 == 5; the assertion is wrong.")],
            api="faux",
            provider="faux",
            model="faux-1",
        ),
    ]


def _one_line(data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False)
    return text if len(text) <= 150 else text[:147] + "..."


def main(out=sys.stdout) -> Path:
    history = demo_history()
    print("AgentMessage[] — what the UI and the session file keep:", file=out)
    for m in history:
        print(f"  [{visibility(m).level:>4}] {m.role:<17} {_one_line(to_pi_json(m))}", file=out)
    print("\nMessage[] — what the LLM is sent after convert_to_llm:", file=out)
    for m in convert_to_llm(history):
        print(f"  {m.role:<10} {_one_line(to_pi_json(m))}", file=out)
    path = Path(tempfile.mkdtemp(prefix="pi_notebook_demo_")) / "session.jsonl"
    with SessionFile.create(path, cwd=str(Path.cwd())) as session:
        for m in history[1:]:
            session.append_message(m)
    with SessionFile.open(path, readonly=True) as session:
        n = len(session.build_session_context().messages)
    print(f"\nSaved as a Pi session file ({n} messages, reopened): {path}", file=out)
    return path


if __name__ == "__main__":
    main()
