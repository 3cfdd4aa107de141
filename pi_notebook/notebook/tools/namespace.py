"""What the user's namespace holds, described for the ``vars`` tool without running the user's code.

Each variable gets its name, type and size. A pandas or polars DataFrame (or Series) and a numpy array also get
their shape, dtypes, columns and first rows, read through the library (only when it is already imported: nothing
is imported here). Anything else gets a short repr, the one call into the user's code, made guarded (an exception
is named, not raised) and time-limited (:data:`REPR_SECONDS` each, :data:`BUDGET_SECONDS` for the whole listing,
after which the rest get their type only). Modules, functions and classes are listed by name on three lines.

IPython's own names (``In``, ``Out``, ``exit``, ``quit``, ``get_ipython``, ``_``, ``_1``, ``_i1``...) and names
starting with ``_`` are left out, as ``%who`` leaves them out.
"""

from __future__ import annotations

import inspect
import reprlib
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from ...coding_agent.truncate import format_size, truncate_head
from .time_limit import TimeLimitExceeded, time_limit

MAX_LISTED = 60
"""Variables described in a listing; the others are named."""
REPR_CHARS = 200
"""A variable's repr in a listing is cut here (``name=``: :data:`REPR_CHARS_ONE`)."""
REPR_CHARS_ONE = 4000
ROWS, ROWS_ONE = 5, 15
"""A DataFrame's first rows shown in a listing, and for one variable."""
MAX_COLUMNS = 30
"""Columns named with their dtypes (the rest are counted)."""
REPR_SECONDS = 0.5
"""The longest one repr (or one library call) may take."""
BUDGET_SECONDS = 5.0
"""The longest a whole listing takes; past it, variables get their type only."""
MAX_BYTES = 16 * 1024
"""A listing longer than this keeps its start."""

_SCALARS = (float, complex, bool, type(None))
_CONTAINERS = (list, tuple, set, frozenset, dict)
_HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})


def _repr_of(limit: int) -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxlevel, short.maxdict, short.maxlist, short.maxtuple = 3, 8, 10, 10
    short.maxset, short.maxfrozenset, short.maxdeque, short.maxarray = 10, 10, 10, 10
    short.maxstring, short.maxlong, short.maxother = min(limit, 200), 60, min(limit, 200)
    return short


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _guarded(call: Callable[[], str], seconds: float) -> str:
    """``call()``, or a note saying why there is no text (it raised, or took longer than ``seconds``)."""
    try:
        with time_limit(seconds):
            return call()
    except TimeLimitExceeded:
        return f"(not shown: it took longer than {seconds:g} s)"
    except Exception as e:  # the user's __repr__ failing is part of the description, not the tool's failure
        return f"(not shown: its repr raised {type(e).__name__})"


def type_name(value: Any) -> str:
    """``int``, ``Thing`` (a class of the notebook), ``pandas.DataFrame``, ``numpy.ndarray``."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    if module in ("builtins", "__main__"):
        return kind.__qualname__
    return f"{module.split('.')[0]}.{kind.__qualname__}"


def _library(value: Any, module: str, *names: str) -> bool:
    """Whether ``value`` is one of ``module``'s classes ``names`` (``module`` only if already imported)."""
    lib = sys.modules.get(module)
    return lib is not None and any(isinstance(value, getattr(lib, n, ())) for n in names)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _columns(pairs: list[tuple[Any, Any]]) -> str:
    shown = [f"{name} ({dtype})" for name, dtype in pairs[:MAX_COLUMNS]]
    more = f", … and {len(pairs) - MAX_COLUMNS} more" if len(pairs) > MAX_COLUMNS else ""
    return ", ".join(shown) + more


def _pandas(name: str, value: Any, rows: int, seconds: float) -> str:
    pd = sys.modules["pandas"]
    if isinstance(value, pd.Series):
        head = f"{name}: pandas.Series {value.name!r}, {len(value):,} values, dtype {value.dtype}"
        table = _guarded(lambda: value.head(rows).to_string(max_rows=rows), seconds)
        return f"{head}\n  first {min(rows, len(value))}:\n{_indent(table)}"
    n_rows, n_cols = value.shape
    size = format_size(int(value.memory_usage(index=True, deep=False).sum()))
    text = f"{name}: pandas.DataFrame, {n_rows:,} rows × {n_cols:,} columns, {size}"
    text += f"\n  columns: {_columns([(str(c), t) for c, t in value.dtypes.items()])}"
    table = _guarded(lambda: value.head(rows).to_string(max_cols=12, max_colwidth=40, line_width=120), seconds)
    return f"{text}\n  first {min(rows, n_rows)} rows:\n{_indent(table)}"


def _polars(name: str, value: Any, rows: int, seconds: float) -> str:
    pl = sys.modules["polars"]
    if isinstance(value, pl.Series):
        head = f"{name}: polars.Series {value.name!r}, {len(value):,} values, dtype {value.dtype}"
        return f"{head}\n{_indent(_guarded(lambda: str(value.head(rows)), seconds))}"
    n_rows, n_cols = value.shape
    text = f"{name}: polars.DataFrame, {n_rows:,} rows × {n_cols:,} columns, {format_size(int(value.estimated_size()))}"
    text += f"\n  columns: {_columns(list(value.schema.items()))}"
    table = _guarded(lambda: str(value.head(rows)), seconds)
    return f"{text}\n  first {min(rows, n_rows)} rows:\n{_indent(table)}"


