"""A differential check against a real Pi (run by hand, never in CI; not collected by the suite's pattern).

    npm install --prefix /tmp/pi-diff @mariozechner/pi-coding-agent
    PI_CODING_AGENT_JS=/tmp/pi-diff/node_modules/@mariozechner/pi-coding-agent \
        .venv/bin/python -m pytest tests/coding_agent/differential_pi_sessions.py

Pi's own SessionManager lists the same sessions for a directory as :func:`list_pi_sessions`, picks the notebook's
published session for ``pi -c``, and shows its re-append bug on a ``%bash``-only file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from pi_notebook.ai import UserMessage
from pi_notebook.coding_agent import BashExecutionMessage
from pi_notebook.coding_agent.pi_sessions import list_pi_sessions, new_draft_path, pi_session_dir, publish_draft
from pi_notebook.coding_agent.session import SessionFile

from .test_pi_sessions import PI_FIXTURES, _assistant, _pi_file, agent_dir  # noqa: F401 - agent_dir is a fixture

PI_JS = os.environ.get("PI_CODING_AGENT_JS", "")

NODE_SCRIPT = r"""
const [moduleDir, cwd, ourFile, bashOnly] = process.argv.slice(1);
const { SessionManager } = await import(moduleDir + "/dist/core/session-manager.js");
const listed = await SessionManager.list(cwd);
const pick = (s) => ({ path: s.path, id: s.id, name: s.name ?? null, firstMessage: s.firstMessage,
  messageCount: s.messageCount, modified: s.modified.getTime() });
const continued = SessionManager.continueRecent(cwd);
const assistant = { role: "assistant", content: [{ type: "text", text: "from pi" }], api: "x", provider: "x",
  model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() };
for (const path of [ourFile, bashOnly]) {
  const sm = SessionManager.open(path);
  sm.appendMessage({ role: "user", content: "from pi", timestamp: Date.now() });
  sm.appendMessage(assistant);
}
console.log(JSON.stringify({ listed: listed.map(pick), continued: continued.getSessionFile(),
  dir: continued.getSessionDir() }));
"""


def test_against_a_real_pi(agent_dir, tmp_path):  # noqa: F811 - the fixture imported above
    assert PI_JS, "set PI_CODING_AGENT_JS to an installed @mariozechner/pi-coding-agent (see this file's docstring)"
    cwd = str(tmp_path / "proj")
    os.makedirs(cwd)
    theirs = [_pi_file(pi_session_dir(cwd), f.name) for f in sorted(PI_FIXTURES.glob("*.jsonl"))]
    for path in theirs:
        os.utime(path, (1e9, 1e9))  # old files: `pi -c` must pick ours, the newest
    ours = SessionFile.create(new_draft_path(cwd), cwd=cwd)
    ours.append_message(BashExecutionMessage(command="ls", output="a\n", exit_code=0))
    ours.append_message(UserMessage(content="from the notebook"))
    ours.append_message(_assistant("hello"))
    ours = publish_draft(ours)
    ours.close()
    bash_only = tmp_path / "bash_only.jsonl"  # a notebook-layout file that Pi is pointed at by hand
    with SessionFile.create(bash_only, cwd=cwd) as file:
        file.append_message(BashExecutionMessage(command="ls", output="a\n", exit_code=0))
    mine = list_pi_sessions(cwd)  # before Pi appends
    run = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_SCRIPT, PI_JS, cwd, str(ours.path), str(bash_only)],
        capture_output=True, text=True, cwd=cwd, timeout=120, env={**os.environ},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    pi = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(pi["dir"]) == pi_session_dir(cwd)
    assert Path(pi["continued"]) == ours.path  # `pi -c` picks the notebook's session
    assert len(mine) > 10 and [p["path"] for p in pi["listed"]] == [str(s.path) for s in mine]
    for p, info in zip(pi["listed"], mine, strict=True):
        assert (info.id, info.name, info.first_message or "(no messages)") == (p["id"], p["name"], p["firstMessage"])
        assert (info.message_count, round(info.modified * 1000)) == (p["messageCount"], p["modified"])
    # Pi appended to our published file one entry at a time; the %bash-only file it wrote twice (its bug).
    ids = [json.loads(line).get("id") for line in ours.path.read_text().splitlines()]
    assert len(ids) == len(set(ids))
    kinds = [json.loads(line)["type"] for line in bash_only.read_text().splitlines()]
    assert kinds == ["session", "message", "session", "message", "message", "message"]
