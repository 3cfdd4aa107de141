"""What a Pi session file (JSONL v3) holds: its lines read as Pi reads them, the entries, and the context.

Entries are :class:`~pi_notebook.ai.PiModel` objects whose fields are declared in the order Pi writes them,
so ``entry.to_pi_json()`` is the line Pi wrote; message entries, most of a file, are lighter
(:class:`SessionMessageEntry` keeps its line as written and types its message on first use). Also here: the
JavaScript behaviours reading depends on (``trim``, ``Date.parse``), writing and reading one JSON line, and
the v1/v2 migrations.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import uuid
import warnings
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, ValidationError

from ..agent_core import AgentMessage, MessageValidationError, OpaqueMessage, from_pi_json, to_pi_json
from ..ai import ImageContent, Number, PiModel, TextContent
from .json_lines import json_line, parse_json_line
from .session_json import message_from_line

CURRENT_SESSION_VERSION = 3
"""The session format version this module writes (Pi's ``CURRENT_SESSION_VERSION``)."""


class SessionWarning(UserWarning):
    """Something in a session file was skipped or looks wrong; the load carried on."""


# --- JavaScript-compatible helpers ----------------------------------------------------------------------

#: The characters JS ``String.prototype.trim`` removes (WhiteSpace + LineTerminator, BOM included).
#: ``str.strip()`` differs: it keeps U+FEFF and strips U+001C..U+001F and U+0085.
_ISO_DATE = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:?\d{2})?)?",
    re.ASCII,  # JS \d is 0-9 only
)
_MAX_TIME_MS = 8.64e15  # the range of a JS Date


def parse_iso_ms(value: Any) -> int | None:
    """JS ``Date.parse`` for ISO-8601 strings: Unix milliseconds, or ``None`` where JS gives ``NaN``.

    Follows the ECMAScript date-time string format as V8 (Node) reads it: a date-only form is UTC, a date-time
    without an offset is local time, ``24:00`` is the end of the day, a day 29..31 past the month's end rolls
    over. Other (legacy, engine-specific) formats give ``None``.
    """
    if not isinstance(value, str):
        return None
    m = _ISO_DATE.fullmatch(value)
    if m is None or m.group(1) == "-000000":
        return None
    year, month, day = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
    hour, minute, second = int(m.group(4) or 0), int(m.group(5) or 0), int(m.group(6) or 0)
    millis = int((m.group(7) or "0")[:3].ljust(3, "0"))
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    if minute > 59 or second > 59 or hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    days = _days_from_civil(year, month, day)
    ms = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis
    zone = m.group(8)
    if zone and zone not in "Zz":
        zh, zm = int(zone[1:3]), int(zone[-2:])
        if zh > 23 or zm > 59:
            return None
        ms -= (1 if zone[0] == "+" else -1) * (zh * 60 + zm) * 60_000
    elif zone is None and m.group(4) is not None:
        ms = _local_wall_to_utc_ms(ms)
    return ms if abs(ms) <= _MAX_TIME_MS else None


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Days since 1970-01-01 in the proleptic Gregorian calendar, for any year (JS allows ±275760).
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _local_wall_to_utc_ms(wall_ms: int) -> int:
    # A date-time without an offset is local time in JS; a naive datetime's timestamp() reads it the same way.
    try:
        naive = datetime(1970, 1, 1) + timedelta(milliseconds=wall_ms)
        return wall_ms % 1000 + 1000 * round(naive.replace(microsecond=0).timestamp())
    except (OverflowError, OSError, ValueError):
        return wall_ms  # outside what the OS can convert: read it as UTC


