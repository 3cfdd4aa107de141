"""The request body of an OpenAI Chat Completions call, exactly as Pi builds it (``openai-completions``).

:func:`build_openai_completions_request` is a pure function: the dict it returns is what Pi's
``streamSimpleOpenAICompletions`` hands to the OpenAI SDK (the object its ``onPayload`` hook sees), for
api.openai.com and every OpenAI-compatible server (per-server quirks: :mod:`.openai_compat`). It performs no
I/O, imports no SDK and never puts the API key in the body.

Where Pi is wrong we are more correct (each deviation has a test):

1. ``requiresThinkingAsText`` with thinking *and* text in one assistant message: Pi 0.58.3 throws
   ``textContent.unshift is not a function``. We send ``[thinking part, answer part]``, the shape Pi already
   sends for thinking without text.
2. A tool result without text is sent as ``(see attached image)`` by Pi even when no image goes with it. We
   say so only when the image is really attached; otherwise ``(no output)``, or
   ``(tool image omitted: model does not support images)`` when the model cannot see the image.
3. Pi glues the text blocks of an assistant message with ``""``, so another model's thinking (turned into text
   by the pre-pass) runs into the answer: ``"Claude reasoning.Claude answer."``. We join blocks with a blank
   line. Such thinking stays in the message: it is context the new model would otherwise lose.

Besides, ``repair=True`` (the default) runs :func:`.transform.transform_messages` with its repairs, so an
orphaned tool result or a trailing unanswered tool call cannot make the API reject the request.
"""

from __future__ import annotations

import copy
import math
import re
from itertools import groupby
from typing import Any

from ..jstext import is_blank, js_json_parse, js_json_stringify, js_length, js_slice, sanitize_surrogates
from ..options import StreamOptions
from ..types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .openai_compat import OpenAICompat, compat_value, resolve_openai_compat
from .transform import transform_messages

__all__ = [
    "ASSISTANT_BRIDGE_TEXT",
    "IMAGE_OMITTED_TEXT",
    "NO_OUTPUT_TEXT",
    "SEE_ATTACHED_IMAGE_TEXT",
    "TEXT_BLOCK_SEPARATOR",
    "TOOL_IMAGES_TEXT",
    "build_openai_completions_request",
    "normalize_openai_tool_call_id",
]

SEE_ATTACHED_IMAGE_TEXT = "(see attached image)"
"""Tool-result text when the result has images only and they are attached in the next user message."""
NO_OUTPUT_TEXT = "(no output)"
"""Tool-result text when the result is empty (deviation 2; Pi says ``(see attached image)``)."""
IMAGE_OMITTED_TEXT = "(tool image omitted: model does not support images)"
"""Tool-result text when its only content is images the model cannot take (deviation 2; newer Pi's words)."""
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
"""First part of the user message that carries the images of a run of tool results."""
ASSISTANT_BRIDGE_TEXT = "I have processed the tool results."
"""Synthetic assistant turn for servers that forbid a user turn right after tool results."""
TEXT_BLOCK_SEPARATOR = "\n\n"
"""Joins the text blocks of one assistant message (deviation 3; Pi joins with ``""``)."""

_DEFAULT_MAX_TOKENS_CAP = 32_000  # pi-ai buildBaseOptions: min(model.maxTokens, 32000) unless asked
_OPENAI_ID_LIMIT = 40  # OpenAI rejects longer tool call ids
_XHIGH_MODELS = ("gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6")  # pi-ai supportsXhigh


