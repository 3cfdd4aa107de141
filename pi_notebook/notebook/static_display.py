"""Where a widget is shown as a live view and where as its saved form only.

A notebook open in JupyterLab or Notebook 7 shows ``pi_notebook.show()`` and ``pi_notebook.inspect()`` as live
widgets, with their saved form beside the view (:mod:`~pi_notebook.notebook.saved`). A kernel that no interactive
front end serves (nbclient: ``jupyter nbconvert --execute``, papermill; nbval) has nobody to draw a widget view,
and nbclient saves the state of every widget it saw into the notebook's metadata, the widget's code (its
``_esm``, 45 to 130 KB) included, once per widget. There ``show()`` and ``inspect()`` make their widget
``static``: it opens no comm, so no runner records anything of it, and a display of it is its saved form only, like
a finished ``%%agent`` cell's. The Python object goes on working (an inspector still follows its session and the
converters: ``insp.rows`` answers), with no front end to tell. A widget made with a comm and displayed there
(a ``TranscriptWidget(...)`` of your own) shows its saved form too, and then leaves the front end: it sends its
state once more with its code and data emptied, so what the runner keeps is a few hundred bytes.

Which saved form carries the ``text/html`` fallback's stylesheet (:func:`carries_stylesheet`; why once, in
:mod:`~pi_notebook.notebook.saved`) is decided here too: it depends on the request being answered, not on the
transcript.
"""

from __future__ import annotations

import os
from typing import Any

from IPython.display import display

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

DISCARDED_ESM = "export default {};"
"""The code a discarded widget's saved state keeps: a valid anywidget module that draws nothing, a few bytes
instead of the view's code (anywidget fails a model whose code is empty, in the console of a notebook opened
later)."""

_IDENTITY = ("layout",)
"""Synced traits kept as they are when the state is emptied (a model reference, not data)."""


def interactive_frontend() -> bool:
    """Whether this kernel serves a notebook open in a Jupyter server's front end (JupyterLab, Notebook 7: the
    server names the notebook in ``JPY_SESSION_NAME``), whose widget manager keeps what a delta changes in the
    model, and saves it. Headless runs (nbclient, papermill, ``nbconvert --execute``) keep whole-state syncs
    only: there, widgets sync whole traits and do all their work in the cell."""
    return bool(os.environ.get("JPY_SESSION_NAME"))


def headless_kernel() -> bool:
    """A Jupyter kernel that no interactive front end serves (see the module's docstring); ``False`` in plain
    Python and in a terminal IPython, which have no kernel and save nothing."""
    if interactive_frontend():
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def emptied_state(widget: Any) -> dict[str, Any]:
    """The synced state that replaces ``widget``'s in a runner's record: code :data:`DISCARDED_ESM`, no
    stylesheet, every other synced trait at its default (the model's name and module stay, which the record
    needs)."""
    state: dict[str, Any] = {}
    for name in widget.keys:
        if name == "_esm":
            state[name] = DISCARDED_ESM
        elif name == "_css":
            state[name] = ""
        elif not name.startswith(("_model_", "_view_")) and name not in _IDENTITY:
            default = widget.trait_defaults(name)
            state[name] = default if isinstance(default, (str, int, float, bool, list, dict, type(None))) else None
    return state


_style_carriers: dict[str, str | None] = {}
"""Front end connection (the ``session`` of its requests' headers) → the cell whose saved form carries the
stylesheet (``None``: a front end that names no cell, such as nbclient, which runs each cell once)."""


def request_header(shell: Any) -> dict[str, Any]:
    """The execute request the kernel is answering (its ``header``, ``metadata``, ...), as Jupyter front ends send
    it; ``{}`` outside a Jupyter kernel."""
    kernel = getattr(shell, "kernel", None)
    parent = kernel.get_parent("shell") if kernel is not None and hasattr(kernel, "get_parent") else None
    return parent or getattr(shell, "parent_header", None) or {}


def running_cell_id(shell: Any) -> str | None:
    """The id of the running cell, as Jupyter front ends send it in the execute request's metadata."""
    cell_id = (request_header(shell).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) and cell_id else None


def carries_stylesheet() -> bool:
    """Whether a transcript's saved form displayed now carries the ``text/html`` fallback's stylesheet
    (:data:`~pi_notebook.notebook.saved.STYLE`): the first one each front end connection gets from this kernel,
    and every later one from the same cell (a re-run replaces the output that carried it). Outside a Jupyter
    kernel (plain Python, a terminal IPython), and where no request is known: always."""
    from IPython import get_ipython

    shell = get_ipython()
    parent = request_header(shell)
    if not parent:
        return True
    client = str((parent.get("header") or {}).get("session", ""))
    cell_id = running_cell_id(shell)
    if client not in _style_carriers:
        _style_carriers[client] = cell_id
        return True
    return cell_id is not None and _style_carriers[client] == cell_id


class StaticWhenHeadless:
    """For a widget class with a saved form in its ``_repr_mimebundle_`` (beside the widget view): displayed in a
    headless kernel, it shows that saved form only and leaves the front end (:meth:`detach`)."""

    _detached = False
    """True once the widget left the front end, or never had one (``static``): it opens no comm and sends nothing."""

    def open(self) -> None:
        """ipywidgets' comm opening, skipped for a detached widget."""
        if not self._detached:
            super().open()  # type: ignore[misc]

    @property
    def _ipython_display_(self) -> Any:
        """IPython's display hook: :meth:`_display_saved_form` in a headless kernel, else ``None`` (IPython then
        displays the mimebundle, widget view included, as usual)."""
        return self._display_saved_form if headless_kernel() else None

    def _display_saved_form(self, **_kwargs: Any) -> None:
        data, metadata = self._repr_mimebundle_()  # type: ignore[attr-defined]
        data = {key: value for key, value in data.items() if key != WIDGET_VIEW}
        display(data, metadata={k: v for k, v in metadata.items() if k != WIDGET_VIEW}, raw=True)
        self.detach()

    def detach(self) -> None:
        """Leave the front end for good, keeping this object working: the state goes out once more emptied
        (:func:`emptied_state`), then the comm is closed here only (``release``). The traits keep their values
        and follow their source; nothing is sent any more."""
        channel = getattr(self, "comm", None)
        if channel is None:
            return
        channel.send({"method": "update", "state": emptied_state(self), "buffer_paths": []})
        self._detached = True
        self.release()  # type: ignore[attr-defined]