def js_date_ms(value: Any) -> int | None:
    """JS ``new Date(value).getTime()`` for a JSON value: Unix milliseconds, or ``None`` where JS gives ``NaN``.

    How Pi reads an entry's ``timestamp``, whatever it holds: a string as :func:`parse_iso_ms`; a number as
    milliseconds, cut toward zero, ``NaN`` beyond a JS Date's range (±8.64e15); ``true``/``false`` as 1/0; JSON
    ``null`` as 0. An array or object gives ``None`` (JS would parse its text: ``[1]`` is a date; left out).
    """
    if isinstance(value, str):
        return parse_iso_ms(value)
    if value is None or isinstance(value, bool):
        return int(bool(value))
    if isinstance(value, int):
        return value if abs(value) <= _MAX_TIME_MS else None
    if isinstance(value, float):
        return int(value) if abs(value) <= _MAX_TIME_MS else None  # (NaN and infinities compare False)
    return None


def entry_time_ms(entry: Any) -> int | None:
    """When Pi reads ``entry`` as written (``new Date(entry.timestamp).getTime()``): what a summary or custom message
    built from it is dated, and what orders siblings in the tree. ``None`` for ``NaN``, and for no timestamp.

    An explicit ``null`` is 0 on the typed entries; a message entry's ``null`` reads as absent (only the tree's
    order of siblings uses it).
    """
    stamp = entry.timestamp
    if stamp is None:
        explicit = isinstance(entry, PiModel) and entry.__dict__.get("timestamp", 0) is None
        return 0 if explicit else None
    return js_date_ms(stamp)


def new_entry_id(taken: Iterable[str] | Any) -> str:
    """8 hex characters of a random UUID, redrawn while ``taken`` contains it (Pi's ``generateId``)."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def not_an_entry(value: Any) -> str | None:
    """Why a parsed line (after the header) is not an entry to keep, or ``None`` if it is one."""
    if not isinstance(value, dict):
        return f"{json.dumps(value)[:40]} is not an entry object, skipped"
    kind = value.get("type")
    if not isinstance(kind, str):
        return 'an object without a string "type" is not an entry, skipped'
    if kind == "session":
        return "a second session header, ignored"
    if not isinstance(value.get("id"), str):
        return f'a {kind!r} entry without a string "id", skipped'
    if kind == "message" and not isinstance(value.get("message"), dict):
        return "a message entry without a message object, skipped"
    return None


def migrate_values(values: list[Any], version: float) -> None:
    """Bring parsed lines (header first) from ``version`` to v3, in place, as Pi's migrations do.

    v1 → v2: fresh ids, a linear parent chain in file order, compaction ``firstKeptEntryIndex`` (an index
    into the parsed lines, header included) → ``firstKeptEntryId``. v2 → v3: message role ``hookMessage`` →
    ``custom``.
    """
    if version >= CURRENT_SESSION_VERSION:
        return
    entries = [v for v in values[1:] if isinstance(v, dict) and isinstance(v.get("type"), str)]
    entries = [v for v in entries if v["type"] != "session"]
    if version < 2:
        taken: set[str] = set()
        previous = None
        for value in entries:
            value["id"] = new_entry_id(taken)
            value["parentId"], previous = previous, value["id"]
            taken.add(previous)
        for value in entries:
            index = value.get("firstKeptEntryIndex")
            if value["type"] != "compaction" or isinstance(index, bool) or not isinstance(index, int | float):
                continue
            del value["firstKeptEntryIndex"]
            target = values[int(index)] if float(index).is_integer() and 0 <= index < len(values) else None
            if isinstance(target, dict) and target.get("type") != "session" and "id" in target:
                value["firstKeptEntryId"] = target["id"]
    if version < 3:
        for value in entries:
            message = value.get("message") if value["type"] == "message" else None
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


# --- the header and the entries -------------------------------------------------------------------------


class SessionHeader(PiModel):
    """The first line of a session file. Not an entry: it is not part of the tree."""

    type: Literal["session"] = "session"
    """Line tag, always ``"session"``."""
    version: Number | None = None
    """Format version (3 now); absent in v1 files."""
    id: str
    """Session id, a UUID string."""
    timestamp: str | None = None
    """Creation time, ISO-8601 (``toISOString``)."""
    cwd: str | None = None
    """Working directory the session was started in."""
    parent_session: str | None = None
    """Path of the session file this one was forked or branched from."""


class _EntryBase(PiModel):
    """Fields every entry has; subclasses add their own after these."""

    #: Keys that Pi writes before ``id`` (custom entries spread their payload first).
    _leading_keys: ClassVar[tuple[str, ...]] = ()

    type: str
    """Entry tag."""
    id: str
    """Entry id, 8 hex characters, unique in the file."""
    parent_id: str | None = None
    """Id of the parent entry; ``None`` (JSON ``null``) for a root."""
    timestamp: Any = None
    """When the entry was written, ISO-8601 (``toISOString``) as Pi writes it. Any other value is kept as written
    (Pi reads such an entry too: a number as milliseconds, see :func:`entry_time_ms`); absent only in hand-made
    files."""

    def to_pi_json(self) -> dict[str, Any]:
        """The entry as Pi's JSON, keys in the order Pi writes them (``id``/``parentId`` as the file has them)."""
        data = super().to_pi_json()
        head = {key: data.pop(key) for key in ("type", *self._leading_keys) if key in data}
        written = (self.__pydantic_private__ or {}).get(_AS_WRITTEN)
        return {**head, **data, **written} if written else {**head, **data}

    def set_in_memory(self, *, id: str | None = None, parent_id: str | None = None) -> None:
        """Change ``id`` or ``parent_id`` in memory only (a repair of the tree made while loading):
        :meth:`to_pi_json` keeps giving the values the file holds. See :func:`written_id`."""
        _set_in_memory(self, id, parent_id)


