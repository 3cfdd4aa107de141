"""The teaching notebooks run, offline, and still print what they were committed with (strict nbval).

nbval runs in a subprocess so its kernels and its options stay out of
this test session; ``pytest -q`` from the repository root thus covers the notebooks too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
COMMAND = [
    sys.executable, "-m", "pytest", "--nbval", "notebooks",
    "--nbval-sanitize-with", "notebooks/nbval_sanitize.cfg", "-p", "no:cacheprovider", "-q",
]  # fmt: skip


def test_notebooks_are_committed_executed():
    notebooks = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    assert [p.name[:2] for p in notebooks] == [f"{i:02d}" for i in range(15)]
    for path in notebooks:
        text = path.read_text(encoding="utf-8")
        assert '"execution_count": null' not in text, f"{path.name} has cells that were not run"


def test_notebooks_pass_strict_nbval():
    # No API key may reach the kernels: the notebooks must run offline (faux and local models only).
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("JPY_SESSION_NAME", None)
    result = subprocess.run(COMMAND, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"nbval failed:\n{result.stdout[-8000:]}\n{result.stderr[-2000:]}"