def build_openai_completions_request(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    *,
    repair: bool = True,
) -> dict[str, Any]:
    """The Chat Completions params Pi would send for ``context`` to ``model`` (reference §9.3).

    ``context`` is a :class:`Context` or its Pi JSON; ``options`` a :class:`StreamOptions` or a dict with
    camelCase or snake_case keys (``reasoning``, ``maxTokens``, ``temperature``, ``toolChoice``; the API key
    is ignored). ``repair=False`` replays the history exactly as Pi does, orphaned tool results included.
    The result is a fresh JSON-ready dict that shares nothing with the inputs.
    """
    model = model if isinstance(model, Model) else Model.model_validate(model)
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options)
    compat = resolve_openai_compat(model)

    messages = _convert_messages(model, ctx, compat, repair)
    if model.provider == "openrouter" and model.id.startswith("anthropic/"):
        _add_anthropic_cache_breakpoint(messages)

    params: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    if compat.supports_usage_in_streaming is not False:
        params["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        params["store"] = False
    max_tokens = opts.max_tokens or min(model.max_tokens, _DEFAULT_MAX_TOKENS_CAP)
    if max_tokens:
        field = "max_tokens" if compat.max_tokens_field == "max_tokens" else "max_completion_tokens"
        params[field] = max_tokens
    if opts.temperature is not None:
        params["temperature"] = opts.temperature
    if ctx.tools is not None:
        params["tools"] = [_convert_tool(tool, compat) for tool in ctx.tools]
    elif _has_tool_history(ctx.messages):
        # Proxies in front of Anthropic (LiteLLM …) reject tool_calls in the history without a tools list.
        params["tools"] = []
    if _js_truthy(opts.tool_choice):
        params["tool_choice"] = copy.deepcopy(opts.tool_choice)
    _add_thinking_params(params, model, compat, _reasoning_effort(model, opts.reasoning))
    _add_routing(params, model)
    return params


def normalize_openai_tool_call_id(tool_call_id: str, model: Model) -> str:
    """The id a tool call made by *another* model gets in this API (Pi's normalizer, run by the pre-pass).

    OpenAI Responses ids ``{call_id}|{item_id}`` (the item id can be 400+ chars of base64) keep their call id,
    sanitized to ``[a-zA-Z0-9_-]`` and cut to 40; on provider ``openai`` any id is cut to 40 (its limit).
    Lengths count UTF-16 code units, as in JavaScript.
    """
    if "|" in tool_call_id:
        call_id = tool_call_id.split("|", 1)[0]
        # JS regexes without /u see an astral character as two code units, hence two underscores.
        cleaned = "".join(c if re.fullmatch(r"[a-zA-Z0-9_-]", c) else "_" * js_length(c) for c in call_id)
        return cleaned[:_OPENAI_ID_LIMIT]
    if model.provider == "openai" and js_length(tool_call_id) > _OPENAI_ID_LIMIT:
        return js_slice(tool_call_id, _OPENAI_ID_LIMIT)
    return tool_call_id


# --- messages ------------------------------------------------------------------------------------------


def _convert_messages(model: Model, ctx: Context, compat: OpenAICompat, repair: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if ctx.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": sanitize_surrogates(ctx.system_prompt)})

    sees_images = "image" in model.input
    bridge = compat.requires_assistant_after_tool_result
    history = transform_messages(ctx.messages, model, normalize_openai_tool_call_id, repair=repair)
    # Pi only updates the last role for messages it sends, so a skipped empty user message after tool
    # results still gets the bridge, and so does the next user message.
    last_role: str | None = None
    for role, run in groupby(history, key=lambda message: message.role):
        if role == "toolResult":
            results = [message for message in run if isinstance(message, ToolResultMessage)]
            out.extend(_convert_tool_result(result, compat, sees_images) for result in results)
            images = [_image_part(b) for r in results for b in r.content if isinstance(b, ImageContent)]
            if images and sees_images:
                # Tool messages hold text only: the images follow as one user message.
                if bridge:
                    out.append({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT})
                out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        for message in run:
            if bridge and last_role == "toolResult" and role == "user":
                out.append({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT})
            converted = _convert_one(message, compat, sees_images)
            if converted is not None:
                out.append(converted)
                last_role = role
    return out


def _convert_one(message: Message, compat: OpenAICompat, sees_images: bool) -> dict[str, Any] | None:
    if isinstance(message, UserMessage):
        return _convert_user(message, sees_images)
    if isinstance(message, AssistantMessage):
        return _convert_assistant(message, compat)
    raise TypeError(f"unexpected message role {message.role!r}")


def _convert_user(message: UserMessage, sees_images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        # Pi sends a string as is, even when blank.
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif sees_images:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _convert_assistant(message: AssistantMessage, compat: OpenAICompat) -> dict[str, Any] | None:
    texts = [
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent) and not is_blank(b.text)
    ]
    thoughts = [b for b in message.content if isinstance(b, ThinkingContent) and not is_blank(b.thinking)]
    calls = [b for b in message.content if isinstance(b, ToolCall)]

    # Some servers (Mistral) reject `content: null`; they are the ones that also need the bridge turn.
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat.requires_assistant_after_tool_result else None,
    }
    if texts:
        out["content"] = TEXT_BLOCK_SEPARATOR.join(texts)  # deviation 3
    if thoughts:
        if compat.requires_thinking_as_text:
            # Plain text, no tags: models imitate tags. Deviation 1: Pi throws when there is text too.
            thinking_part = {"type": "text", "text": "\n\n".join(b.thinking for b in thoughts)}
            answer_parts = [{"type": "text", "text": out["content"]}] if texts else []
            out["content"] = [thinking_part, *answer_parts]
        elif thoughts[0].thinking_signature:
            # openai-completions records the delta field that carried the reasoning (reasoning_content,
            # reasoning, …); servers such as llama.cpp want it back under that name.
            out[thoughts[0].thinking_signature] = "\n".join(b.thinking for b in thoughts)
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": js_json_stringify(call.arguments)},
            }
            for call in calls
        ]
        # OpenRouter's encrypted reasoning, recorded per tool call, goes back as reasoning_details.
        details = [js_json_parse(call.thought_signature) for call in calls if call.thought_signature]
        details = [detail for detail in details if _js_truthy(detail)]
        if details:
            out["reasoning_details"] = details
    # An aborted turn can leave nothing to say; servers reject an assistant message without content or calls.
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