class SessionMessageEntry:
    """A conversation message (user, assistant, toolResult, bashExecution, legacy custom, or any role).

    Not a pydantic model: a long session holds hundreds of thousands of these, so each keeps only its ids, its
    timestamp, its role and its line as the file holds it (UTF-8 bytes, kept once). The message is typed on
    first access to :attr:`message` (only what is used is validated, and kept); :meth:`to_pi_json` and
    :attr:`raw_message` parse the line again, so they always give what the file holds.
    """

    __slots__ = ("_line", "_message", "_written", "id", "parent_id", "role", "timestamp")

    type: ClassVar[str] = "message"
    """Entry tag, always ``"message"``."""
    id: str
    """Entry id, 8 hex characters, unique in the file."""
    parent_id: str | None
    """Id of the parent entry; ``None`` (JSON ``null``) for a root."""
    timestamp: Any
    """When the entry was written, ISO-8601 (``toISOString``) as Pi writes it; any other value as written (see
    :func:`entry_time_ms`); ``None`` when absent (only in hand-made files)."""
    role: Any
    """The message's ``role``, read without typing the message."""
    _line: bytes | dict[str, Any]
    _message: AgentMessage | None
    _written: dict[str, Any] | None  # {"id"?, "parentId"?} as the file has them, after a repair

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        timestamp: Any,
        role: Any,
        line: bytes | dict[str, Any],
        message: Any = None,
    ) -> None:
        """Internal (use :meth:`model_validate` for Pi JSON): ``line`` is the entry's JSON as written, ``message``
        the typed message when the caller has it."""
        self.id, self.parent_id, self.timestamp, self.role = id, parent_id, timestamp, role
        self._line, self._message, self._written = line, message, None

    @classmethod
    def model_validate(cls, data: Any, line: bytes | dict[str, Any] | None = None) -> SessionMessageEntry:
        """An entry from its Pi JSON (``ValueError`` if it is not a valid message entry). ``line``: the JSON as
        the file holds it, if known (else ``data`` written as Pi writes it); a dict only for an old file's
        entry, migrated in memory (no line holds it)."""
        if not isinstance(data, dict):
            raise ValueError("a message entry is a JSON object")
        problem = message_entry_problem(data)
        if problem is not None or not isinstance(data.get("id"), str):
            raise ValueError(f"invalid 'message' entry ({problem or 'id'})")
        message = data["message"]
        typed = None if isinstance(message, dict) else message
        if typed is not None:
            data = {**data, "message": to_pi_json(typed)}
        if line is None:
            line = json_line(data)[:-1]
        role = intern_role(data["message"].get("role"))
        return cls(data["id"], data.get("parentId"), data.get("timestamp"), role, line, typed)

    def _json(self) -> dict[str, Any]:
        line = self._line
        return parse_json_line(line) if isinstance(line, bytes) else copy.deepcopy(line)

    @property
    def message(self) -> AgentMessage:
        """The typed AgentMessage (an ``OpaqueMessage`` for a role nobody registered), typed on first use."""
        # Typed once; straight from the line's bytes where that gives the same message (session_json), else here.
        message = self._message or message_from_line(self._line, self.role)
        if message is None:
            raw = self._json()["message"]
            try:
                message = from_pi_json(raw, lenient=False)
            except MessageValidationError as e:  # a damaged field costs this message only, said once
                message = OpaqueMessage(raw=raw, reason=str(e))
                warnings.warn(
                    f"message entry {self.id!r}: invalid {e.role!r} message ({_fields_of(e.error)}); kept as "
                    "written, not sent to the LLM",
                    SessionWarning,
                    stacklevel=2,
                )
        self._message = message
        return message

    @property
    def raw_message(self) -> dict[str, Any]:
        """The message's JSON as the file holds it (parsed from the line: a new object each time)."""
        return self._json()["message"]

    def to_pi_json(self) -> dict[str, Any]:
        """The entry as Pi's JSON, as the file holds it (``id``/``parentId`` too, after a repair in memory)."""
        return self._json()

    def set_in_memory(self, *, id: str | None = None, parent_id: str | None = None) -> None:
        """Change ``id`` or ``parent_id`` in memory only (a repair of the tree made while loading):
        :meth:`to_pi_json` keeps giving the values the file holds. See :func:`written_id`."""
        written = dict(self._written or {})
        if id is not None:
            written.setdefault("id", self.id)
            self.id = id
        if parent_id is not None:
            written.setdefault("parentId", self.parent_id)
            self.parent_id = parent_id
        self._written = written

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionMessageEntry):
            return NotImplemented
        return (self.id, self.parent_id, self.to_pi_json()) == (other.id, other.parent_id, other.to_pi_json())

    __hash__ = None  # type: ignore[assignment]  # mutable (repairs), as pydantic models are

    def __repr__(self) -> str:
        return f"SessionMessageEntry(id={self.id!r}, parent_id={self.parent_id!r}, role={self.role!r})"


