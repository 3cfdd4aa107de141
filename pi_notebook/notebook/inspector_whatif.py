"""What if: the inspector's preview of a changed history, computed without touching the stored one.

A user toggles a ``bashExecution`` row's ``exclude_from_context`` (Pi's ``!!``), a ``custom`` message's
``display``, or drops a message from the history, and sees what the LLM would then get: the rows and the request
bodies of *copies* of the messages with the changes applied (pydantic ``model_copy``), traced through the same
pipeline (the source's own ``preview(messages=...)``, then
:func:`~pi_notebook.notebook.inspector_source.retrace`) and built by the same request builders as the real view,
every secret redacted
(:func:`~pi_notebook.notebook.inspector_source.clean_body`). The session, its file and the agent's history are
never written: the copies live only in the returned preview.

``changes`` is a dict of lists of message indices (positions in the history, as the rows' ``index``):

- ``exclude`` / ``include``: set a ``bashExecution`` message's ``excludeFromContext`` to true / false;
- ``hide`` / ``show``: set a ``custom`` message's ``display`` to false / true (a UI setting: Pi still sends it);
- ``drop``: leave the message out of the history.
"""

from __future__ import annotations

from typing import Any

from ..agent_core import Agent, to_pi_json
from ..ai import Model, get_model
from ..ai.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_GOOGLE_MODEL, DEFAULT_OPENAI_MODEL
from ..coding_agent.agent_session import AgentSession
from .inspector_source import clean_body, history_of, request_key, retrace, secrets_in, source_of

__all__ = ["CHANGE_KINDS", "normalise_changes", "preview", "request_models", "source_secrets"]

CHANGE_KINDS = {
    "exclude": ("bashExecution", "exclude_from_context", True),
    "include": ("bashExecution", "exclude_from_context", False),
    "hide": ("custom", "display", False),
    "show": ("custom", "display", True),
    "drop": (None, None, None),
}
"""Change kind → (the role it applies to, or None for any; the field it sets; the value)."""

DROP_REASON = "what if: left out of the history"
DISPLAY_NOTE = "display is a UI setting: a hidden custom message is still sent to the LLM (Pi's rule)"


def request_models(chosen: Model, session_model: Model | None) -> dict[str, Model]:
    """The models whose request bodies the inspector shows, by request key: the chosen model first, the session's,
    then one model of each API the notebook speaks (Anthropic, OpenAI's Responses and Chat Completions — the
    same model — and Gemini)."""
    candidates = [
        chosen, session_model, get_model(DEFAULT_ANTHROPIC_MODEL), get_model(DEFAULT_OPENAI_MODEL),
        get_model(DEFAULT_OPENAI_MODEL, api="openai-completions"), get_model(DEFAULT_GOOGLE_MODEL),
    ]  # fmt: skip
    models: dict[str, Model] = {}
    for candidate in candidates:
        if candidate is not None:
            models.setdefault(request_key(candidate), candidate)
    return models


def source_secrets(source: Any) -> list[str]:
    """The secret values a request body must never show: API keys of the environment and of the agent's options."""
    options: dict[str, Any] = {}
    if isinstance(source, AgentSession):
        options = source.agent.stream_options
    elif isinstance(source, Agent):
        options = source.stream_options
    return secrets_in(options)


def normalise_changes(changes: Any, messages: list[Any]) -> dict[str, list[int]]:
    """``changes`` checked against the typed history: every kind a known one, every index a message of the role
    the kind applies to, no index in two kinds that contradict. Sorted lists without repeats, empty kinds left
    out. Misuse raises ``ValueError``."""
    if not isinstance(changes, dict):
        raise ValueError(f"changes must be a dict like {{'exclude': [3]}}, not {type(changes).__name__}")
    unknown = sorted(set(changes) - set(CHANGE_KINDS))
    if unknown:
        raise ValueError(f"unknown change kind(s) {unknown}; known: {sorted(CHANGE_KINDS)}")
    out: dict[str, list[int]] = {}
    for kind, indices in changes.items():
        if not isinstance(indices, list | tuple | set):
            raise ValueError(f"{kind}: a list of message indices, not {type(indices).__name__}")
        role = CHANGE_KINDS[kind][0]
        seen: set[int] = set()
        for index in indices:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(messages):
                raise ValueError(f"{kind}: {index!r} is not the index of a message (0..{len(messages) - 1})")
            actual = getattr(messages[index], "role", None)
            if role is not None and actual != role:
                raise ValueError(f"{kind}: message {index} is a {actual} message; {kind} applies to {role} only")
            seen.add(index)
        if seen:
            out[kind] = sorted(seen)
    for a, b in (("exclude", "include"), ("hide", "show")):
        both = set(out.get(a, ())) & set(out.get(b, ()))
        if both:
            raise ValueError(f"message(s) {sorted(both)} both in {a} and {b}")
    return out


