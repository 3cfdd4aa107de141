"""Anthropic Messages streaming responses in the wire format Anthropic sends, for the scripted server.

Each helper returns SSE chunks (``event: <name>`` + ``data: <json>``), shaped like the API's own events:
``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``, ``ping``, ``message_delta``,
``message_stop``. A test strings them together: ``response(text_block(0, "Hel", "lo"))``.
"""

from __future__ import annotations

from typing import Any

from .scripted_server import sse

MODEL_ID = "claude-sonnet-4-5-20250929"


def _event(data: dict[str, Any]) -> bytes:
    return sse(data, data["type"])


def message_start(input_tokens: int = 25, cache_read: int = 0, cache_write: int = 0, output_tokens: int = 1):
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output_tokens,
    }
    message = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": MODEL_ID,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return [_event({"type": "message_start", "message": message})]


def ping() -> list[bytes]:
    return [_event({"type": "ping"})]


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    chunks = [_event({"type": "content_block_start", "index": index, "content_block": start})]
    chunks += [_event({"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    chunks.append(_event({"type": "content_block_stop", "index": index}))
    return chunks


def text_block(index: int, *parts: str) -> list[bytes]:
    return _block(index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in parts])


def thinking_block(index: int, parts: list[str], signature_parts: list[str]) -> list[bytes]:
    deltas = [{"type": "thinking_delta", "thinking": p} for p in parts]
    deltas += [{"type": "signature_delta", "signature": s} for s in signature_parts]
    return _block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def redacted_block(index: int, data: str) -> list[bytes]:
    return _block(index, {"type": "redacted_thinking", "data": data}, [])


def tool_use_block(index: int, tool_id: str, name: str, *json_parts: str) -> list[bytes]:
    start = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return _block(index, start, [{"type": "input_json_delta", "partial_json": p} for p in json_parts])


def message_delta(stop_reason: str = "end_turn", output_tokens: int = 15, **usage: int) -> list[bytes]:
    data = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens, **usage},
    }
    return [_event(data)]


def message_stop() -> list[bytes]:
    return [_event({"type": "message_stop"})]


def response(*blocks: list[bytes], stop_reason: str = "end_turn", output_tokens: int = 15, **start: int):
    """A whole streamed response: start, a ping, the blocks, the stop reason and usage, the stop."""
    chunks = message_start(**start) + ping()
    for block in blocks:
        chunks += block
    return chunks + message_delta(stop_reason, output_tokens) + message_stop()


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The JSON body of an API error response (and of an ``error`` event)."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
