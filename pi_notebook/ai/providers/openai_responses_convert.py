"""The request body of an OpenAI Responses call, exactly as Pi builds it (``openai-responses``).

:func:`build_openai_responses_request` is a pure function: the dict it returns is what Pi's
``streamSimpleOpenAIResponses`` hands to ``client.responses.create()`` (the object its ``onPayload`` hook sees),
for api.openai.com and the providers Pi sends through the same code (``opencode``, ``github-copilot``). It
performs no I/O, imports no SDK and never puts the API key in the body. The rules, in short (reference §9.4):

* Top level: ``model``, ``input``, ``stream: true``, ``store: false``; ``prompt_cache_key`` is the session id
  unless the cache retention is ``none``; ``prompt_cache_retention: "24h"`` for ``long`` retention on
  api.openai.com only (retention: the option, else ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``);
  ``max_output_tokens`` is the option or ``min(model.max_tokens, 32000)``; ``temperature`` whenever given;
  ``tools`` as ``{type: "function", name, description, parameters, strict: false}``.
* Reasoning models: the system prompt has role ``developer`` (else ``system``). With a reasoning level,
  ``reasoning: {effort, summary: "auto"}`` and ``include: ["reasoning.encrypted_content"]`` (``xhigh`` is
  clamped to ``high`` except for gpt-5.2/5.3/5.4). Without one, GPT-5 models get the developer item
  ``# Juice: 0 !important`` at the end of ``input`` (the only way upstream found to keep them from reasoning).
* Messages go through :func:`~.transform.transform_messages` (tool-call ids of other models are normalized for
  ``openai``/``openai-codex``/``opencode``). A user message becomes ``input_text``/``input_image`` parts (images
  dropped for a text-only model, a message left empty is skipped). An assistant message becomes one item per
  block: its thinking's signature *is* the encrypted reasoning item (sent back as is; unsigned thinking is
  dropped), text a ``message`` item whose id comes from the text signature (``msg_<index>`` when unsigned,
  ``msg_<hash>`` when longer than 64), a tool call ``call_id|item_id`` a ``function_call`` item. A tool result
  is a ``function_call_output``: its text, or text and image parts when the model can see the images.

Where Pi is wrong we are more correct (each deviation has a test in
``tests/ai/test_openai_responses_payload.py``):

1. **Juice for GPT-5.** Pi checks ``model.name.startsWith("gpt-5")``, but every real name is ``"GPT-5…"``, so
   the item is never sent. We compare case-insensitively, as Pi's Azure provider and newer Pi do.
2. **Unique item ids.** Pi gives every unsigned text block of a message the same ``msg_<index>`` (several text
   blocks, or another model's thinking turned into text before the answer), and that fallback can equal a
   stored id (``msg_4``); the API rejects the request (``400 Duplicate item found with id msg_1``). Ids stay
   Pi's where they are unique; a repeated one gets the first free ``<id>_<n>`` suffix.
3. **Tool-result placeholder.** Pi sends ``(see attached image)`` for any result without text, even an
   empty one and one whose image the model cannot see. We say ``(no output)`` for an empty result and
   ``(tool image omitted: model does not support images)`` for an unseen image (the completions wording).
4. **A thinking signature that is not a reasoning item.** One that is not JSON makes Pi throw (``JSON.parse``),
   so the conversation can never be continued; one that is JSON but not an object Pi sends as an input item,
   which the API rejects. We drop that block, as Pi drops thinking without a signature.

And ``repair=True`` (the default) runs the pre-pass with its repairs: a ``function_call_output`` whose call
was in a dropped (errored or aborted) turn is not sent (the API rejects it: ``No tool call found for function
call output``), and a trailing unanswered call gets ``No result provided``. ``repair=False`` replays as Pi.
"""

from __future__ import annotations

import copy
import os
import re
from typing import Any

from ..jstext import js_code_units, js_json_parse, js_json_stringify, js_length, sanitize_surrogates
from ..options import StreamOptions
from ..types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .openai_completions_convert import IMAGE_OMITTED_TEXT, NO_OUTPUT_TEXT
from .transform import transform_messages

__all__ = [
    "IMAGE_OMITTED_TEXT",
    "JUICE_TEXT",
    "NO_OUTPUT_TEXT",
    "SEE_ATTACHED_IMAGE_TEXT",
    "TOOL_CALL_ID_PROVIDERS",
    "build_openai_responses_request",
    "encode_text_signature",
    "normalize_responses_tool_call_id",
    "parse_text_signature",
    "short_hash",
    "supports_xhigh",
]

JUICE_TEXT = "# Juice: 0 !important"
"""The developer item that keeps a GPT-5 model from reasoning when no reasoning level is asked for."""
SEE_ATTACHED_IMAGE_TEXT = "(see attached image)"
"""Pi's tool-result text when a result has no text (we use it nowhere: deviation 3)."""
TOOL_CALL_ID_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
"""Providers for which tool-call ids made by other models are normalized (Pi's ``OPENAI_TOOL_CALL_PROVIDERS``)."""

