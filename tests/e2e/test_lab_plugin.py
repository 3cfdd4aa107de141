"""An installed plugin's role in real JupyterLab and Chromium (#26): the example plugin (examples/pi-notebook-tickets)
is pip-installed into a folder on the kernel's ``PYTHONPATH``; the notebook only loads the extension, imports the
plugin's message classes and records messages. No cell registers a role or a renderer, yet:

- the live transcript draws ``ticketEvent`` and ``orderNote`` with the plugin's own renderers, the message text as
  text (a ``<b>`` in it stays the two characters it is);
- the saved notebook holds the renderers in the transcript's saved form; reopened (trusted, without widget state:
  the saved form, no kernel code) it draws them again; an untrusted copy runs none of them and says so;
- the exported HTML page draws them too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.lab import chromium_page, open_notebook, run_all, running_lab, wait_all_cells_ran, write_notebook
from tests.test_plugins import ROOT, install_example

DETAIL = "<b>Order 5531</b> arrived damaged."
CELLS = [
    "%load_ext pi_notebook\nimport pi_notebook\nfrom pi_notebook_tickets import OrderNote, TicketEvent\n"
    "pi_notebook.current_session().config.cells = 'off'",
    f"pi_notebook.record(TicketEvent(ticket_id='T-1042', event='escalated', detail={DETAIL!r}))\n"
    "pi_notebook.record(OrderNote(order_id='5531', status='delivered', note='Delivered on Monday.',"
    " warehouse='BER-2'))\n"
    "pi_notebook.show(pi_notebook.current_session(), title='Ticket T-1042')",
    "pi_notebook.export_html(pi_notebook.current_session(), 'tickets.html', title='Ticket T-1042')",
]
SHOW = 1
TRANSCRIPT_MIME = "application/vnd.pi-notebook.transcript+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

DRAWN = """() => {
  const shown = (el) => !el.closest('.lm-mod-hidden, [hidden]');
  const article = (role) => [...document.querySelectorAll(`article[data-role=${role}]`)].find(shown);
  const ticket = article('ticketEvent');
  const order = article('orderNote');
  return {
    ticket: ticket?.querySelector('.ticket-event')?.textContent ?? null,
    ticketGeneric: !!ticket?.querySelector('.pi-unknown'),
    event: ticket?.querySelector('.ticket-event')?.dataset.event ?? null,
    bold: ticket ? ticket.querySelectorAll('.pi-msg-body b').length : null,
    order: order?.querySelector('.order-note')?.textContent ?? null,
    untrusted: [...document.querySelectorAll('[data-untrusted-renderers]')].map((el) => el.textContent),
  };
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab whose kernels find the installed example plugin (``PYTHONPATH``), and no MCP config."""
    site = install_example(tmp_path_factory.mktemp("plugin-site"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(site), str(ROOT)]))
        mp.setenv("PI_NOTEBOOK_MCP_CONFIG", str(site / "no-mcp.json"))
        with running_lab(tmp_path_factory, "plugin") as server:  # (the server copies the environment at start)
            yield server


def _drawn(page) -> dict:
    page.wait_for_selector("article[data-role=ticketEvent]:visible", timeout=60_000)
    page.wait_for_timeout(300)
    return page.evaluate(DRAWN)


def test_an_installed_plugins_role_is_drawn_by_its_own_renderer_live_saved_and_exported(lab):
    write_notebook(lab.root / "tickets.ipynb", CELLS)
    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "tickets.ipynb")
        run_all(page)
        assert wait_all_cells_ran(page) == []
        live = _drawn(page)
        assert live["ticket"] == f"escalated T-1042 {DETAIL}" and live["event"] == "escalated"
        assert not live["ticketGeneric"] and live["bold"] == 1  # the renderer's own <b>; the text's stays text
        assert live["order"] == "order 5531 · delivered · warehouse BER-2Delivered on Monday."
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)

    # the saved form carries the plugin's renderers (the live view's state kept in it on save)
    nb = json.loads((lab.root / "tickets.ipynb").read_text())
    [output] = nb["cells"][SHOW]["outputs"]
    renderers = output["data"][TRANSCRIPT_MIME]["renderers"]
    assert sorted(renderers) == ["orderNote", "ticketEvent"]
    # reopened without widget state: the saved form draws; signed (trusted) it runs them, unsigned not
    nb["metadata"].pop("widgets", None)
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(WIDGET_VIEW, None)
    for name in ("trusted.ipynb", "untrusted.ipynb"):  # (not the same text: trust goes by the notebook's hash)
        nb["metadata"]["copy"] = name
        (lab.root / name).write_text(json.dumps(nb, indent=1))
    trust = [sys.executable, "-m", "jupyter", "trust", str(lab.root / "trusted.ipynb")]
    subprocess.run(trust, env=lab.env, check=True, capture_output=True, timeout=120)

    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "trusted.ipynb")
        trusted = _drawn(page)
        assert trusted["ticket"] == live["ticket"] and trusted["order"] == live["order"]
        assert trusted["untrusted"] == []
        assert page.locator("[data-pi-saved=transcript] .ticket-event").count() == 1

    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "untrusted.ipynb")
        untrusted = _drawn(page)
        assert untrusted["ticket"] is None and untrusted["ticketGeneric"] and untrusted["order"] is None
        [note] = untrusted["untrusted"]
        assert "not trusted: the renderers saved with it for orderNote, ticketEvent did not run" in note

    # the exported page, opened as a double-click does
    with chromium_page(1280, 1000) as page:
        page.goto((lab.root / "tickets.html").as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        exported = _drawn(page)
        assert exported["ticket"] == live["ticket"] and exported["order"] == live["order"]
        artifacts = Path(__file__).parent / "_artifacts"
        artifacts.mkdir(exist_ok=True)
        page.locator("#pi-transcript").screenshot(path=str(artifacts / "plugin-export.png"))
