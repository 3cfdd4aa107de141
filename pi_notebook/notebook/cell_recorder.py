"""Every cell the user runs joins the agent's history, as a ``notebookCell`` message (see :mod:`.cell_message`).

While a cell runs, what it prints (``sys.stdout``/``sys.stderr``, shown as always and also kept), what it displays
(IPython's display publisher: a matplotlib figure, ``display(Image(...))``, a DataFrame), the value it returns (the
display hook) and the traceback it shows are collected, bounded as they come: text through the shell
executor's collector (ANSI and control characters dropped, only a tail kept, the whole in a temp file past 50 KB),
at most :data:`MAX_IMAGES` PNG or JPEG images of at most :data:`MAX_IMAGE_BYTES` each. When the cell ends the
message is recorded, where secrets are masked as for any message. The extension's own cells are left out: the
magics' (``%%agent``, ``%bash``, ``%agent_*``, which record themselves), loading it, and a cell that starts by
driving it (``pi_notebook.inspect(...)``, ``import pi_notebook``): those are about the agent, not your work.

``%agent_config cells=all|errors|off`` says which cells are recorded (default ``all``: a notebook agent is asked
about the cells above it, and it can only answer what it is sent); ``%agent_private`` in a cell keeps that one
cell out of what is sent (shown and stored, never sent, like ``%bash!``).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import sys
import threading
import traceback
import warnings
from typing import Any

from ..coding_agent.context_fit import cut_middle
from ..coding_agent.masking import SecretsMaskedWarning
from ..coding_agent.tools.shell_output import OutputCollector, sanitize_output
from ..coding_agent.truncate import truncate_tail
from .cell_message import CellError, NotebookCellMessage
from .utf8 import say

__all__ = ["CellRecorder", "is_own_cell"]

MAX_IMAGES = 4
"""Images one cell keeps (a loop that draws a hundred figures sends four, and says so)."""
MAX_IMAGE_BYTES = 4 * 1024 * 1024
"""The largest image kept (decoded size): providers take about 5 MB per image."""
MAX_SOURCE_CHARS = 20_000
"""A cell longer than this keeps its start and end."""
TRACEBACK_LINES = 60
TRACEBACK_BYTES = 8 * 1024
_IMAGE_TYPES = ("image/png", "image/jpeg")
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


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


class _Capture:
    """What one cell printed, displayed, returned and raised, bounded as it comes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.collector = OutputCollector()
        self.images: list[Any] = []
        self.omitted: list[str] = []
        self.extra_images = 0
        self.traceback: list[str] | None = None
        self.private = False
        self.muted = 0  # inside a display, a result or a traceback: kept as what they are, not as the text a
        # terminal shell prints for them

    def text(self, text: Any) -> None:
        """What the cell printed (not while a display, a result or a traceback prints itself)."""
        if not self.muted:
            self._feed(text)

    def _feed(self, text: Any) -> None:
        if isinstance(text, str) and text:
            with self.lock:
                self.collector.feed(text.encode("utf-8", "replace"))

    def bundle(self, data: Any) -> None:
        """A display's or a result's mimebundle: an image kept as an image, anything else by its text form."""
        if not isinstance(data, dict):
            return
        kind = next((k for k in _IMAGE_TYPES if isinstance(data.get(k), (str, bytes))), None)
        if kind is not None:
            self._image(kind, data[kind])
            return
        plain = data.get("text/plain")
        if isinstance(plain, str):
            self._feed(plain if plain.endswith("\n") else plain + "\n")

    def _image(self, kind: str, value: str | bytes) -> None:
        from ..ai import ImageContent

        if isinstance(value, bytes):
            encoded, size = base64.b64encode(value).decode("ascii"), len(value)
        else:
            encoded = "".join(value.split())
            size = len(encoded) * 3 // 4
        with self.lock:
            if size > MAX_IMAGE_BYTES:
                self.omitted.append(f"an {kind} of {_size(size)} was left out: larger than {_size(MAX_IMAGE_BYTES)}")
            elif len(self.images) >= MAX_IMAGES:
                self.extra_images += 1
            else:
                try:
                    base64.b64decode(encoded[:4096], validate=True)  # (a glance: not base64 at all is left out)
                except (binascii.Error, ValueError):
                    self.omitted.append(f"an {kind} that was not valid base64 was left out")
                    return
                self.images.append(ImageContent(data=encoded, mime_type=kind))

    def message(self, source: str, result: Any) -> NotebookCellMessage:
        with self.lock:
            self.collector.finish()
            snapshot = self.collector.snapshot()
            self.collector.close()
        omitted = list(self.omitted)
        if self.extra_images:
            many = "images were" if self.extra_images != 1 else "image was"
            omitted.append(f"{self.extra_images} more {many} left out (a cell keeps {MAX_IMAGES})")
        error = result.error_in_exec or result.error_before_exec
        cell_error = None
        if error is not None:
            lines = self.traceback or traceback.format_exception(type(error), error, error.__traceback__)
            text = sanitize_output("\n".join(line.rstrip("\n") for line in lines))
            tail = truncate_tail(text, max_lines=TRACEBACK_LINES, max_bytes=TRACEBACK_BYTES)
            shown = tail.content if not tail.truncated else "…\n" + tail.content
            cell_error = CellError(name=type(error).__name__, value=str(error), traceback=shown)
        if len(source) > MAX_SOURCE_CHARS:
            source = cut_middle(source, MAX_SOURCE_CHARS, "a long cell")
        return NotebookCellMessage(
            source=source,
            execution_count=result.execution_count,
            output=snapshot.content,
            images=list(self.images),
            error=cell_error,
            cancelled=isinstance(error, KeyboardInterrupt),
            truncated=snapshot.truncated,
            full_output_path=self.collector.temp_path,
            omitted=omitted,
            exclude_from_context=True if self.private else None,
        )