def intern_role(role: Any) -> Any:
    """One string object per role for all entries (a long session repeats a handful of roles)."""
    return sys.intern(role) if type(role) is str else role


def message_entry_problem(data: dict[str, Any]) -> str | None:
    """Which fields keep ``data`` (an object with ``"type": "message"``) from being a message entry, as
    ``"parentId"`` or ``"message"``; ``None`` if it is one. (Any ``timestamp`` will do: Pi reads the entry.)"""
    bad = []
    if data.get("type") != "message":
        bad.append("type")
    parent, message = data.get("parentId"), data.get("message")
    if parent is not None and type(parent) is not str:
        bad.append("parentId")
    if not isinstance(message, dict) and not callable(getattr(message, "to_pi_json", None)):
        bad.append("message")
    return ", ".join(bad) if bad else None


def _fields_of(error: Any) -> str:
    """``field: problem`` for the first errors of a validation error (the union tag left out of the path)."""
    if isinstance(error, str):
        return error
    out = []
    for err in error.errors()[:3]:
        loc = [str(part) for part in err["loc"]]
        out.append(f"{'.'.join(loc[1:] or loc)}: {err['msg']}")
    return "; ".join(out)


class ThinkingLevelChangeEntry(_EntryBase):
    """The thinking level changed from here on."""

    type: Literal["thinking_level_change"] = "thinking_level_change"
    """Entry tag, always ``"thinking_level_change"``."""
    thinking_level: str
    """``"off"``, ``"minimal"``, ``"low"``, ``"medium"``, ``"high"`` or ``"xhigh"``."""


