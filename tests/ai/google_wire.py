"""Gemini's ``streamGenerateContent?alt=sse`` wire format, for the scripted server, and the REST view of a request.

Responses: each helper returns SSE chunks (``data: <GenerateContentResponse JSON>``), shaped like the Gemini API's
own (camelCase, a candidate with ``content.parts``, ``finishReason`` and ``usageMetadata`` on the last chunk,
``modelVersion`` and ``responseId`` on every one). A test strings them together:
``response([text("Hel"), text("lo")], finish="STOP")``.

Requests: :func:`rest_view` turns the params our builder makes (the ``@google/genai`` SDK's input shape, what
Pi's ``onPayload`` sees) into the REST body the SDK must send for them, and :func:`canonical` puts a body the
server received into the same form: camelCase keys (the Python SDK writes some of them in snake_case, which the
API accepts too) except inside function arguments, responses and JSON schemas, and ``bytes`` fields (thought
signatures, inline data) decoded, since the SDK re-encodes them in base64url.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from .scripted_server import sse

MODEL_ID = "gemini-2.5-flash"
OPAQUE = frozenset({"args", "response", "parametersJsonSchema", "parameters", "responseJsonSchema"})
"""Keys whose values are the caller's JSON, sent verbatim (their own keys are not field names)."""
BYTES = frozenset({"thoughtSignature", "data"})
"""Fields of type ``bytes`` in the API (base64 in JSON, either alphabet)."""


# --- responses ------------------------------------------------------------------------------------------


def text(value: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": value}
    if signature:
        part["thoughtSignature"] = signature
    return part


def thought(value: str, signature: str | None = None) -> dict[str, Any]:
    return {**text(value, signature), "thought": True}


def call(name: str, args: dict[str, Any], signature: str | None = None, call_id: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "args": args}
    if call_id:
        function["id"] = call_id
    part: dict[str, Any] = {"functionCall": function}
    if signature:
        part["thoughtSignature"] = signature
    return part


def usage(prompt: int = 12, candidates: int = 5, thoughts: int = 0, cached: int = 0) -> dict[str, Any]:
    data = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
    }
    if thoughts:
        data["thoughtsTokenCount"] = thoughts
    if cached:
        data["cachedContentTokenCount"] = cached
    return data


def chunk(
    parts: list[dict[str, Any]],
    finish: str | None = None,
    usage_metadata: dict[str, Any] | None = None,
    **candidate: Any,
) -> dict[str, Any]:
    """One ``GenerateContentResponse`` as the API streams it."""
    body: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0, **candidate}
    if finish:
        body["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [body], "modelVersion": MODEL_ID, "responseId": "resp-1"}
    if usage_metadata is not None:
        out["usageMetadata"] = usage_metadata
    return out


def event(data: Any) -> bytes:
    """One SSE event as Gemini writes them (``\\r\\n`` line ends)."""
    return sse(data).replace(b"\n", b"\r\n")


def response(*parts_per_chunk: list[dict[str, Any]], finish: str = "STOP", **usage_counts: int) -> list[bytes]:
    """A whole streamed response: one chunk per list of parts, the last with the finish reason and usage (every
    chunk carries the usage so far, as the API does)."""
    counts = usage(**usage_counts)
    chunks = [event(chunk(parts, usage_metadata=counts)) for parts in parts_per_chunk[:-1]]
    last = parts_per_chunk[-1] if parts_per_chunk else []
    chunks.append(event(chunk(last, finish=finish, usage_metadata=counts)))
    return chunks


def error_body(code: int, status: str, message: str) -> dict[str, Any]:
    """The JSON of a Gemini API error (an HTTP error body, or an error sent mid-stream)."""
    return {"error": {"code": code, "message": message, "status": status}}


# --- requests -------------------------------------------------------------------------------------------


def stream_path(model_id: str, prefix: str = "/v1beta") -> str:
    return f"{prefix}/models/{model_id}:streamGenerateContent?alt=sse"


def rest_view(params: dict[str, Any]) -> dict[str, Any]:
    """The REST body (in :func:`canonical` form) for builder params ``{model, contents, config}``."""
    config = copy.deepcopy(params.get("config") or {})
    body: dict[str, Any] = {"contents": copy.deepcopy(params["contents"])}
    system = config.pop("systemInstruction", None)
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"} if isinstance(system, str) else system
    for key in ("tools", "toolConfig"):
        if key in config:
            body[key] = config.pop(key)
    if config:
        body["generationConfig"] = config  # temperature, maxOutputTokens, thinkingConfig, ...
    return canonical(body)


def canonical(value: Any, key: str | None = None) -> Any:
    """``value`` with camelCase keys (not inside :data:`OPAQUE` values) and :data:`BYTES` fields decoded."""
    if key in OPAQUE:
        return value
    if isinstance(value, dict):
        out = {}
        for name, item in value.items():
            camel = _camel(name)
            out[camel] = _bytes(item) if camel in BYTES and isinstance(item, str) else canonical(item, camel)
        return out
    if isinstance(value, list):
        return [canonical(item, key) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the SDK writes temperature 0 as 0.0
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _bytes(text: str) -> bytes:
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
