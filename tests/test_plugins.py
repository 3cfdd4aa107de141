"""Plugins by entry point (#26): an installed package registers roles with their converters, transcript renderers
and tools, with no notebook code.

The example plugin (``examples/pi-notebook-tickets``, notebook 09's ticket app) is really installed: pip builds it
from its folder (no network: ``--no-index --no-deps --no-build-isolation``, hatchling from ``[dev]``) into a
``--target`` folder with its dist-info, which a subprocess finds on ``PYTHONPATH``; there a real IPython shell loads
the extension and a scripted model calls the plugin's tool. Broken plugins (an import error, a role another class
holds, an entry point that is not a function) cost one line each, register nothing, and the rest loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_notebook.agent_core import registered_message_types
from pi_notebook.ai import PiModel
from pi_notebook.coding_agent import plugins
from pi_notebook.coding_agent.plugins import PluginError, PluginSetup, load_plugins
from pi_notebook.coding_agent.tools import tool_names, unregister_tool
from pi_notebook.notebook import saved, widgets

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "pi-notebook-tickets"
RENDERERS = EXAMPLE / "pi_notebook_tickets"


def install_example(target: Path) -> Path:
    """pip-install the example plugin into ``target`` (a folder for ``PYTHONPATH``), offline; returns it."""
    pytest.importorskip("hatchling", reason="the example's build backend: pip install -e '.[dev]'")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), str(EXAMPLE)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (target / "pi_notebook_tickets-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


def plain_env(tmp_path: Path, *paths: Path) -> dict[str, str]:
    """The environment of a subprocess: no API keys, a home of its own (no MCP config of the user's), ``paths``
    on ``PYTHONPATH`` before the project."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=os.pathsep.join([*map(str, paths), str(ROOT)]))
    env.pop("PI_NOTEBOOK_MCP_CONFIG", None)
    return env


def write_plugin(site: Path, dist: str, entry: str, modules: dict[str, str]) -> None:
    """A plugin package installed by hand: its modules and a dist-info with the entry point (what pip writes)."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # (the folder's name before its first '-' is the name)
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pi_notebook.plugins]\n{entry}\n")
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source)


BROKEN = {
    "broken": ("broken = pi_nb_broken:setup", {"pi_nb_broken": "raise ImportError('no helpdesk client here')\n"}),
    "clash": (
        "clash = pi_nb_clash:setup",
        {
            "pi_nb_clash": (
                "from typing import Literal\n"
                "from pi_notebook.ai import PiModel\n"
                "class Mine(PiModel):\n"
                "    role: Literal['bashExecution'] = 'bashExecution'\n"
                "def setup(plugin):\n"
                "    plugin.register_tool('clash_tool', lambda cwd: None, read_only=True)\n"
                "    plugin.register_message_type(Mine)\n"
            )
        },
    ),
    "constant": ("constant = pi_nb_constant:VALUE", {"pi_nb_constant": "VALUE = 42\n"}),
}

NOTEBOOK = r"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell

ip = InteractiveShell.instance()
ip.user_ns["__session__"] = "tickets.ipynb"
ip.run_line_magic("load_ext", "pi_notebook")
print("---")
import pi_notebook
from pi_notebook.agent_core import registered_message_types
from pi_notebook.ai import faux
from pi_notebook.coding_agent.tools import registered_tool, tool_names
from pi_notebook.notebook.export import page_state
from pi_notebook.notebook.saved import TRANSCRIPT_MIME
from pi_notebook.notebook.widgets import registered_renderers
from pi_notebook_tickets import OrderNote, TicketEvent

session = pi_notebook.current_session()
session.config.cells = "off"
pi_notebook.record(TicketEvent(ticket_id="T-1042", event="opened", detail="Order 5531 arrived damaged."))
pi_notebook.record(OrderNote(order_id="5531", status="delivered", note="Ask a lead.", warehouse="BER-2",
                             staff_only=True))
faux.set_responses([faux.tool_call("ticket_status", {"ticket_id": "T-1042"}), "T-1042 is open, high priority."])
ip.run_cell("%%agent --model faux/faux-1 --tools ticket_status\nWhat is the status of T-1042?")
tool = registered_tool("ticket_status")
shown = pi_notebook.show(session.messages[:1])  # the ticketEvent only
print(json.dumps({
    "roles": [t.role for t in registered_message_types()],
    "tools": list(tool_names()),
    "tool": [tool.read_only, tool.default],
    "renderers": registered_renderers(),
    "session": [m.role for m in session.messages],
    "result": session.messages[-2].content[0].text,
    "sent": [m.content if isinstance(m.content, str) else m.content[0].text for m in faux.calls[0].messages],
    "offered": [t.name for t in faux.calls[0].tools],
    "saved": shown.saved_bundle()[TRANSCRIPT_MIME].get("renderers", {}),
    "export": page_state(session)["transcript"]["renderers"],
}))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The example installed with pip, and three broken plugins installed by hand beside it."""
    target = install_example(tmp_path_factory.mktemp("site"))
    for dist, (entry, modules) in BROKEN.items():
        write_plugin(target, f"pi-nb-{dist}", entry, modules)
    return target


def test_the_installed_example_registers_its_roles_renderers_and_tool_at_load_ext(site, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", NOTEBOOK], cwd=tmp_path, env=plain_env(tmp_path, site),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loading, _, rest = done.stdout.partition("---\n")
    report = json.loads(rest.strip().splitlines()[-1])

    # one line per broken plugin, saying which and why; nothing else said
    lines = loading.strip().splitlines()
    assert len(lines) == 3, lines
    assert "plugin 'broken' (pi-nb-broken 1.0) failed to load, skipped: ImportError: no helpdesk client" in lines[0]
    assert "plugin 'clash'" in lines[1] and "role 'bashExecution' is already registered" in lines[1]
    assert "plugin 'constant'" in lines[2] and "pi_nb_constant:VALUE is not a function setup(plugin)" in lines[2]
    assert "clash_tool" not in report["tools"], "a plugin that fails registers nothing"

    # the plugin's roles, converters, renderers and tool, with no notebook code registering them
    assert report["roles"][-2:] == ["ticketEvent", "orderNote"]
    assert "ticket_status" in report["tools"] and report["tool"] == [True, False]  # read-only, not a default
    assert report["renderers"] == {
        "ticketEvent": (RENDERERS / "ticket_event.js").read_text(),
        "orderNote": (RENDERERS / "order_note.js").read_text(),
    }
    assert report["session"] == ["ticketEvent", "orderNote", "user", "assistant", "toolResult", "assistant"]
    assert json.loads(report["result"])["priority"] == "high"
    # what the model read: the ticket as one line; nothing of the staff-only note
    assert report["sent"][:2] == [
        "[ticket T-1042] opened: Order 5531 arrived damaged.",
        "What is the status of T-1042?",
    ]
    assert report["offered"] == ["ticket_status"]
    # the saved form carries the renderer of the roles it shows; the exported page those of the session
    assert list(report["saved"]) == ["ticketEvent"]
    assert sorted(report["export"]) == ["orderNote", "ticketEvent"]


def test_an_agent_session_without_a_notebook_loads_the_roles_and_tools(site, tmp_path):
    code = (
        "import json, sys\n"
        "from pi_notebook.coding_agent import AgentSession\n"
        "from pi_notebook.coding_agent.tools import tool_names\n"
        "from pi_notebook.agent_core import registered_message_types\n"
        "s = AgentSession.open('sessions', cwd='.')\n"
        "print(json.dumps({'roles': [t.role for t in registered_message_types()], 'tools': list(tool_names()),\n"
        "  'front': sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets', 'anywidget'))}))\n"
        "s.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], cwd=tmp_path, env=plain_env(tmp_path, site),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"ticketEvent", "orderNote"} <= set(report["roles"]) and "ticket_status" in report["tools"]
    assert report["front"] == []


# --- the registries, in this process ----------------------------------------------------------------------------


class _EntryPoint:
    """What importlib.metadata gives: a name, a value, a dist, and load()."""

    def __init__(self, name: str, target: object, dist: object = None):
        self.name, self.value, self.dist, self._target = name, f"tests:{name}", dist, target

    def load(self) -> object:
        return self._target


@pytest.fixture
def entry_points(monkeypatch):
    """Plugins the test installs (as entry points), loaded fresh; their tools unregistered after."""
    found: list[_EntryPoint] = []
    monkeypatch.setattr(plugins, "_entry_points", lambda: found)
    monkeypatch.setattr(plugins, "_loaded", {})
    before = set(tool_names())
    yield found
    for name in set(tool_names()) - before:
        unregister_tool(name)


def _role_class(role: str) -> type[PiModel]:
    from typing import Literal

    return type(role, (PiModel,), {"__annotations__": {"role": Literal[role]}, "role": role})  # type: ignore[valid-type]


def test_a_setup_applies_all_or_nothing_and_fails_once(entry_points, tmp_path):
    good_cls, bad_cls = _role_class("pluginGood"), _role_class("pluginBad")
    renderer = tmp_path / "good.js"
    renderer.write_text("export default (m, el, x) => el.appendChild(x.text('good'));")

    def good(plugin: PluginSetup) -> None:
        plugin.register_message_type(good_cls, to_llm=lambda m: None)
        plugin.register_tool("plugin_good", lambda cwd: None, read_only=True, default=False)
        plugin.register_renderer("pluginGood", renderer)

    def bad(plugin: PluginSetup) -> None:
        plugin.register_message_type(bad_cls)
        plugin.register_tool("plugin_bad", lambda cwd: None, read_only=True)
        plugin.register_renderer("pluginBad", tmp_path / "missing.js")  # raises: nothing of it is applied

    entry_points += [_EntryPoint("good", good), _EntryPoint("bad", bad)]
    said: list[str] = []
    loaded = load_plugins(warn=said.append)
    assert [p.name for p in loaded] == ["good", "bad"] and [p.ok for p in loaded] == [True, False]
    assert loaded[0].describe() == "plugin 'good': roles pluginGood; tools plugin_good; renderers pluginGood"
    assert loaded[0].renderers == {"pluginGood": renderer.read_text()}
    assert said == [loaded[1].describe()] and "cannot read" in said[0] and "missing.js" in said[0]
    roles = [t.role for t in registered_message_types()]
    assert "pluginGood" in roles and "pluginBad" not in roles
    assert "plugin_good" in tool_names() and "plugin_bad" not in tool_names()
    assert load_plugins(warn=said.append) == loaded and len(said) == 1  # loaded once: not tried again, not said again


def test_wrong_registrations_are_refused_at_the_call():
    setup = PluginSetup("p")
    with pytest.raises(PluginError, match="not a PiModel"):
        setup.register_message_type(dict)
    with pytest.raises(PluginError, match="tool name 'a b'"):
        setup.register_tool("a b", lambda cwd: None, read_only=True)
    with pytest.raises(PluginError, match="read_only and default"):
        setup.register_tool("ok", lambda cwd: None, read_only="yes")  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="empty"):
        setup.register_renderer("x", "   ")
    with pytest.raises(PluginError, match="not int"):
        setup.register_renderer("x", 3)


def test_a_saved_form_carries_only_the_saved_renderers_of_the_roles_it_shows(monkeypatch):
    monkeypatch.setattr(widgets, "_renderers", {})
    monkeypatch.setattr(widgets, "_saved", {})
    widgets.register_renderer("ticketEvent", "export default () => {} // plugin", saved=True)
    widgets.register_renderer("orderNote", "export default () => {} // plugin too", saved=True)
    widgets.register_renderer("todo", "export default () => {} // the notebook's own")
    messages = [{"role": "ticketEvent", "ticketId": "T-1"}, {"role": "todo", "items": []}]
    w = widgets.TranscriptWidget(messages)
    assert set(w.renderers) == {"ticketEvent", "orderNote", "todo"}  # the live widget has them all
    data = w.saved_bundle()[saved.TRANSCRIPT_MIME]
    assert data["renderers"] == {"ticketEvent": "export default () => {} // plugin"}
    assert widgets.transcript_state(messages)["renderers"] == data["renderers"]
    # registered again by hand (not saved): it is the notebook's now, and no saved form carries it
    widgets.register_renderer("ticketEvent", "export default () => {} // mine")
    assert "renderers" not in widgets.TranscriptWidget(messages).saved_bundle()[saved.TRANSCRIPT_MIME]
    w.close()


def test_a_plugin_installed_while_the_kernel_runs_is_found_by_the_next_load(tmp_path, monkeypatch):
    """The scan of installed packages is kept between loads (it costs tens of milliseconds of ``%load_ext``), but
    a package installed into an import folder after it is seen by the next scan."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    before = [e.name for e in plugins._entry_points()]
    assert "late" not in before
    assert [e.name for e in plugins._entry_points()] == before  # nothing installed: the same scan
    write_plugin(site, "pi-nb-late", "late = pi_nb_late:setup", {"pi_nb_late": "def setup(plugin):\n    pass\n"})
    assert "late" in [e.name for e in plugins._entry_points()]
