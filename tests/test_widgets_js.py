"""The JavaScript renderers' own tests (node:test + jsdom, XSS corpus included), run as part of the suite."""

import re
import shutil
import subprocess
from pathlib import Path

WIDGETS = Path(__file__).resolve().parent.parent / "widgets"


def test_widget_renderers_pass_their_javascript_tests():
    npm = shutil.which("npm")
    assert npm, "npm is needed to build and test the widgets (Node.js ≥ 20)"
    # The test never fetches packages (no network in tests): installing the project runs `npm ci` once.
    assert (WIDGETS / "node_modules").is_dir(), (
        "widgets/node_modules is missing: run `pip install -e .` or `npm ci` in widgets/"
    )
    proc = subprocess.run([npm, "test"], cwd=WIDGETS, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"^\S*\s*pass [1-9]\d*$", proc.stdout, re.M) and re.search(r"^\S*\s*fail 0$", proc.stdout, re.M)
