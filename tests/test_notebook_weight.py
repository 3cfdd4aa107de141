"""The committed teaching notebooks stay small and carry no widget code (#25, item 5): ``show()``, ``inspect()``
and the magics save their static form (the JSON the JupyterLab extension draws, ``text/html`` that GitHub shows,
``text/plain``), so a notebook's widget state, if any, holds no widget script; the eleven lessons 00-10 together
stay under 600 KB and any lesson under 100 KB. Re-execute a notebook headless (``jupyter nbconvert --execute``) and
this still holds."""

from __future__ import annotations

import json
from pathlib import Path

from pi_notebook.notebook.static_display import DISCARDED_ESM, WIDGET_VIEW

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]-*.ipynb"))
LIMIT = 600_000
"""Bytes of lessons 00-10 together (#25)."""
EACH = 100_000
"""Bytes of any one lesson."""
STATE = "application/vnd.jupyter.widget-state+json"


def _scripts(path: Path) -> list[str]:
    """Where ``path`` holds widget code: a saved widget state with a script or a stylesheet, or an output that
    shows a widget view (its model would have to come from that state)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    states = nb.get("metadata", {}).get("widgets", {}).get(STATE, {}).get("state", {})
    for model_id, entry in states.items():
        state = entry.get("state", {})
        if state.get("_esm", DISCARDED_ESM) != DISCARDED_ESM or state.get("_css"):
            found.append(f"widget state {model_id} holds {len(state.get('_esm', '')):,} characters of script")
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            if WIDGET_VIEW in output.get("data", {}):
                found.append(f"cell {index} shows a widget view")
    return found


def test_no_committed_notebook_holds_widget_script():
    assert len(NOTEBOOKS) >= 11
    bad = {path.name: found for path in NOTEBOOKS if (found := _scripts(path))}
    assert bad == {}


def test_the_committed_notebooks_together_stay_under_600_kb():
    sizes = {path.name: path.stat().st_size for path in NOTEBOOKS}
    first = {name: size for name, size in sizes.items() if int(name[:2]) <= 10}
    assert len(first) == 11 and sum(first.values()) < LIMIT, f"{sum(first.values()):,} bytes: {first}"
    assert {name: size for name, size in sizes.items() if size >= EACH} == {}
