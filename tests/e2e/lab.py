"""JupyterLab on 127.0.0.1 and Debian's Chromium driven by Playwright, for the browser tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server in its own HOME and config folders, serving ``root``."""

    def __init__(self, root: Path, home: Path):
        self.root, self.home = root, home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = home / "lab-settings"
        news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True, exist_ok=True)
        news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        # "Save Widget State Automatically", so a saved notebook re-renders its widgets without a kernel.
        widgets = settings / "@jupyter-widgets" / "jupyterlab-manager" / "plugin.jupyterlab-settings"
        widgets.parent.mkdir(parents=True, exist_ok=True)
        widgets.write_text(json.dumps({"saveState": True}))
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / "jupyter-config"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        }
        self.log = (home / "lab.log").open("wb")
        cmd = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip", "127.0.0.1", "--port", str(self.port),
            "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
            f"--ServerApp.root_dir={root}", "--ServerApp.disable_check_xsrf=True",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: cells' execution counts and outputs
            "--JupyterNotebookApp.expose_app_in_browser=True",  # the same in Notebook 7's pages
        ]  # fmt: skip
        self.process = subprocess.Popen(cmd, cwd=root, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until_serving(self, "JupyterLab", "/api/status", 90)

    def stop(self) -> None:
        stop_server(self)


def wait_until_serving(server: Any, name: str, path: str, seconds: float) -> None:
    """Wait until ``server.url + path`` answers 200 (``server``: ``process``, ``url``, ``log``); stop it and raise
    naming its log if it exits or does not answer within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{name} exited; log: {server.log.name}")
        try:
            if httpx.get(server.url + path, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    stop_server(server)
    raise RuntimeError(f"{name} did not start in {seconds:.0f} s; log: {server.log.name}")


def stop_server(server: Any) -> None:
    """Terminate ``server.process`` (kill it after 15 s) and close its log."""
    server.process.terminate()
    try:
        server.process.wait(15)
    except subprocess.TimeoutExpired:
        server.process.kill()
    server.log.close()


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook whose code cells are ``cells`` (each with a stable id)."""
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))
    return path


