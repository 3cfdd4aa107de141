"""P2: what ``%load_ext pi_notebook`` adds to the start of a fresh IPython, and what it imports.

Each sample is a fresh interpreter (a subprocess): one starts IPython's terminal shell (what ``ipython`` runs) and
stops, the other starts it and runs ``%load_ext pi_notebook``; the two kinds alternate (bare, load, bare, load, ...), so
that the machine's load affects both alike. Each child times itself from before ``import IPython`` to the end,
so the interpreter's own start, identical in both, is left out. The row reports the added time of each pair
(load minus the bare start just before it), median, min and max; the note gives both medians and the same in
CPU time (less sensitive to other processes on a shared machine).

The children run in a temporary folder (the session file ``%load_ext`` opens is created there) with their own
``IPYTHONDIR``, the checkout on ``PYTHONPATH``, and bytecode caching on (the warm-up run writes it), so that
compiling the sources is not measured.

The shell is the terminal's, not the bare ``InteractiveShell`` that no front end runs: both front ends a user
meets, ``ipython`` and a Jupyter kernel, have imported ``asyncio`` and ``ssl`` before any extension loads (the
terminal through prompt_toolkit, ipykernel through tornado and zmq), and the bare shell charged them to
``%load_ext`` (about 20 ms).

A second row checks what the extension imports before anything is displayed: no provider SDK (``openai``,
``anthropic``, ``llama_cpp``) and neither ``anywidget`` nor ``ipywidgets``; ``jsonschema`` (a second to import)
is reported too.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .harness import Result, Stat, goal, measure

ROOT = Path(__file__).resolve().parents[2]
WATCHED = ("openai", "anthropic", "llama_cpp", "anywidget", "ipywidgets", "jsonschema")
"""Modules reported after ``%load_ext``; all but ``jsonschema`` must be absent before the first display."""
FORBIDDEN = ("openai", "anthropic", "llama_cpp", "anywidget", "ipywidgets")
LIMIT_MS = 150.0

_CHILD = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
from IPython.terminal.interactiveshell import TerminalInteractiveShell
shell = TerminalInteractiveShell.instance()
if {load!r} == "load":
    shell.run_line_magic("load_ext", "pi_notebook")
elif {load!r} == "pydantic":
    from pydantic import BaseModel, Field
    class Message(BaseModel):
        role: str = Field("user", description="one model: pydantic imports the rest of itself for the first")
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
watched = [name for name in {watched!r} if name in sys.modules]
print(json.dumps({{"wall": wall, "cpu": cpu, "modules": watched}}))
"""


def _child_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JPY_SESSION_NAME")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["IPYTHONDIR"] = str(folder / "ipython")
    return env


def _run(load: str, folder: Path, env: dict[str, str]) -> dict[str, object]:
    """One fresh interpreter: ``load`` is ``"bare"``, ``"load"`` (``%load_ext pi_notebook``) or ``"pydantic"``
    (importing pydantic and defining one model: the floor of any extension whose messages are pydantic models)."""
    code = _CHILD.format(load=load, watched=WATCHED)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"child failed ({load}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms ({min(values) * 1000:.0f}–{max(values) * 1000:.0f})"


@measure("P2", "%load_ext pi_notebook: time added to a fresh IPython start, and what it imports")
def load_ext(quick: bool) -> list[Result]:
    pairs = 2 if quick else 15
    with tempfile.TemporaryDirectory(prefix="pi_bench_import_") as tmp:
        folder = Path(tmp)
        env = _child_env(folder)
        for kind in ("bare", "load", "pydantic"):  # warm-up: IPython's folder, bytecode caches, the OS file cache
            _run(kind, folder, env)
        bare: list[dict[str, object]] = []
        loaded: list[dict[str, object]] = []
        floor: list[dict[str, object]] = []
        for _ in range(pairs):
            bare.append(_run("bare", folder, env))
            loaded.append(_run("load", folder, env))
            floor.append(_run("pydantic", folder, env))

    added = [float(load["wall"]) - float(b["wall"]) for b, load in zip(bare, loaded, strict=True)]
    added_cpu = [float(load["cpu"]) - float(b["cpu"]) for b, load in zip(bare, loaded, strict=True)]
    bare_wall, load_wall = [float(b["wall"]) for b in bare], [float(x["wall"]) for x in loaded]
    bare_cpu, load_cpu = [float(b["cpu"]) for b in bare], [float(x["cpu"]) for x in loaded]
    time_row = Result(
        "P2",
        f"%load_ext pi_notebook: load − bare start, {pairs} interleaved pairs of fresh interpreters",
        f"bare start {statistics.median(bare_wall) * 1000:.0f} ms, "
        f"with it {statistics.median(load_wall) * 1000:.0f} ms",
        Stat.of(added),
        note=(
            f"wall: bare {_ms(bare_wall)}, with %load_ext {_ms(load_wall)}; CPU: bare {_ms(bare_cpu)}, "
            f"with %load_ext {_ms(load_cpu)}, added {_ms(added_cpu)}"
        ),
    )

    floor_added = [float(f["wall"]) - float(b["wall"]) for b, f in zip(bare, floor, strict=True)]
    floor_row = Result(
        "P2",
        "import pydantic, define one model (what message models need): − bare start",
        "—",
        Stat.of(floor_added),
        note="the same fresh interpreters, interleaved with the rows above: the part of %load_ext no extension "
        "whose messages are pydantic models can avoid",
    )

    seen = sorted({name for x in loaded for name in x["modules"]})  # type: ignore[union-attr]
    present = [name for name in FORBIDDEN if name in seen]
    modules_row = Result(
        "P2",
        "provider SDKs, anywidget, ipywidgets imported by %load_ext (before the first display)",
        "—",
        Stat.of([float(len(present))]),
        unit="modules",
        note=f"imported: {', '.join(seen) or 'none of ' + ', '.join(WATCHED)}",
    )
    goal(time_row, LIMIT_MS / 1000, quick, text=f"≤ +{LIMIT_MS:g} ms", noise=0.20)  # ±30 ms between runs here
    goal(modules_row, 0, False, text="none", noise=0)  # a count, judged in quick mode too
    return [time_row, floor_row, modules_row]