def _numpy(name: str, value: Any, rows: int, seconds: float) -> str:
    np = sys.modules["numpy"]
    shape = "(" + ", ".join(str(n) for n in value.shape) + ("," if value.ndim == 1 else "") + ")"
    text = f"{name}: numpy.ndarray, shape {shape}, dtype {value.dtype}, {format_size(int(value.nbytes))}"
    if value.dtype.names:
        text += f"\n  fields: {_columns([(f, value.dtype.fields[f][0]) for f in value.dtype.names])}"
    edge = max(1, rows // 2)
    shown = _guarded(lambda: np.array2string(value, threshold=rows * 4, edgeitems=edge, max_line_width=110), seconds)
    return f"{text}\n{_indent(shown)}"


def _sized(value: Any) -> str:
    """``len 3`` for a str, bytes or container of Python's own (never a user's ``__len__``)."""
    return f", len {len(value):,}" if type(value) in (str, bytes, bytearray, *_CONTAINERS) else ""


def describe(name: str, value: Any, *, full: bool = False, seconds: float = REPR_SECONDS) -> str:
    """One variable: ``name: type, size = repr``, or for a DataFrame or an array its shape, dtypes and first rows
    (``full``: more rows, a longer repr)."""
    rows, limit = (ROWS_ONE, REPR_CHARS_ONE) if full else (ROWS, REPR_CHARS)
    try:
        if _library(value, "pandas", "DataFrame", "Series"):
            return _pandas(name, value, rows, seconds)
        if _library(value, "polars", "DataFrame", "Series"):
            return _polars(name, value, rows, seconds)
        if _library(value, "numpy", "ndarray"):
            return _numpy(name, value, rows, seconds)
    except Exception as e:  # a library's odd object (a subclass that breaks shape): its repr instead
        return f"{name}: {type_name(value)} = {_guarded(lambda: _cut(repr(value), limit), seconds)} " + (
            f"(its shape could not be read: {type(e).__name__})"
        )
    head = f"{name}: {type_name(value)}{_sized(value)}"
    if type(value) in _SCALARS:  # (an int goes through reprlib: a huge one cannot be written out)
        return f"{head} = {value!r}"
    if type(value) in (*_CONTAINERS, str, bytes, int):  # Python's own: cut as it is written, elements included
        shown = _guarded(lambda: _cut(_repr_of(limit).repr(value), limit), seconds)
    else:  # anything else writes itself (its repr, once, time-limited), then is cut
        shown = _guarded(lambda: _cut(repr(value), limit), seconds)
    return f"{head} = {shown}"


def _signature(function: Any) -> str:
    try:
        return f"{function.__name__}{inspect.signature(function)}"
    except (TypeError, ValueError, AttributeError):
        return f"{getattr(function, '__name__', '?')}(…)"


def user_variables(shell: Any) -> dict[str, Any]:
    """The user's names: the namespace without IPython's own names and names starting with ``_``."""
    hidden = getattr(shell, "user_ns_hidden", {})
    missing = object()
    return {
        name: value
        for name, value in list(shell.user_ns.items())
        if not name.startswith("_") and name not in _HIDDEN and hidden.get(name, missing) is not value
    }


def listing(shell: Any, *, budget: float = BUDGET_SECONDS) -> str:
    """Every user variable, described; then the modules, functions and classes by name."""
    names = user_variables(shell)
    data: list[str] = []
    modules, functions, classes = [], [], []
    unlisted: list[str] = []
    deadline = time.monotonic() + budget
    for name, value in names.items():
        if isinstance(value, types.ModuleType):
            modules.append(f"{name} ({value.__name__})" if value.__name__ != name else name)
        elif isinstance(value, type):
            classes.append(name)
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            functions.append(_signature(value))
        elif len(data) >= MAX_LISTED:
            unlisted.append(name)
        elif time.monotonic() > deadline:
            data.append(f"{name}: {type_name(value)}{_sized(value)} (not described: the listing took {budget:g} s)")
        else:
            data.append(describe(name, value))
    if not names:
        return "The notebook's namespace holds no variables yet (IPython's own names are left out)."
    lines = [f"Variables ({len(data) + len(unlisted)}):" if data or unlisted else "No variables."]
    lines += data
    if unlisted:
        lines.append(f"… and {len(unlisted)} more: {', '.join(unlisted)}")
    for label, items in (("Modules", modules), ("Functions", functions), ("Classes", classes)):
        if items:
            lines.append(f"{label}: {', '.join(items)}")
    result = truncate_head("\n".join(lines), max_bytes=MAX_BYTES)
    if result.truncated:
        return result.content + f"\n[Listing cut at {format_size(MAX_BYTES)}: ask for one variable by name]"
    return result.content