_DEFAULT_MAX_TOKENS_CAP = 32_000  # pi-ai buildBaseOptions: min(model.maxTokens, 32000) unless asked
_ID_LIMIT = 64  # OpenAI rejects longer item and call ids
_XHIGH_MODELS = ("gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6")  # pi-ai supportsXhigh
_TEXT_PHASES = ("commentary", "final_answer")
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")


def build_openai_responses_request(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    *,
    repair: bool = True,
) -> dict[str, Any]:
    """The Responses params Pi would send for ``context`` to ``model`` (see the module docstring).

    ``context`` is a :class:`Context` or its Pi JSON; ``options`` a :class:`StreamOptions` or a dict with
    camelCase or snake_case keys (``reasoning``, ``maxTokens``, ``temperature``, ``sessionId``,
    ``cacheRetention``; the API key is ignored). Two options of Pi's non-simple entry point are honoured too:
    ``reasoning_summary`` (``auto``/``concise``/``detailed``) and ``service_tier``. ``repair=False`` replays the
    history exactly as Pi does. The result is a fresh JSON-ready dict that shares nothing with the inputs.
    """
    model = model if isinstance(model, Model) else Model.model_validate(model)
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options)
    extra = opts.model_extra or {}

    items = _convert_messages(model, ctx, repair)
    retention = _cache_retention(opts.cache_retention)
    params: dict[str, Any] = {"model": model.id, "input": items, "stream": True}
    if retention != "none" and opts.session_id is not None:
        params["prompt_cache_key"] = opts.session_id
    if retention == "long" and "api.openai.com" in (model.base_url or ""):
        params["prompt_cache_retention"] = "24h"
    params["store"] = False
    max_tokens = opts.max_tokens or min(model.max_tokens, _DEFAULT_MAX_TOKENS_CAP)
    if max_tokens:
        params["max_output_tokens"] = max_tokens
    if opts.temperature is not None:
        params["temperature"] = opts.temperature
    if extra.get("service_tier") is not None:
        params["service_tier"] = extra["service_tier"]
    if ctx.tools is not None:
        params["tools"] = [_convert_tool(tool) for tool in ctx.tools]
    if model.reasoning:
        effort = opts.reasoning if supports_xhigh(model) or opts.reasoning != "xhigh" else "high"
        summary = extra.get("reasoning_summary")
        if effort or summary:
            params["reasoning"] = {"effort": effort or "medium", "summary": summary or "auto"}
            params["include"] = ["reasoning.encrypted_content"]
        elif model.name.lower().startswith("gpt-5"):  # deviation 1: Pi's check is case-sensitive
            items.append({"role": "developer", "content": [{"type": "input_text", "text": JUICE_TEXT}]})
    return params


def supports_xhigh(model: Model) -> bool:
    """Whether the model takes reasoning effort ``xhigh`` (pi-ai ``supportsXhigh``)."""
    return any(marker in model.id for marker in _XHIGH_MODELS)


def normalize_responses_tool_call_id(tool_call_id: str, model: Model) -> str:
    """The id a tool call made by *another* model gets in this API (Pi's normalizer, run by the pre-pass).

    Only for the providers in :data:`TOOL_CALL_ID_PROVIDERS`, and only for ``call_id|item_id`` ids: each part
    gets ``[^a-zA-Z0-9_-]`` replaced by ``_`` (per UTF-16 code unit, as JavaScript does), the item id an
    ``fc_`` prefix unless it starts with ``fc``; both are cut to 64 and lose trailing underscores. Other ids
    (Anthropic's ``toolu_…``, completions' ``call_…``) are kept.
    """
    if model.provider not in TOOL_CALL_ID_PROVIDERS or "|" not in tool_call_id:
        return tool_call_id
    parts = tool_call_id.split("|")
    call_id = _sanitize_id(parts[0])
    item_id = _sanitize_id(parts[1])
    if not item_id.startswith("fc"):
        item_id = "fc_" + item_id
    return f"{call_id[:_ID_LIMIT].rstrip('_')}|{item_id[:_ID_LIMIT].rstrip('_')}"


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    """The text signature of a streamed ``message`` item: ``{"v":1,"id":...,"phase"?:...}``."""
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return js_json_stringify(payload)


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(item id, phase)`` from a text signature: the V1 JSON form (a phase other than ``commentary`` or
    ``final_answer`` is dropped) or, as Pi reads older sessions, any other string as the id itself."""
    if not signature:
        return None
    if signature.startswith("{"):
        parsed = js_json_parse(signature)
        if isinstance(parsed, dict) and _is_js_one(parsed.get("v")) and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in _TEXT_PHASES else None
    return signature, None


def short_hash(text: str) -> str:
    """Pi's ``shortHash``: two 32-bit multiplicative lanes over the UTF-16 code units, in base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    for unit in js_code_units(text):
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2) + _base36(h1)


# --- messages ------------------------------------------------------------------------------------------


