"""Every cell the user runs joins the agent's history, as a ``notebookCell`` message (see :mod:`.cell_message`).

While a cell runs, what it prints (``sys.stdout``/``sys.stderr``, shown as always and also kept), what it displays
(IPython's display publisher: a matplotlib figure, ``display(Image(...))``, a DataFrame), the value it returns (the
display hook) and the traceback it shows are collected, bounded as they come (see :mod:`.cell_capture`: a tail of
the text with the whole in a temp file, at most :data:`MAX_IMAGES` images of at most :data:`MAX_IMAGE_BYTES`, what
a background thread of an earlier cell prints counted, not kept). When the cell ends the message is recorded,
where secrets are masked as for any message. The extension's own cells are left out: the
magics' (``%%agent``, ``%bash``, ``%agent_*``, which record themselves), loading it, and a cell that starts by
driving it (``pi_notebook.inspect(...)``, ``import pi_notebook``): those are about the agent, not your work.

``%agent_config cells=all|errors|off`` says which cells are recorded (default ``all``: a notebook agent is asked
about the cells above it, and it can only answer what it is sent); ``%agent_private`` in a cell keeps that one
cell out of what is sent (shown and stored, never sent, like ``%bash!``).
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from typing import Any

from ..coding_agent.masking import SecretsMaskedWarning
from .cell_capture import MAX_IMAGE_BYTES, MAX_IMAGES, CellCapture
from .utf8 import say

__all__ = ["MAX_IMAGES", "MAX_IMAGE_BYTES", "CellRecorder", "is_own_cell"]

_OWN_CELL = re.compile(
    r"\s*(?:%%agent\b|%bash!?(?:\s|$)|%agent_(?!private\b)\w+|%(?:load|unload|reload)_ext\s+pi_notebook\b"
    r"|(?:[\w.]+\s*=\s*)?pi_notebook\.|import\s+pi_notebook\b|from\s+pi_notebook\b)"
)


def is_own_cell(source: str) -> bool:
    """Whether ``source`` is one of the extension's own cells, which record themselves (its first line that is
    not blank or a comment is one of its magics, imports it or calls it: ``insp = pi_notebook.inspect(...)``)."""
    for line in source.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return _OWN_CELL.match(stripped) is not None
    return False


class _Tee:
    """A stream that writes to ``stream`` as before and also to the capture of the cell running now, if any.

    The cell running now, not the one that made it: code may keep ``sys.stdout`` (a logging handler, a thread's
    ``out = sys.stdout``) and write to it long after; what a later cell writes through it is that cell's, and
    what is written while no cell runs is no cell's."""

    def __init__(self, stream: Any, recorder: CellRecorder):
        self._stream, self._recorder = stream, recorder

    def write(self, text: Any) -> Any:
        written = self._stream.write(text)
        capture = self._recorder._capture
        if capture is not None and not isinstance(self._stream, _Tee):  # (a tee around a tee: it feeds the capture)
            capture.text(text)
        return written

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _muted(capture: CellCapture, call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(...)`` with the capture deaf to what it prints (a display or a traceback, already kept)."""
    capture.muted += 1
    try:
        return call(*args, **kwargs)
    finally:
        capture.muted -= 1


class CellRecorder:
    """Records the user's cells into the kernel's session (``record``: the session's ``record()``)."""

    def __init__(self, shell: Any, session: Any, config: Any):
        self.shell = shell
        self._session = session  # a callable: the kernel's session now
        self.config = config
        self._capture: CellCapture | None = None
        self._saved: dict[str, Any] = {}
        self._tees: tuple[_Tee, ...] = ()

    def attach(self) -> None:
        self.shell.events.register("pre_run_cell", self._pre)
        self.shell.events.register("post_run_cell", self._post)

    def detach(self) -> None:
        if (capture := self._stop()) is not None:
            capture.discard()
        for name, handler in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            with contextlib.suppress(ValueError):  # never registered: nothing to undo
                self.shell.events.unregister(name, handler)

    def mark_private(self) -> bool:
        """Keep the running cell out of what is sent (``%agent_private``); False when no cell is being recorded."""
        if self._capture is None:
            return False
        self._capture.private = True
        return True

    # --- the cell's life -------------------------------------------------------------------------------------

    def _pre(self, info: Any) -> None:
        if (left := self._stop()) is not None:  # a cell whose end was never seen (interrupted in a hook)
            left.discard()
        source = getattr(info, "raw_cell", "") or ""
        if self.config.cells == "off" or getattr(info, "silent", False) or is_own_cell(source):
            return
        capture = self._capture = CellCapture()
        shell = self.shell
        self._saved = {
            "stdout": sys.stdout,
            "stderr": sys.stderr,
            "publish": shell.display_pub.__dict__.get("publish"),
            "start_displayhook": shell.displayhook.__dict__.get("start_displayhook"),
            "write_format_data": shell.displayhook.__dict__.get("write_format_data"),
            "finish_displayhook": shell.displayhook.__dict__.get("finish_displayhook"),
            "_showtraceback": shell.__dict__.get("_showtraceback"),
        }
        sys.stdout, sys.stderr = self._tees = _Tee(sys.stdout, self), _Tee(sys.stderr, self)
        publish, show, hook = shell.display_pub.publish, shell._showtraceback, shell.displayhook
        start, write_format_data, finish = hook.start_displayhook, hook.write_format_data, hook.finish_displayhook

        def publish_kept(data: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("update"):
                capture.bundle(data)
            return _muted(capture, publish, data, *args, **kwargs)

        def start_kept(*args: Any, **kwargs: Any) -> Any:
            capture.muted += 1  # until finish: the result is kept as its mimebundle, not as "Out[n]: ..."
            return start(*args, **kwargs)

        def write_format_data_kept(format_dict: Any, *args: Any, **kwargs: Any) -> Any:
            capture.bundle(format_dict)
            return write_format_data(format_dict, *args, **kwargs)

        def finish_kept(*args: Any, **kwargs: Any) -> Any:
            try:
                return finish(*args, **kwargs)
            finally:
                capture.muted = max(0, capture.muted - 1)

        def show_kept(etype: Any, evalue: Any, stb: Any) -> Any:
            capture.traceback = [str(line) for line in stb] if isinstance(stb, list) else None
            return _muted(capture, show, etype, evalue, stb)

        shell.display_pub.publish = publish_kept
        hook.start_displayhook, hook.write_format_data, hook.finish_displayhook = (
            start_kept,
            write_format_data_kept,
            finish_kept,
        )
        shell._showtraceback = show_kept

    def _stop(self) -> CellCapture | None:
        """Put the streams and hooks back; the capture that was running, if any."""
        capture, self._capture = self._capture, None
        if capture is None:
            return None
        saved, self._saved = self._saved, {}
        for stream, tee in zip(("stdout", "stderr"), self._tees, strict=True):
            if getattr(sys, stream) is tee:
                setattr(sys, stream, saved[stream])  # (a cell that replaced sys.stdout itself keeps its own)
        shell = self.shell
        hook = shell.displayhook
        for owner, name in ((shell.display_pub, "publish"), (hook, "start_displayhook"), (hook, "write_format_data"),
                            (hook, "finish_displayhook"), (shell, "_showtraceback")):  # fmt: skip
            if saved.get(name) is None:
                owner.__dict__.pop(name, None)
            else:
                setattr(owner, name, saved[name])
        capture.end()  # a stream the cell kept (a logging handler on sys.stderr) no longer feeds it
        return capture

    def _post(self, result: Any) -> None:
        capture = self._stop()
        if capture is None:
            return
        failed = (result.error_in_exec or result.error_before_exec) is not None
        if self.config.cells == "errors" and not failed:
            capture.discard()
            return
        session = self._session()
        message = capture.message(getattr(result.info, "raw_cell", "") or "", result)
        if message.full_output_path:
            masker = session.masker()
            if masker is not None:
                masker.mask_file(message.full_output_path)
        with warnings.catch_warnings(record=True) as caught:  # said in the cell's own words, one line
            warnings.simplefilter("always", SecretsMaskedWarning)
            session.record(message)
        for warning in caught:
            if issubclass(warning.category, SecretsMaskedWarning):
                say(f"pi_notebook: {str(warning.message).replace('the recorded message', 'this cell', 1)}")
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