class _Tee:
    """A stream that writes to ``stream`` as before and also to the capture."""

    def __init__(self, stream: Any, capture: _Capture):
        self._stream, self._capture = stream, capture

    def write(self, text: Any) -> Any:
        written = self._stream.write(text)
        self._capture.text(text)
        return written

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _muted(capture: _Capture, call: Any, *args: Any, **kwargs: Any) -> Any:
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
        self._capture: _Capture | None = None
        self._saved: dict[str, Any] = {}

    def attach(self) -> None:
        self.shell.events.register("pre_run_cell", self._pre)
        self.shell.events.register("post_run_cell", self._post)

    def detach(self) -> None:
        self._stop()
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
        self._stop()
        source = getattr(info, "raw_cell", "") or ""
        if self.config.cells == "off" or getattr(info, "silent", False) or is_own_cell(source):
            return
        capture = self._capture = _Capture()
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
        sys.stdout, sys.stderr = _Tee(sys.stdout, capture), _Tee(sys.stderr, capture)
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

    def _stop(self) -> _Capture | None:
        """Put the streams and hooks back; the capture that was running, if any."""
        capture, self._capture = self._capture, None
        if capture is None:
            return None
        saved, self._saved = self._saved, {}
        for stream in ("stdout", "stderr"):
            current = getattr(sys, stream)
            if isinstance(current, _Tee) and current._capture is capture:
                setattr(sys, stream, saved[stream])  # (a cell that replaced sys.stdout itself keeps its own)
        shell = self.shell
        hook = shell.displayhook
        for owner, name in ((shell.display_pub, "publish"), (hook, "start_displayhook"), (hook, "write_format_data"),
                            (hook, "finish_displayhook"), (shell, "_showtraceback")):  # fmt: skip
            if saved.get(name) is None:
                owner.__dict__.pop(name, None)
            else:
                setattr(owner, name, saved[name])
        return capture

    def _post(self, result: Any) -> None:
        capture = self._stop()
        if capture is None:
            return
        failed = (result.error_in_exec or result.error_before_exec) is not None
        if self.config.cells == "errors" and not failed:
            capture.collector.close()
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