def _convert_tool_result(result: ToolResultMessage, compat: OpenAICompat, sees_images: bool) -> dict[str, Any]:
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    has_images = any(isinstance(block, ImageContent) for block in result.content)
    if not text:
        # Deviation 2: only promise an image that really follows.
        if has_images:
            text = SEE_ATTACHED_IMAGE_TEXT if sees_images else IMAGE_OMITTED_TEXT
        else:
            text = NO_OUTPUT_TEXT
    out = {"role": "tool", "content": sanitize_surrogates(text), "tool_call_id": result.tool_call_id}
    if compat.requires_tool_result_name and result.tool_name:
        out["name"] = result.tool_name
    return out


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _add_anthropic_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """OpenRouter passes Anthropic's prompt caching through: mark the last text of the last user or
    assistant message that has text (a string content becomes a one-part list to carry the mark)."""
    for message in reversed(messages):
        if message["role"] not in ("user", "assistant"):
            continue
        content = message["content"]
        if isinstance(content, str):
            message["content"] = [{"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}]
            return
        if isinstance(content, list):
            for part in reversed(content):
                if part.get("type") == "text":
                    part["cache_control"] = {"type": "ephemeral"}
                    return


def _has_tool_history(messages: list[Message]) -> bool:
    return any(
        isinstance(m, ToolResultMessage)
        or (isinstance(m, AssistantMessage) and any(isinstance(b, ToolCall) for b in m.content))
        for m in messages
    )


# --- tools, thinking, routing --------------------------------------------------------------------------


def _convert_tool(tool: Tool, compat: OpenAICompat) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": copy.deepcopy(tool.parameters),
    }
    if compat.supports_strict_mode is not False:
        function["strict"] = False  # some servers reject the unknown field
    return {"type": "function", "function": function}


def _reasoning_effort(model: Model, reasoning: str | None) -> str | None:
    """pi-ai's simple entry point clamps ``xhigh`` to ``high`` except for the models that know it."""
    if reasoning == "xhigh" and not any(marker in model.id for marker in _XHIGH_MODELS):
        return "high"
    return reasoning


def _add_thinking_params(params: dict[str, Any], model: Model, compat: OpenAICompat, effort: str | None) -> None:
    fmt = compat.thinking_format
    if model.reasoning and fmt in ("zai", "qwen"):
        # These servers think by default: say explicitly when thinking is off.
        params["enable_thinking"] = effort is not None
    elif model.reasoning and fmt == "qwen-chat-template":
        params["chat_template_kwargs"] = {"enable_thinking": effort is not None}
    elif model.reasoning and fmt == "openrouter":
        # Not in Pi 0.58.3 (which would send reasoning_effort); newer Pi's nested form.
        params["reasoning"] = {"effort": _map_effort(effort, compat) if effort else "none"}
    elif effort and model.reasoning and compat.supports_reasoning_effort:
        params["reasoning_effort"] = _map_effort(effort, compat)


def _map_effort(effort: str, compat: OpenAICompat) -> Any:
    mapped = (compat.reasoning_effort_map or {}).get(effort)
    return effort if mapped is None else mapped


def _add_routing(params: dict[str, Any], model: Model) -> None:
    """Provider routing of two gateways, read from ``model.compat`` (only when the base URL is theirs)."""
    base_url = model.base_url or ""
    routing = compat_value(model, "open_router_routing")
    if "openrouter.ai" in base_url and _js_truthy(routing):
        params["provider"] = copy.deepcopy(routing)
    routing = compat_value(model, "vercel_gateway_routing")
    if "ai-gateway.vercel.sh" in base_url and isinstance(routing, dict):
        gateway = {key: copy.deepcopy(routing[key]) for key in ("only", "order") if _js_truthy(routing.get(key))}
        if gateway:
            params["providerOptions"] = {"gateway": gateway}


# --- JavaScript semantics ------------------------------------------------------------------------------


def _js_truthy(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True  # objects and arrays, even empty ones
