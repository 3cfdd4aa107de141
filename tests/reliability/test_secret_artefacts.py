"""A secret in the environment ends up in no artefact (issue #11: secrets, end to end).

``MY_SERVICE_API_KEY`` is printed by ``%bash env``, ``%bash!``, a long ``%bash`` (so the full output goes to a
temp file too) and by the agent's ``bash`` tool called through the faux model. Then every artefact a user keeps
or shares is searched for the secret in any form (raw, repr'd, JSON-escaped, URL-encoded, or any 8 characters
of it): the session file and anything else in the notebook's folder, the full-output files, ``repr`` and every
mimebundle of the transcript and the inspector (their widget state included), captured logging, and, through
a real kernel, the notebook as ``jupyter nbconvert --execute`` saves it (with the widget state nbclient
stores), its HTML and Markdown exports and what the two commands printed.

Masking is :mod:`pi_notebook.coding_agent.secrets` (``mask_secrets``, on by default).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest

import pi_notebook
from pi_notebook.ai import faux

SECRET = "svc-" + "Q7mZ2pLx" + "9Vw4Rt8K" + "j3Hn"  # built at run time: no literal of it in the repository
NAME = "MY_SERVICE_API_KEY"
MASKED = f"[masked: {NAME}]"
LONG = f'for i in $(seq 1 3000); do echo "line $i ${NAME}=${NAME}"; done'  # > 2000 lines: a full-output file


def leaks(text: str) -> bool:
    """Whether ``text`` shows the secret in any form, or any 8 characters of it (an independent check)."""
    forms = {SECRET, repr(SECRET)[1:-1], json.dumps(SECRET)[1:-1], quote(SECRET, safe="")}
    return any(f in text for f in forms) or any(SECRET[i : i + 8] in text for i in range(len(SECRET) - 7))


@pytest.fixture(autouse=True)
def secret_env(monkeypatch):
    for name in [n for n in os.environ if n.endswith(("_API_KEY", "_TOKEN", "_SECRET"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(NAME, SECRET)


def _files_under(folder: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file()}


def _bundle(obj) -> dict:
    result = obj._repr_mimebundle_()
    return result[0] if isinstance(result, tuple) else result


# --- a real IPython shell: session, views, logs ----------------------------------------------------------------


def test_no_secret_in_the_session_views_logs_or_output_files(shell, caplog, capsys, tmp_path):
    caplog.set_level(logging.DEBUG)
    shell.cell("%bash env | sort")
    shell.cell(f"%bash! echo ${NAME}")
    shell.cell(f"%bash {LONG}")
    faux.set_responses(
        [
            [faux.tool_call("bash", {"command": "env; echo $" + NAME})],
            [faux.tool_call("bash", {"command": LONG})],
            "I saw the environment.",
        ]
    )
    shell.agent("Look at the environment.", "--model faux/faux-1 --tools bash")
    session = shell.session
    messages = session.messages
    roles = [m.role for m in messages]
    assert roles == ["bashExecution"] * 3 + ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    # The secret was printed, and masked where it appeared.
    assert f"{NAME}={MASKED}" in messages[0].output and messages[1].output == MASKED + "\n"
    assert MASKED in messages[5].content[0].text and MASKED in messages[7].content[0].text

    full_outputs = [Path(messages[2].full_output_path), Path(messages[7].details["fullOutputPath"])]
    assert all(p.is_file() for p in full_outputs)
    transcript = pi_notebook.show(session, show_hidden=True)
    inspector = pi_notebook.inspect(session)
    artefacts = {
        **{f"file {p}": text for p, text in _files_under(tmp_path).items()},  # the session, and anything else
        **{f"full output {p}": p.read_text(encoding="utf-8", errors="replace") for p in full_outputs},
        "messages (Pi JSON)": json.dumps([m.to_pi_json() for m in messages]),
        "messages repr": repr(messages),
        "transcript repr": repr(transcript),
        "transcript bundle": json.dumps(_bundle(transcript), default=str),
        "transcript widget state": json.dumps(transcript.get_state(), default=str),
        "inspector repr": repr(inspector),
        "inspector bundle": json.dumps(_bundle(inspector), default=str),
        "inspector widget state": json.dumps(inspector.get_state(), default=str),
        "what the model was sent": json.dumps([c.to_pi_json() for c in faux.calls], default=str),
        "logging": caplog.text,
        "printed": "".join(capsys.readouterr()),
    }
    assert any(p.suffix == ".jsonl" for p in _files_under(tmp_path))
    assert MASKED in artefacts["transcript bundle"] and MASKED in artefacts["inspector widget state"]
    assert [name for name, text in artefacts.items() if leaks(text)] == []
    assert not leaks(json.dumps(caplog.records, default=lambda r: vars(r), ensure_ascii=False))


def test_the_search_finds_the_secret_when_masking_is_off(shell, tmp_path):
    """The searches above are only worth as much as they find: with masking off the secret is stored."""
    shell.cell("%agent_config mask_secrets=False")
    shell.cell("%bash env")
    assert leaks(shell.session.file.path.read_text()) and leaks(json.dumps(_bundle(pi_notebook.show(shell.session))))


# --- a real kernel under nbconvert: the saved notebook, its widget state, its exports -------------------------------

CELLS = [
    "%load_ext pi_notebook\nimport logging, pi_notebook\nfrom pi_notebook.ai import faux\n"
    "logging.basicConfig(filename='kernel.log', level=logging.DEBUG, force=True)",
    "%bash env | sort",
    f"%bash! echo ${NAME}",
    f"%bash {LONG}",
    "faux.set_responses([[faux.tool_call('bash', {'command': 'env; echo $" + NAME + "'})], 'I saw it.'])",
    "%%agent --model faux/faux-1 --tools bash\nLook at the environment.",
    "pi_notebook.show(pi_notebook.current_session(), show_hidden=True)",
    "pi_notebook.inspect(pi_notebook.current_session())",
    "print(repr(pi_notebook.current_session().messages))",
]


def _jupyter(folder: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", *args], cwd=folder, capture_output=True, text=True, timeout=600
    )  # the environment, secret included, is inherited: the kernel's %bash and tools see it
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_no_secret_in_the_executed_notebook_its_widget_state_or_its_exports(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "work.ipynb")
    printed = _jupyter(tmp_path, "nbconvert", "--to", "notebook", "--execute", "work.ipynb", "--output", "done.ipynb")
    printed += _jupyter(tmp_path, "nbconvert", "--to", "html", "done.ipynb")
    printed += _jupyter(tmp_path, "nbconvert", "--to", "markdown", "done.ipynb")

    done = nbformat.read(tmp_path / "done.ipynb", as_version=4)
    # a headless run saves no widget state (#25): show(), inspect() and the magics keep their static form only
    assert "widgets" not in done.metadata
    outputs = json.dumps([c.get("outputs", []) for c in done.cells])
    assert MASKED in outputs and "error" not in [o["output_type"] for c in done.cells for o in c.get("outputs", [])]
    files = _files_under(tmp_path)
    assert {"done.ipynb", "done.html", "done.md", "kernel.log"} <= {p.name for p in files}
    assert any(p.suffix == ".jsonl" for p in files) and (tmp_path / "kernel.log").stat().st_size > 0
    entries = [json.loads(line) for p, t in files.items() if p.suffix == ".jsonl" for line in t.splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    full_outputs = [Path(m["fullOutputPath"]) for m in messages if m.get("fullOutputPath")]
    full_outputs += [
        Path(m["details"]["fullOutputPath"]) for m in messages if "fullOutputPath" in (m.get("details") or {})
    ]
    assert full_outputs and all(p.is_file() for p in full_outputs)
    artefacts = {str(p): text for p, text in files.items()}
    artefacts |= {str(p): p.read_text(encoding="utf-8", errors="replace") for p in full_outputs}
    artefacts["what jupyter printed"] = printed
    assert [name for name, text in artefacts.items() if leaks(text)] == []