def open_notebook(page, lab: Lab, name: str) -> None:
    """Open ``name`` in JupyterLab and wait until its kernel is ready (see :func:`wait_for_kernel`)."""
    # A workspace of its own, so notebooks opened by earlier tests are not restored next to this one.
    page.goto(f"{lab.url}/lab/workspaces/{uuid.uuid4().hex[:8]}/tree/{name}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    wait_for_kernel(page)


# JupyterLab's own view of the open notebook's kernel (in Lab and in Notebook 7): the session is ready and its
# kernel connected and idle. Before that, "Run All" silently runs nothing: the status bar reads "No Kernel",
# then "Initializing", "Connecting" and "Unknown" first.
_KERNEL_READY = """() => {
  const context = window.jupyterapp?.shell?.currentWidget?.sessionContext;
  const kernel = context?.session?.kernel;
  return Boolean(context?.isReady && kernel?.connectionStatus === "connected" && kernel.status === "idle");
}"""
_STATUS_BAR_IDLE = """() => {
  const bar = document.querySelector("#jp-main-statusbar");
  return !bar || bar.textContent.includes("Python 3 (ipykernel) | Idle");  // Notebook 7 has no status bar
}"""


def wait_for_kernel(page, timeout: float = 60_000) -> None:
    """Wait until the open notebook's kernel is attached and idle, as JupyterLab itself knows it, and the status
    bar says so (``Python 3 (ipykernel) | Idle``)."""
    page.wait_for_function(_KERNEL_READY, timeout=timeout, polling=100)
    page.wait_for_function(_STATUS_BAR_IDLE, timeout=timeout, polling=100)


# The code cells' execution counts (``null``: never run), from JupyterLab's notebook model.
_CODE_CELLS = """const model = window.jupyterapp?.shell?.currentWidget?.content?.model;
  const cells = [];
  for (let i = 0; model && i < model.cells.length; i++) {
    if (model.cells.get(i).type === "code") cells.push(model.cells.get(i));
  }"""
_EXECUTION_COUNTS = f"""() => {{
  {_CODE_CELLS}
  return cells.map((cell) => cell.executionCount ?? null);
}}"""
# Since the counts were ``before``: a cell runs (or waits to), or its count changed.
_RAN_SINCE = f"""(before) => {{
  {_CODE_CELLS}
  const prompts = [...document.querySelectorAll(".jp-Notebook .jp-InputPrompt")].map((p) => p.textContent);
  return cells.some((cell, i) => cell.executionState === "running" || (cell.executionCount ?? null) !== before[i])
    || prompts.some((text) => text.includes("[*]"));
}}"""


def run_all(page, timeout: float = 30_000) -> None:
    """Run every cell through the Run menu, once the kernel is ready; fail if that ran nothing (no cell started
    within ``timeout`` ms), instead of leaving a test to time out on outputs that never come."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    wait_for_kernel(page)
    before = page.evaluate(_EXECUTION_COUNTS)
    assert before, "the open notebook has no code cell (or window.jupyterapp is not exposed)"
    page.click("text=Run", timeout=10_000)
    page.click("text=Run All Cells", timeout=10_000)
    try:
        page.wait_for_function(_RAN_SINCE, arg=before, timeout=timeout, polling=100)
    except PlaywrightTimeoutError:
        raise AssertionError(f"Run All ran nothing: no code cell started within {timeout / 1000:.0f} s") from None


def wait_idle(page, timeout: float = 60_000) -> None:
    page.wait_for_timeout(500)
    page.wait_for_function(
        "() => (document.querySelector('#jp-main-statusbar')?.textContent || '').includes('Idle')", timeout=timeout
    )


def set_notebook_width(page, width: int = 968) -> None:
    """Resize the window until the open notebook is ``width`` px wide (the README's screenshots are taken so)."""
    for _ in range(4):
        now = page.evaluate("() => document.querySelector('.jp-Notebook').getBoundingClientRect().width")
        if abs(now - width) < 1:
            return
        viewport = page.viewport_size
        page.set_viewport_size({"width": viewport["width"] + round(width - now), "height": viewport["height"]})
        page.wait_for_timeout(300)
    raise AssertionError(f"the notebook is {now} px wide, not {width}")


# The open notebook's code cells, from JupyterLab's own model (not the DOM, which may lag or be windowed):
# null while the kernel is busy or a cell still waits; else how many cells have not run and the errors.
_RUN_STATE = """() => {
  const panel = window.jupyterapp?.shell?.currentWidget;
  const model = panel?.content?.model;
  if (!model || panel.sessionContext?.session?.kernel?.status !== "idle") return null;
  const state = { pending: 0, errors: [] };
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.type !== "code") continue;
    if (cell.executionCount === null || cell.executionCount === undefined) state.pending++;
    for (let j = 0; j < cell.outputs.length; j++) {
      const out = cell.outputs.get(j).toJSON();
      if (out.output_type === "error") state.errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
    }
  }
  return state.pending === 0 || state.errors.length ? state : null;
}"""


def wait_all_cells_ran(page, timeout: float = 120_000) -> list[str]:
    """Wait until every code cell has run (or one failed: Run All stops there) and the kernel is idle; return the
    error outputs as ``"cell <i>: <ename>: <evalue>"``."""
    page.wait_for_timeout(500)
    return page.wait_for_function(_RUN_STATE, timeout=timeout, polling=500).json_value()["errors"]


def fit_notebook_in_window(page) -> None:
    """Make the window tall enough for every cell of the notebook, so a screenshot can take any part of it."""
    scroller = page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").first
    for _ in range(3):  # cells laid out for the first time may grow (widgets render): measure again
        scroller.evaluate("el => el.scrollTo(0, 0)")
        page.wait_for_timeout(300)
        extra = scroller.evaluate(
            """el => {
                 const cells = el.querySelectorAll('.jp-Cell');
                 return Math.ceil(cells[cells.length - 1].getBoundingClientRect().bottom
                                  - el.getBoundingClientRect().bottom);
               }"""
        )
        if extra <= 0:
            break
        viewport = page.viewport_size
        page.set_viewport_size({"width": viewport["width"], "height": viewport["height"] + extra + 20})
        page.wait_for_timeout(800)


@contextlib.contextmanager
def running_lab(tmp_path_factory, name: str):
    """A :class:`Lab` in fresh ``<name>-root`` and ``<name>-home`` folders, stopped at the end (a module fixture's
    body: ``with running_lab(tmp_path_factory, "x") as lab: yield lab``)."""
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "install Debian's chromium (apt-get install chromium)"
    server = Lab(tmp_path_factory.mktemp(f"{name}-root"), tmp_path_factory.mktemp(f"{name}-home"))
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def chromium_page(width: int = 1280, height: int = 1000):
    """A page of a headless Debian Chromium driven by Playwright, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def run_cell(page, index: int) -> None:
    """Run the notebook's cell ``index`` as a user does: click into it, Shift+Enter."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def wait_ran(page, index: int, timeout: float = 120_000) -> None:
    """Wait until cell ``index`` shows an execution count (it ran)."""
    prompt = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt")
    page.wait_for_function("el => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=timeout)