def _changed(messages: list[Any], changes: dict[str, list[int]]) -> tuple[list[Any], list[int], dict[int, str]]:
    """Copies of the changed messages in place of them, the dropped ones left out; the original index of each kept
    message; what changed per original index."""
    updates: dict[int, dict[str, Any]] = {}
    marks: dict[int, str] = {}
    for kind, indices in changes.items():
        _role, name, value = CHANGE_KINDS[kind]
        for index in indices:
            marks[index] = kind if index not in marks else f"{marks[index]}+{kind}"
            if name is not None:
                updates.setdefault(index, {})[name] = value
    dropped = set(changes.get("drop", ()))
    kept = [i for i in range(len(messages)) if i not in dropped]
    out = [messages[i].model_copy(update=updates[i], deep=True) if i in updates else messages[i] for i in kept]
    return out, kept, marks


def _rows(trace_rows: list[dict[str, Any]], kept: list[int], messages: list[Any], marks: dict[int, str]) -> list[Any]:
    """The preview's rows with the original indices, a row for each dropped message where it was, and ``whatIf``
    on the rows a change touched."""
    dropped = sorted(set(range(len(messages))) - set(kept))
    rows: list[dict[str, Any]] = []

    def flush(before: int) -> None:
        while dropped and dropped[0] < before:
            index = dropped.pop(0)
            agent = to_pi_json(messages[index])
            rows.append({
                "index": index, "role": agent.get("role", "?"), "status": "dropped", "reason": DROP_REASON,
                "tokens": 0, "agent": agent, "llm": [], "produced_text": "", "whatIf": marks[index],
            })  # fmt: skip

    for row in trace_rows:
        row = dict(row)
        if row["index"] is not None:
            row["index"] = kept[row["index"]]
            flush(row["index"])
            if row["index"] in marks:
                row["whatIf"] = marks[row["index"]]
        rows.append(row)
    flush(len(messages))
    return rows


def preview(
    source: Any, changes: Any, *, models: dict[str, Model], secrets: list[str], provider: str = ""
) -> dict[str, Any]:
    """What the LLM would get if ``changes`` were made to ``source``'s history (nothing is stored).

    Returns ``changes`` (as checked), ``rows`` (as the inspector's, with the original indices; dropped messages
    keep a ``dropped`` row; the rows a change touched carry ``whatIf``: the kind), ``requests`` (request key →
    body, cleaned), ``provider``, ``total_tokens`` and ``notes``.
    """
    typed = history_of(source)
    checked = normalise_changes(changes, typed)
    messages, kept, marks = _changed(typed, checked)
    src = source_of(source, messages)
    src.notes = []
    trace = retrace(src, None, first_only=False)
    requests: dict[str, Any] = {}
    for key, model in models.items():
        try:
            body = src.call.request(model)
        except Exception as e:  # a builder that cannot handle this context: show why, keep the others
            body = {"error": f"{type(e).__name__}: {e}"}
        requests[key] = clean_body(body, secrets)
    notes = list(trace.notes)
    if "hide" in checked or "show" in checked:
        notes.append(DISPLAY_NOTE)
    return {
        "changes": checked,
        "rows": _rows(trace.rows, kept, typed, marks),
        "requests": requests,
        "provider": provider if provider in requests else next(iter(requests), ""),
        "total_tokens": trace.total_tokens + src.system_tokens + src.tools_tokens,
        "notes": notes,
    }