class ModelChangeEntry(_EntryBase):
    """The model changed from here on."""

    type: Literal["model_change"] = "model_change"
    """Entry tag, always ``"model_change"``."""
    provider: str
    """Provider name, e.g. ``"anthropic"``."""
    model_id: str
    """Model id, e.g. ``"claude-sonnet-4-5"``."""


class CompactionEntry(_EntryBase):
    """A summary replacing the history before ``first_kept_entry_id`` on this path."""

    type: Literal["compaction"] = "compaction"
    """Entry tag, always ``"compaction"``."""
    summary: str
    """The summary text the LLM reads instead of the compacted history."""
    first_kept_entry_id: str | None = None
    """First entry kept verbatim; ``None`` only when a v1 ``firstKeptEntryIndex`` could not be resolved."""
    tokens_before: Number
    """Context tokens before compaction."""
    details: Any = None
    """Extension data; Pi stores ``{"readFiles": [...], "modifiedFiles": [...]}``."""
    from_hook: bool | None = None
    """True when an extension, not Pi, wrote the summary."""


class BranchSummaryEntry(_EntryBase):
    """A summary of the branch the user left, hung under the entry they returned to."""

    type: Literal["branch_summary"] = "branch_summary"
    """Entry tag, always ``"branch_summary"``."""
    from_id: str
    """The entry the new branch starts from (the parent), or ``"root"``."""
    summary: str
    """The summary text; an empty summary adds nothing to the context."""
    details: Any = None
    """Extension data; Pi stores the read/modified file lists."""
    from_hook: bool | None = None
    """True when an extension, not Pi, wrote the summary."""


class CustomEntry(_EntryBase):
    """Extension state. Never part of the LLM context."""

    _leading_keys = ("customType", "data")
    type: Literal["custom"] = "custom"
    """Entry tag, always ``"custom"``."""
    custom_type: str
    """Id of the extension that wrote it."""
    data: Any = None
    """The extension's data, any JSON."""


class CustomMessageEntry(_EntryBase):
    """A message from an extension that enters the LLM context as a ``custom`` message."""

    _leading_keys = ("customType", "content", "display", "details")
    type: Literal["custom_message"] = "custom_message"
    """Entry tag, always ``"custom_message"``."""
    custom_type: str
    """Id of the extension that wrote it."""
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator="type")]]
    """What the LLM reads: a string or text/image blocks."""
    display: bool | None = None
    """UI only: False hides it (it is still sent to the LLM). Pi writes it always, but keeps it absent when an
    extension leaves it out (undefined); then it stays absent here too, and this notebook shows the message."""
    details: Any = None
    """Extension metadata; never sent to the LLM."""


class LabelEntry(_EntryBase):
    """Sets (or, with no/empty label, clears) the label of another entry."""

    type: Literal["label"] = "label"
    """Entry tag, always ``"label"``."""
    target_id: str
    """The labelled entry."""
    label: str | None = None
    """The label; absent or ``""`` clears it."""


class SessionInfoEntry(_EntryBase):
    """Session metadata: the display name."""

    type: Literal["session_info"] = "session_info"
    """Entry tag, always ``"session_info"``."""
    name: str | None = None
    """The session's display name, as written (Pi trims a name when it writes one, another writer may not;
    ``""`` does not rename)."""


