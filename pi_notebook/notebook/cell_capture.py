"""What one cell printed, displayed, returned and raised, bounded as it comes (the recorder's half that keeps it).

Text goes through the shell executor's collector in slices of :data:`SLICE_CHARS`, so a 50 MB repr never sits
in memory twice: only a tail is kept, the whole in a temp file. Images: at most :data:`MAX_IMAGES` PNG or JPEG
of at most :data:`MAX_IMAGE_BYTES` each; the others are named (up to :data:`MAX_IMAGES` lines) or counted. An
error keeps its name, the start and end of a long message and the end of its traceback. What a thread that was
already running when the cell started prints or displays is not the cell's: it is counted, not kept (a
background thread of an earlier cell, still printing while later cells run). Once the cell has ended the capture
takes nothing more (what is printed while no cell runs is no cell's).
"""

from __future__ import annotations

import base64
import binascii
import threading
import traceback
from typing import Any

from ..coding_agent.tools.shell_output import OutputCollector, sanitize_output
from ..coding_agent.truncate import cut_middle, truncate_tail
from .cell_message import CellError, NotebookCellMessage

__all__ = ["MAX_IMAGES", "MAX_IMAGE_BYTES", "CellCapture"]

MAX_IMAGES = 4
"""Images one cell keeps (a loop that draws a hundred figures sends four, and says so)."""
MAX_IMAGE_BYTES = 4 * 1024 * 1024
"""The largest image kept (decoded size): providers take about 5 MB per image."""
MAX_SOURCE_CHARS = 20_000
"""A cell longer than this keeps its start and end."""
MAX_ERROR_VALUE_CHARS = 2_000
"""An error message longer than this keeps its start and end (``raise ValueError(huge)``)."""
TRACEBACK_LINES = 60
TRACEBACK_BYTES = 8 * 1024
SLICE_CHARS = 64 * 1024
"""Text is fed to the collector in slices this long: memory stays that of the kept tail."""
_IMAGE_TYPES = ("image/png", "image/jpeg")


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


