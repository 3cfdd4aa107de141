"""Cleaning and collecting shell output with bounded memory (the output half of Pi's ``bash-executor.ts``).

Output is decoded incrementally as UTF-8 (bad bytes become U+FFFD), then cleaned for recording: ANSI escape
sequences and ``\\r`` are removed and other control characters dropped (``\\n`` and ``\\t`` stay). Only a
rolling tail of about ``2 × DEFAULT_MAX_BYTES`` characters is kept. Once more than ``DEFAULT_MAX_BYTES``
bytes have arrived, or the output is truncated by its line count, everything (from the start) is also
written to ``<tempdir>/pi-bash-<16 hex>.log``.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import BinaryIO

from ..truncate import DEFAULT_MAX_BYTES, TruncationResult, truncate_tail

BUFFER_CHARS = 2 * DEFAULT_MAX_BYTES

# The one place where the rules for terminal codes are written, for the recorded shell output and every text a view
# or an export shows (notebook/forms.py's clean(); widgets/src/ansi.js writes the same rules in JS, checked against
# the same cases). Hand-written on purpose: output arrives in chunks, and a sequence cut by a chunk boundary must be
# held back until the next chunk completes it (_INCOMPLETE_ANSI), which no library does; Pi's executor strips each
# chunk with strip-ansi and loses such sequences. The control characters dropped are those of Pi's
# sanitizeBinaryOutput plus removing \r, as Pi's executor does, and DEL and C1 controls besides.
#
# CSI (ESC [ ... final; 8-bit CSI), OSC (ESC ] ... BEL/ST), DCS/SOS/PM/APC strings, charset selection, two-byte
# ESC. An OSC or DCS string left open runs to the next ESC or the end of the text, as a terminal swallows it.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[()*+#%][0-9A-Za-z@]"
    r"|\x1b[@-Z\\^_=>78cDEHMNO]"
)
# An escape sequence cut off at the end of a chunk: held back until the next chunk completes it.
_INCOMPLETE_ANSI = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[()*+#%])?|\x9b[0-?]*[ -/]*)\Z"
)
_MAX_HELD_BACK = 4096
# C0 controls except \t and \n (so \r goes too), DEL, C1 controls, and U+FFF9-FFFB (interlinear annotation
# marks, which break terminal width calculation; Pi drops them too).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]")


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor movement, terminal titles, ...)."""
    return _ANSI.sub("", text)


# One pass doing both of sanitize_output's steps: at each position an escape sequence is tried first, then a
# lone control character, which is what stripping the sequences and then the characters gives.
_ANSI_OR_CONTROL = re.compile(f"{_ANSI.pattern}|{_CONTROL.pattern}")
# The controls _CONTROL drops that can occur in ASCII text (ESC and CR included), as bytes; in UTF-8 they never
# occur inside a multi-byte character. One ``in`` (memchr) each, the likeliest first, is faster than any
# single pass that tests every byte against the set.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
_CONTROL_BYTES_LIKELIEST_FIRST = tuple(
    bytes([b]) for b in sorted(_CONTROL_BYTES, key=lambda b: (b not in b"\r\x1b\x08\x07\x00", b))
)


def _has_control_byte(data: bytes) -> bool:
    return any(byte in data for byte in _CONTROL_BYTES_LIKELIEST_FIRST)


def sanitize_output(text: str) -> str:
    """Make shell output safe to record: strip ANSI sequences and ``\\r``, drop control characters.

    ``\\n`` and ``\\t`` are kept. Decoding errors are expected to have become U+FFFD already.
    """
    # ASCII text (known in O(1) for a str) can only hold ASCII controls, and usually holds none.
    if text.isascii() and not _has_control_byte(text.encode("ascii")):
        return text
    return _ANSI_OR_CONTROL.sub("", text)