def _convert_messages(model: Model, ctx: Context, repair: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if ctx.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": sanitize_surrogates(ctx.system_prompt)})

    sees_images = "image" in model.input
    history = transform_messages(ctx.messages, model, normalize_responses_tool_call_id, repair=repair)
    unsigned: list[dict[str, Any]] = []  # message items whose id is Pi's fallback msg_<index>
    index = 0  # Pi's msgIndex: counts the messages sent, tool results included
    for message in history:
        if isinstance(message, UserMessage):
            converted = _convert_user(message, sees_images)
            if converted is None:
                continue
            items.append(converted)
        elif isinstance(message, AssistantMessage):
            converted_items = _convert_assistant(message, model, index, unsigned)
            if not converted_items:
                continue
            items.extend(converted_items)
        elif isinstance(message, ToolResultMessage):
            items.append(_convert_tool_result(message, sees_images))
        index += 1
    _make_message_ids_unique(items, unsigned)  # deviation 2
    return items


def _convert_user(message: UserMessage, sees_images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        # A string is sent as is, even when blank.
        return {"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(message.content)}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
        elif sees_images:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _convert_assistant(
    message: AssistantMessage, model: Model, index: int, unsigned: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    # Another model of the same provider and API: its fc_ item ids were paired with reasoning items this
    # model never saw, so they are left out (another provider's ids were normalized by the pre-pass).
    other_model = message.model != model.id and message.provider == model.provider and message.api == model.api
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            # Only this model's thinking is left here (the pre-pass turned other thinking into text); its
            # signature is the encrypted reasoning item. Deviation 4: one that is not an object is dropped.
            if block.thinking_signature:
                item = js_json_parse(block.thinking_signature)
                if isinstance(item, dict):
                    out.append(item)
        elif isinstance(block, TextContent):
            out.append(_text_item(block, index, unsigned))
        elif isinstance(block, ToolCall):
            parts = block.id.split("|")
            item_id = parts[1] if len(parts) > 1 else None
            if other_model and item_id is not None and item_id.startswith("fc_"):
                item_id = None
            call: dict[str, Any] = {"type": "function_call"}
            if item_id is not None:
                call["id"] = item_id
            call.update(call_id=parts[0], name=block.name, arguments=js_json_stringify(block.arguments))
            out.append(call)
    return out


def _text_item(block: TextContent, index: int, unsigned: list[dict[str, Any]]) -> dict[str, Any]:
    signature = parse_text_signature(block.text_signature)
    item_id, phase = signature if signature is not None else (None, None)
    item: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": sanitize_surrogates(block.text), "annotations": []}],
        "status": "completed",
    }
    if not item_id:
        item["id"] = f"msg_{index}"
        unsigned.append(item)
    elif js_length(item_id) > _ID_LIMIT:
        item["id"] = f"msg_{short_hash(item_id)}"
    else:
        item["id"] = item_id
    if phase is not None:
        item["phase"] = phase
    return item


def _make_message_ids_unique(items: list[dict[str, Any]], unsigned: list[dict[str, Any]]) -> None:
    """Deviation 2: every input item id is unique. Ids that came with the history (signatures, reasoning and
    function-call items) are reserved first, in order; then each fallback ``msg_<index>`` takes its own id
    or, when that is taken, the first free ``msg_<index>_<n>``."""
    fallbacks = {id(item) for item in unsigned}
    used: set[str] = set()
    for item in items:
        item_id = item.get("id")
        if not isinstance(item_id, str) or id(item) in fallbacks:
            continue
        if item_id in used and item.get("type") == "message":
            item["id"] = _free_id(item_id, used)
        used.add(item["id"])
    for item in unsigned:
        item["id"] = _free_id(item["id"], used)
        used.add(item["id"])


def _free_id(wanted: str, used: set[str]) -> str:
    candidate, n = wanted, 0
    while candidate in used:
        n += 1
        candidate = f"{wanted}_{n}"
        if js_length(candidate) > _ID_LIMIT:
            candidate = f"msg_{short_hash(candidate)}"
    return candidate


def _convert_tool_result(result: ToolResultMessage, sees_images: bool) -> dict[str, Any]:
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    images = [block for block in result.content if isinstance(block, ImageContent)]
    output: str | list[dict[str, Any]]
    if images and sees_images:
        output = [{"type": "input_text", "text": sanitize_surrogates(text)}] if text else []
        output += [_image_part(image) for image in images]
    elif text:
        output = sanitize_surrogates(text)
    else:
        output = IMAGE_OMITTED_TEXT if images else NO_OUTPUT_TEXT  # deviation 3
    return {"type": "function_call_output", "call_id": result.tool_call_id.split("|")[0], "output": output}


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def _convert_tool(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": copy.deepcopy(tool.parameters),
        "strict": False,
    }


def _cache_retention(retention: str | None) -> str:
    if retention:
        return retention
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


# --- JavaScript semantics ------------------------------------------------------------------------------


def _is_js_one(value: Any) -> bool:
    """``value === 1`` in JavaScript (``true`` is not 1 there)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 1


def _sanitize_id(part: str) -> str:
    # A JS regex without /u sees an astral character as two code units: two underscores.
    return _NOT_ID_CHAR.sub(lambda m: "_" * js_length(m.group()), part)


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out
