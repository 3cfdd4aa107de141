"""OpenAI Responses streaming in the wire format OpenAI sends, for the scripted server.

Each item helper returns the event dicts of one output item, shaped like the API's own events
(``response.output_item.added``, ``response.content_part.added``, ``response.output_text.delta`` …
``response.output_item.done``); :func:`response` frames a whole answer (``response.created``,
``response.in_progress``, the items, ``response.completed`` with usage) and :func:`encode` numbers the events
and turns them into SSE chunks (``event: <type>`` + ``data: <json>``)::

    chunks = response(message("msg_1", 0, "Hel", "lo"), usage=usage(20, 5, cached=8))
"""

from __future__ import annotations

import copy
from typing import Any

from .scripted_server import sse

MODEL_ID = "gpt-5-mini-2025-08-07"
RESPONSE_ID = "resp_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
ENCRYPTED = "gAAAAABojYNyjgMJV3tcl90FpwXLe9bUmKtHEADCTZwBJtKJv88Ye6qM5eIVsp4cn3owbHn1xJMLNsF/FmA0hA8Q=="

Events = list[dict[str, Any]]


def encode(events: Events) -> list[bytes]:
    """SSE chunks, one per event, with ``sequence_number`` filled in as the API does."""
    chunks = []
    for number, event in enumerate(events):
        chunks.append(sse({**event, "sequence_number": number}, event["type"]))
    return chunks


def response_object(status: str = "in_progress", output: list | None = None, **fields: Any) -> dict[str, Any]:
    """The ``response`` object the lifecycle events carry."""
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": 1735689600,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": MODEL_ID,
        "output": output or [],
        "parallel_tool_calls": True,
        "store": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": None,
        **fields,
    }


def usage(input_tokens: int = 20, output_tokens: int = 5, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """A ``usage`` object: ``input_tokens`` include the ``cached`` ones, ``output_tokens`` the reasoning ones."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def _done_item(events: Events) -> dict[str, Any]:
    return next(e["item"] for e in events if e["type"] == "response.output_item.done")


# --- items -----------------------------------------------------------------------------------------------


def message(item_id: str, output_index: int, *deltas: str, phase: str | None = None, refusal: bool = False):
    """An assistant ``message`` item streaming ``deltas`` (as ``refusal`` deltas if asked)."""
    text = "".join(deltas)
    part_type, field, delta_type = (
        ("refusal", "refusal", "response.refusal.delta")
        if refusal
        else ("output_text", "text", "response.output_text.delta")
    )
    empty_part = {"type": part_type, field: ""} | ({} if refusal else {"annotations": [], "logprobs": []})
    full_part = {**empty_part, field: text}
    item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    if phase is not None:
        item["phase"] = phase
    where = {"item_id": item_id, "output_index": output_index, "content_index": 0}
    events: Events = [{"type": "response.output_item.added", "output_index": output_index, "item": item}]
    events.append({"type": "response.content_part.added", **where, "part": empty_part})
    for delta in deltas:
        extra = {} if refusal else {"logprobs": []}
        events.append({"type": delta_type, **where, "delta": delta, **extra})
    done_type = "response.refusal.done" if refusal else "response.output_text.done"
    events.append({"type": done_type, **where, field: text})
    events.append({"type": "response.content_part.done", **where, "part": full_part})
    done = {**item, "status": "completed", "content": [full_part]}
    events.append({"type": "response.output_item.done", "output_index": output_index, "item": done})
    return events


def reasoning(item_id: str, output_index: int, parts: list[list[str]], encrypted: str | None = ENCRYPTED):
    """A ``reasoning`` item whose summary has one part per list in ``parts``, each streamed in pieces;
    ``encrypted`` is its ``encrypted_content`` (asked for with ``include``)."""
    item = {"id": item_id, "type": "reasoning", "summary": []}
    events: Events = [{"type": "response.output_item.added", "output_index": output_index, "item": item}]
    summary = []
    for number, pieces in enumerate(parts):
        where = {"item_id": item_id, "output_index": output_index, "summary_index": number}
        events.append({"type": "response.reasoning_summary_part.added", **where, "part": _summary("")})
        events += [{"type": "response.reasoning_summary_text.delta", **where, "delta": p} for p in pieces]
        text = "".join(pieces)
        events.append({"type": "response.reasoning_summary_text.done", **where, "text": text})
        events.append({"type": "response.reasoning_summary_part.done", **where, "part": _summary(text)})
        summary.append(_summary(text))
    done = {**item, "summary": summary}
    if encrypted is not None:
        done["encrypted_content"] = encrypted
    events.append({"type": "response.output_item.done", "output_index": output_index, "item": done})
    return events


def _summary(text: str) -> dict[str, str]:
    return {"type": "summary_text", "text": text}


def function_call(item_id: str, output_index: int, call_id: str, name: str, *fragments: str):
    """A ``function_call`` item whose arguments stream as ``fragments``."""
    arguments = "".join(fragments)
    item = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": call_id,
        "name": name,
    }
    where = {"item_id": item_id, "output_index": output_index}
    events: Events = [{"type": "response.output_item.added", "output_index": output_index, "item": item}]
    events += [{"type": "response.function_call_arguments.delta", **where, "delta": f} for f in fragments]
    events.append({"type": "response.function_call_arguments.done", **where, "arguments": arguments})
    done = {**item, "status": "completed", "arguments": arguments}
    events.append({"type": "response.output_item.done", "output_index": output_index, "item": done})
    return events


def web_search(item_id: str, output_index: int) -> Events:
    """A built-in tool item (not part of Pi's message model)."""
    item = {"id": item_id, "type": "web_search_call", "status": "in_progress"}
    done = {**item, "status": "completed", "action": {"type": "search", "query": "weather"}}
    return [
        {"type": "response.output_item.added", "output_index": output_index, "item": item},
        {"type": "response.web_search_call.searching", "output_index": output_index, "item_id": item_id},
        {"type": "response.output_item.done", "output_index": output_index, "item": done},
    ]


def interleave(*items: Events) -> Events:
    """The events of several items taken in turns (a server streaming them in parallel)."""
    queues = [list(events) for events in items]
    out: Events = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


# --- whole responses -------------------------------------------------------------------------------------


def start() -> Events:
    return [
        {"type": "response.created", "response": response_object()},
        {"type": "response.in_progress", "response": response_object()},
    ]


def completed(items: list[Events], status: str = "completed", **fields: Any) -> Events:
    """The final lifecycle event: ``response.completed`` (or ``.incomplete`` / ``.failed`` by ``status``)."""
    output = [copy.deepcopy(_done_item(events)) for events in items]
    kind = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}
    final = response_object(status, output, **fields)
    return [{"type": kind.get(status, "response.completed"), "response": final}]


def response(*items: Events, status: str = "completed", **fields: Any) -> list[bytes]:
    """A whole streamed answer: created, in progress, the items, the final event with ``fields``
    (``usage=usage(...)``, ``incomplete_details=...``, ``service_tier=...``)."""
    fields.setdefault("usage", usage())
    events = start()
    for item in items:
        events += item
    return encode(events + completed(list(items), status, **fields))


def error_event(code: str | None, message: str) -> list[bytes]:
    """An ``error`` event alone (to append to a stream)."""
    return [sse({"type": "error", "code": code, "message": message, "param": None, "sequence_number": 99}, "error")]


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """The JSON body of an API error response."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}