class OutputCollector:
    """Decodes, cleans and keeps the tail of a command's output; spills all of it to a temp file when large.

    ``buffered_chars`` is the size of the kept tail; it stays below ``BUFFER_CHARS`` plus one chunk.

    Plain ASCII chunks without an escape (most output) take a fast path: no regex, no incremental decoder, and
    a ``bytes.translate`` only if they hold a control character. Per chunk, the work is proportional to the
    chunk alone.

    ``on_record(text)``, if given, sees every piece of cleaned text as it is recorded: together, exactly what
    the full-output file holds.
    """

    def __init__(self, on_record: Callable[[str], None] | None = None) -> None:
        self.on_record = on_record
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._decoding = False  # the decoder holds the first bytes of a character cut by the chunk boundary
        self._held_back = ""
        self._chunks: deque[str] = deque()
        self.buffered_chars = 0
        self.raw_bytes = 0
        self.total_bytes = 0
        self.total_newlines = 0
        self.last_line_bytes = 0
        self.temp_path: str | None = None
        self._temp_file: BinaryIO | None = None
        self.temp_error: str | None = None
        """Why the full-output file could not be written (``No space left on device``...): the command's output
        is kept as always, only its full copy is given up (and removed)."""

    def feed(self, data: bytes) -> str:
        """Take a raw chunk; return its decoded text (ANSI and ``\\r`` kept) for a live display."""
        self.raw_bytes += len(data)
        if not self._decoding and not self._held_back and data.isascii():
            text = data.decode("ascii")
            if b"\x1b" not in data:
                self._record(text if not _has_control_byte(data) else data.translate(None, _CONTROL_BYTES).decode())
                return text
        else:
            text = self._decoder.decode(data)
            self._decoding = bool(self._decoder.getstate()[0])
        pending = self._held_back + text
        cut = _INCOMPLETE_ANSI.search(pending) if "\x1b" in pending or "\x9b" in pending else None
        if cut and len(pending) - cut.start() <= _MAX_HELD_BACK:
            pending, self._held_back = pending[: cut.start()], pending[cut.start() :]
        else:
            self._held_back = ""
        self._record(sanitize_output(pending))
        return text

    def finish(self) -> str:
        """Flush the decoder and anything held back; return the last decoded text (usually empty)."""
        text = self._decoder.decode(b"", final=True)
        self._decoding = False
        self._record(sanitize_output(self._held_back + text))
        self._held_back = ""
        return text

    def _record(self, clean: str) -> None:
        if not clean:
            return
        if self.on_record is not None:
            self.on_record(clean)
        if self.raw_bytes > DEFAULT_MAX_BYTES and self._temp_file is None:
            self._open_temp_file()
        encoded = clean.encode("utf-8")
        if self._temp_file is not None:
            self._write_temp(encoded)
        self.total_bytes += len(encoded)
        newlines = clean.count("\n")
        self.total_newlines += newlines
        if newlines:
            last_line = clean[clean.rfind("\n") + 1 :]
            self.last_line_bytes = len(last_line) if last_line.isascii() else len(last_line.encode("utf-8"))
        else:
            self.last_line_bytes += len(encoded)
        self._chunks.append(clean)
        self.buffered_chars += len(clean)
        # Drop whole chunks from the front only while what remains still reaches the bound: the buffer then
        # always holds more than truncate_tail keeps, so its cut-off first line is never shown.
        while len(self._chunks) > 1 and self.buffered_chars - len(self._chunks[0]) >= BUFFER_CHARS:
            self.buffered_chars -= len(self._chunks.popleft())

    def _open_temp_file(self) -> None:
        if self.temp_error is not None:
            return  # given up once: not tried again for this command
        path = os.path.join(tempfile.gettempdir(), f"pi-bash-{secrets.token_hex(8)}.log")
        try:
            self._temp_file = open(path, "wb")  # noqa: SIM115 - closed in close()
        except OSError as e:
            self._give_up(e)
            return
        self.temp_path = path
        # Nothing has been dropped yet (the buffer holds twice the byte threshold, and a snapshot opens the
        # file before anything is dropped), so this backfills everything.
        for chunk in self._chunks:
            if not self._write_temp(chunk.encode("utf-8")):
                return

    def _write_temp(self, data: bytes) -> bool:
        assert self._temp_file is not None
        try:
            self._temp_file.write(data)
        except OSError as e:  # a full disk (or a size limit) costs the full copy, never the command's output
            self._give_up(e)
            return False
        return True

    def _give_up(self, error: OSError) -> None:
        self.temp_error = error.strerror or str(error)
        if self._temp_file is not None:
            with contextlib.suppress(OSError):  # what it could not flush is what did not fit
                self._temp_file.close()
            self._temp_file = None
        if self.temp_path is not None:
            with contextlib.suppress(OSError):  # removing needs no room: only a vanished file fails, the aim
                os.unlink(self.temp_path)
            self.temp_path = None

    def snapshot(self) -> TruncationResult:
        """Tail truncation of the kept output, with totals that describe all output so far.

        If the output is truncated, the temp file is created now if it was not yet (more than 2000 short
        lines stay under the byte threshold), so a truncated output always has its full copy.
        """
        result = truncate_tail("".join(self._chunks))
        if result.truncated and self._temp_file is None:
            self._open_temp_file()
        return replace(result, total_lines=self.total_newlines + 1, total_bytes=self.total_bytes)

    def close(self) -> None:
        """Close the temp file (it stays on disk for the user to read)."""
        if self._temp_file is not None:
            try:
                self._temp_file.close()
            except OSError as e:  # the last buffered bytes did not fit: the copy is not whole, so none is kept
                self._temp_file = None
                self._give_up(e)