class UnknownEntry(PiModel):
    """An entry this code cannot type: an unknown ``type``, or a known type whose fields do not validate.

    It keeps its raw JSON (``to_pi_json()`` returns it unchanged), stays in the tree and on paths, and adds
    nothing to the context.
    """

    type: str
    """The entry's ``type`` as written."""
    id: str
    """Entry id."""
    parent_id: Any = None
    """Parent id as written (a root when not a non-empty string)."""
    timestamp: Any = None
    """Timestamp as written."""

    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _reason: str = PrivateAttr(default="")

    @classmethod
    def from_raw(cls, raw: dict[str, Any], reason: str) -> UnknownEntry:
        """Wrap a raw entry object (it must have string ``type`` and ``id``)."""
        entry = cls.model_validate(raw)
        entry._raw = raw
        entry._reason = reason
        return entry

    @property
    def reason(self) -> str:
        """Why the entry is not typed."""
        return self._reason

    def to_pi_json(self) -> dict[str, Any]:
        """The raw JSON, unchanged (a copy)."""
        if self._raw:
            return copy.deepcopy(self._raw)
        data = super().to_pi_json()
        written = (self.__pydantic_private__ or {}).get(_AS_WRITTEN)
        return {**data, **written} if written else data

    def set_in_memory(self, *, id: str | None = None, parent_id: str | None = None) -> None:
        """Change ``id`` or ``parent_id`` in memory only; :meth:`to_pi_json` keeps the raw JSON."""
        _set_in_memory(self, id, parent_id)


# Key, in an entry's pydantic private dict, of {"id"?, "parentId"?} as the file has them. Set only on entries the
# loader repaired (not a declared PrivateAttr: a default on every entry would slow loading).
_AS_WRITTEN = "_as_written"


def _set_in_memory(entry: Any, new_id: str | None, parent_id: str | None) -> None:
    private = entry.__pydantic_private__
    written = dict(private.get(_AS_WRITTEN) or {})
    if new_id is not None:
        written.setdefault("id", entry.id)
        entry.id = new_id
    if parent_id is not None:
        written.setdefault("parentId", entry.parent_id)
        entry.parent_id = parent_id
    private[_AS_WRITTEN] = written


def written_id(entry: Any) -> str:
    """The entry's id as the file holds it (differs from ``entry.id`` after :meth:`set_in_memory`)."""
    if type(entry) is SessionMessageEntry:
        written = entry._written
    else:
        written = entry.__pydantic_private__.get(_AS_WRITTEN)
    return written["id"] if written and "id" in written else entry.id


SessionEntry = (
    SessionMessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | UnknownEntry
)
"""Any entry of a session file (the header excluded)."""

ENTRY_TYPES: dict[str, Any] = {
    "message": SessionMessageEntry,
    **{c.__pydantic_fields__["type"].default: c for c in _EntryBase.__subclasses__()},
}
"""The entry class for each known ``type``."""


def parse_entry(raw: dict[str, Any], line: bytes | dict[str, Any] | None = None) -> tuple[SessionEntry, str | None]:
    """A raw entry object (with string ``type`` and ``id``) → ``(entry, problem)``. ``line``: a message entry's
    JSON as the file holds it (see :meth:`SessionMessageEntry.model_validate`).

    Never raises on content read from a file (given its ``line``): an unknown type or invalid fields give an
    :class:`UnknownEntry` and a short description of the problem (``None`` when the entry is fine).
    """
    cls = ENTRY_TYPES.get(raw["type"])
    if cls is None:
        return UnknownEntry.from_raw(raw, "unknown type"), f"unknown entry type {raw['type']!r} kept as is"
    if cls is SessionMessageEntry:
        fields = message_entry_problem(raw)
        if fields is None:
            return SessionMessageEntry.model_validate(raw, line), None
        reason = f"invalid 'message' entry ({fields})"
        return UnknownEntry.from_raw(raw, reason), f"{reason} kept as an unknown entry"
    try:
        return cls.model_validate(raw), None
    except ValidationError as e:
        fields = ", ".join(".".join(map(str, err["loc"])) or "?" for err in e.errors()[:3])
        reason = f"invalid {raw['type']!r} entry ({fields})"
        return UnknownEntry.from_raw(raw, reason), f"{reason} kept as an unknown entry"