class CellCapture:
    """What one cell printed, displayed, returned and raised, bounded as it comes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.collector = OutputCollector()
        self.images: list[Any] = []
        self.omitted: list[str] = []
        self.extra_images = 0
        self.traceback: list[str] | None = None
        self.private = False
        self.ended = False
        self.muted = 0  # inside a display, a result or a traceback: kept as what they are, not as the text a
        # terminal shell prints for them
        # Threads running before the cell (the kernel's own, and those earlier cells started): not the cell's.
        self._before = frozenset(threading.enumerate()) - {threading.current_thread()}
        self.others_chars = 0

    def _ours(self, size: int) -> bool:
        """Whether what the current thread prints or displays now is the cell's (counted when it is not)."""
        if self.ended:
            return False
        if threading.current_thread() in self._before:
            with self.lock:
                self.others_chars += size
            return False
        return True

    def text(self, text: Any) -> None:
        """What the cell printed (not while a display, a result or a traceback prints itself)."""
        if not self.muted and isinstance(text, str) and self._ours(len(text)):
            self._feed(text)

    def _feed(self, text: str) -> None:
        for start in range(0, len(text), SLICE_CHARS):
            piece = text[start : start + SLICE_CHARS].encode("utf-8", "replace")  # (a lone surrogate: "?")
            with self.lock:
                self.collector.feed(piece)

    def bundle(self, data: Any) -> None:
        """A display's or a result's mimebundle: an image kept as an image, anything else by its text form."""
        if not isinstance(data, dict) or not self._ours(0):
            return
        kind = next((k for k in _IMAGE_TYPES if isinstance(data.get(k), (str, bytes))), None)
        if kind is not None:
            self._image(kind, data[kind])
            return
        plain = data.get("text/plain")
        if isinstance(plain, str):
            self._feed(plain)
            if not plain.endswith("\n"):
                self._feed("\n")

    def _image(self, kind: str, value: str | bytes) -> None:
        from ..ai import ImageContent

        size = len(value) if isinstance(value, bytes) else len(value) * 3 // 4
        with self.lock:
            if size > MAX_IMAGE_BYTES:
                self._omit(f"an {kind} of {_size(size)} was left out: larger than {_size(MAX_IMAGE_BYTES)}")
                return
            if len(self.images) >= MAX_IMAGES:
                self.extra_images += 1
                return
        if isinstance(value, bytes):
            encoded = base64.b64encode(value).decode("ascii")
        else:
            encoded = "".join(value.split())
            try:
                base64.b64decode(encoded[:4096], validate=True)  # (a glance: not base64 at all is left out)
            except (binascii.Error, ValueError):
                with self.lock:
                    self._omit(f"an {kind} that was not valid base64 was left out")
                return
        with self.lock:
            if len(self.images) < MAX_IMAGES:
                self.images.append(ImageContent(data=encoded, mime_type=kind))
            else:
                self.extra_images += 1

    def _omit(self, line: str) -> None:
        """Name what was left out; past :data:`MAX_IMAGES` lines, count it (called with the lock held)."""
        if len(self.omitted) < MAX_IMAGES:
            self.omitted.append(line)
        else:
            self.extra_images += 1

    def end(self) -> None:
        """The cell has ended: take nothing more, and keep the collector's temp file closed."""
        with self.lock:
            self.ended = True

    def discard(self) -> None:
        with self.lock:
            self.collector.close()

    def message(self, source: str, result: Any) -> NotebookCellMessage:
        """The cell as recorded."""
        with self.lock:
            self.collector.finish()
            snapshot = self.collector.snapshot()
            self.collector.close()
        omitted = list(self.omitted)
        if self.extra_images:
            many = "images were" if self.extra_images != 1 else "image was"
            omitted.append(f"{self.extra_images} more {many} left out (a cell keeps {MAX_IMAGES})")
        if self.others_chars:
            omitted.append(
                f"{self.others_chars:,} characters printed meanwhile by a thread an earlier cell started were left out"
            )
        error = result.error_in_exec or result.error_before_exec
        if len(source) > MAX_SOURCE_CHARS:
            source = cut_middle(source, MAX_SOURCE_CHARS, "a long cell")
        return NotebookCellMessage(
            source=source,
            execution_count=result.execution_count,
            output=snapshot.content,
            images=list(self.images),
            error=None if error is None else self._error(error),
            cancelled=isinstance(error, KeyboardInterrupt),
            truncated=snapshot.truncated,
            full_output_path=self.collector.temp_path,
            omitted=omitted,
            exclude_from_context=True if self.private else None,
        )

    def _error(self, error: BaseException) -> CellError:
        lines = self.traceback or traceback.format_exception(type(error), error, error.__traceback__)
        text = _clean(_last_chars(lines, 16 * TRACEBACK_BYTES))
        tail = truncate_tail(text, max_lines=TRACEBACK_LINES, max_bytes=TRACEBACK_BYTES)
        shown = tail.content if not tail.truncated else "…\n" + tail.content
        value = _clean(cut_middle(str(error), MAX_ERROR_VALUE_CHARS, "a long error message"))
        return CellError(name=type(error).__name__, value=value, traceback=shown)


def _last_chars(lines: list[str], keep: int) -> str:
    """The traceback's lines joined, only about their last ``keep`` characters (the end is all that is kept: a
    huge error message is cut before it is copied or cleaned)."""
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        line = (line if len(line) <= keep else line[len(line) - keep :]).rstrip("\n")
        kept.append(line)
        size += len(line) + 1
        if size >= keep:
            break
    return "\n".join(reversed(kept))


def _clean(text: str) -> str:
    """``text`` as the output is kept: a lone surrogate as ``?``, ANSI and control characters dropped."""
    return sanitize_output(text.encode("utf-8", "replace").decode("utf-8"))
