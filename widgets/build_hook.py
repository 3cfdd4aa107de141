"""Build the widgets' JS/CSS during ``pip install`` (a hatch-jupyter-builder build function).

``pyproject.toml`` points ``[tool.hatch.build.hooks.jupyter-builder] build-function`` here. On every wheel,
sdist or editable build it checks ``pi_notebook/notebook/static/`` (the widgets' bundles) and
``pi_notebook/labextension/`` (the prebuilt JupyterLab extension that draws saved outputs, which the wheel
installs to ``share/jupyter/labextensions/pi-notebook``): when a file is missing or older than its sources it runs
``npm ci`` (only when ``node_modules`` is missing or older than ``package-lock.json``) and ``npm run build`` in
``widgets/``; otherwise it does nothing, so a repeated ``pip install -e .`` stays fast.
``SKIP_JUPYTER_BUILDER=1`` (read by the hook itself) skips it entirely.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

WIDGETS = Path(__file__).resolve().parent
ROOT = WIDGETS.parent
STATIC = ROOT / "pi_notebook" / "notebook" / "static"
LABEXTENSION = ROOT / "pi_notebook" / "labextension"
TARGETS = (
    *(STATIC / name for name in ("transcript.js", "inspector.js", "static_model.js", "pi_notebook.css")),
    *(STATIC / name for name in ("approval.js", "approval.css")),
    LABEXTENSION / "package.json",
    LABEXTENSION / "static" / "style.js",
)
SOURCES = ("package.json", "package-lock.json", "build.mjs")

log = logging.getLogger(__name__)


def _newest(paths: Iterable[Path]) -> float:
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


def needs_build() -> bool:
    """True when a built file is missing, or a source under widgets/ is newer than the oldest built file."""
    if not all(t.is_file() for t in TARGETS):
        return True
    sources = [*(WIDGETS / "src").rglob("*"), *(WIDGETS / "labextension").rglob("*"), *(WIDGETS / n for n in SOURCES)]
    return _newest(sources) > min(t.stat().st_mtime for t in TARGETS)


def _run(cmd: list[str]) -> None:
    log.info("> %s  (in %s)", " ".join(cmd), WIDGETS)
    subprocess.run(cmd, cwd=WIDGETS, check=True)


def build(target_name: str, version: str, force: str | bool = False) -> None:
    """hatch-jupyter-builder entry point: ``target_name`` is wheel/sdist, ``version`` standard/editable."""
    if str(force).lower() != "true" and not needs_build():
        log.info("pi_notebook widgets: bundles are up to date (%s build of %s)", version, target_name)
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "pi_notebook: the widget bundles in pi_notebook/notebook/static/ are missing or stale and building "
            "them needs Node.js (18 or newer; the widget tests need 20.19+) with npm on PATH. Install Node.js, or "
            "install without the widgets' front end by setting SKIP_JUPYTER_BUILDER=1."
        )
    installed = WIDGETS / "node_modules" / ".package-lock.json"
    if not installed.is_file() or installed.stat().st_mtime < (WIDGETS / "package-lock.json").stat().st_mtime:
        _run([npm, "ci", "--no-audit", "--no-fund"])
    _run([npm, "run", "build"])
    missing = [str(t.relative_to(ROOT)) for t in TARGETS if not t.is_file()]
    if missing:
        raise RuntimeError(f"pi_notebook: `npm run build` did not produce {', '.join(missing)}")
