"""Run the agent's Python in the user's kernel, as a cell would run it, and keep what it showed (the ``python`` tool's
half that runs on the kernel's main thread).

The code goes through IPython's own transforms (``%magic`` and ``!cmd`` work as in a cell), runs in the user's
namespace, and its last expression is shown as IPython shows a cell's value (``;`` at the end keeps it quiet).
What it prints, displays and returns is kept by a :class:`~pi_notebook.notebook.cell_capture.CellCapture`, with the
bounds of a recorded cell (the tail of the text with the whole in a temp file, at most four PNG/JPEG images of at
most 4 MB), and none of it reaches the ``%%agent`` cell's output: the transcript shows it as the tool's result.
A matplotlib figure the code leaves open is drawn as a PNG and closed, as the inline backend does at a cell's end.

It is not a cell: no ``In``/``Out`` entry, no execution count, no cell hooks (so the cell recorder does not record
it: the tool's result is its record), and ``_`` is left alone. A traceback points at ``<agent python N>``.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import itertools
import linecache
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ..cell_capture import CellCapture
from ..cell_message import NotebookCellMessage
from .time_limit import TimeLimitExceeded, time_limit

_runs = itertools.count(1)


@dataclass
class PythonRun:
    """What one run of the tool's code did."""

    cell: NotebookCellMessage
    """What it printed, displayed, returned and raised, bounded as a recorded cell is (its ``source`` is the code)."""
    timed_out: bool = False


class _Stream(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` while the code runs: what it writes goes to the capture only."""

    def __init__(self, capture: CellCapture, name: str):
        self._capture, self._name = capture, name

    @property
    def name(self) -> str:
        return self._name

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._capture.text(text)
        return len(text)


@contextlib.contextmanager
def _captured(shell: Any, capture: CellCapture) -> Iterator[None]:
    """Send what the code prints and displays to ``capture`` (not to the cell); put everything back after."""
    pub = shell.display_pub
    saved = {name: pub.__dict__.get(name) for name in ("publish", "clear_output")}

    def publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
        if not kwargs.get("update"):
            capture.bundle(data)

    def clear_output(*args: Any, **kwargs: Any) -> None:
        return None  # the cell's output is the run's live view: the code does not clear it

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Stream(capture, "<stdout>"), _Stream(capture, "<stderr>")
    pub.publish, pub.clear_output = publish, clear_output
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams
        for name, value in saved.items():
            if value is None:
                pub.__dict__.pop(name, None)
            else:
                setattr(pub, name, value)


def _open_figures() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _draw_new_figures(before: set[int], capture: CellCapture) -> None:
    """Draw each figure opened since ``before`` as a PNG into ``capture`` and close it (the inline backend's way)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        if number in before:
            continue
        figure = pyplot.figure(number)
        try:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", bbox_inches="tight")
            capture.bundle({"image/png": base64.b64encode(buffer.getvalue()).decode("ascii")})
        finally:
            pyplot.close(figure)


def _filename(source: str) -> str:
    """A name for the code's tracebacks, its lines kept in ``linecache`` (a function it defines shows its source
    in a later traceback too, as a cell's does)."""
    name = f"<agent python {next(_runs)}>"
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    return name


def _execute(shell: Any, code: str, filename: str) -> Any:
    """Run ``code`` in the user's namespace; the value of its last expression (``None``: none to show)."""
    source = shell.transform_cell(code)
    tree = ast.parse(source, filename)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    quiet = source.rstrip().endswith(";")
    body = tree.body[:-1] if last is not None and not quiet else tree.body
    flags = getattr(shell.compile, "flags", 0)
    exec(
        compile(ast.Module(body=body, type_ignores=[]), filename, "exec", flags, True),
        shell.user_global_ns,
        shell.user_ns,
    )
    if last is None or quiet:
        return None
    expression = ast.Expression(body=last.value)
    return eval(compile(expression, filename, "eval", flags, True), shell.user_global_ns, shell.user_ns)


def _detach(error: BaseException, outer: BaseException | None) -> None:
    """Cut the exception the kernel was handling when the code ran (the run's own wait) from ``error``'s chain:
    the code raised "during" it only in Python's eyes, and a cell's traceback does not show it."""
    seen: set[int] = set()
    current: BaseException | None = error
    while outer is not None and current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__context__ is outer:
            current.__context__ = None
            return
        current = current.__cause__ or current.__context__


def _traceback(shell: Any, error: BaseException) -> list[str]:
    """The traceback as IPython shows it in a cell, from the first frame of the code (not of this module)."""
    if isinstance(error, SyntaxError):
        import traceback

        return traceback.format_exception_only(type(error), error)
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return [str(line) for line in shell.InteractiveTB.structured_traceback(type(error), error, tb)]


def run_python(shell: Any, code: str, *, timeout: float | None, stopped: list[PythonRun] | None = None) -> PythonRun:
    """Run ``code`` in ``shell``'s user namespace on this thread (the kernel's main thread), with ``timeout``
    seconds at most (``None``: no limit). The stop button's ``KeyboardInterrupt`` is not caught: it stops the run,
    after what the code had shown is appended to ``stopped``."""
    outer = sys.exc_info()[1]
    capture = CellCapture()
    filename = _filename(code)
    error: BaseException | None = None
    timed_out = False
    figures = _open_figures()
    try:
        with _captured(shell, capture):
            try:
                with time_limit(timeout):
                    try:
                        value = _execute(shell, code, filename)
                        if value is not None:
                            data, _metadata = shell.display_formatter.format(value)
                            capture.bundle(data)
                    finally:
                        _draw_new_figures(figures, capture)
            except TimeLimitExceeded as e:
                timed_out, error = True, e
            except (Exception, SystemExit) as e:  # the code's own failure: the result says it
                error = e
                _detach(e, outer)
                capture.traceback = _traceback(shell, e)
    except KeyboardInterrupt as e:  # the stop button: what was shown is kept for the tool to say, then the run stops
        capture.end()
        if stopped is not None:
            stopped.append(PythonRun(_message(capture, code, e)))
        raise
    capture.end()
    return PythonRun(_message(capture, code, None if timed_out else error), timed_out=timed_out)


def _message(capture: CellCapture, code: str, error: BaseException | None) -> NotebookCellMessage:
    result = SimpleNamespace(execution_count=None, error_in_exec=error, error_before_exec=None)
    return capture.message(code, result)
