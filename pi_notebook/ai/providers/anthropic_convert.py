"""The Anthropic Messages request body, built as Pi's ``streamSimpleAnthropic`` builds it (pure, no SDK).

:func:`build_anthropic_request` returns the exact params object Pi @83378aad hands to the Anthropic SDK
(what its ``onPayload`` hook sees): ``model``, ``messages``, ``max_tokens``, ``stream``, and when they apply
``system``, ``temperature``, ``tools``, ``thinking``, ``output_config``, ``metadata`` and ``tool_choice``.
The rules, in short:

* Messages go through :func:`~pi_notebook.ai.providers.transform.transform_messages` first (foreign tool-call
  ids are made ``[a-zA-Z0-9_-]{1,64}``). Blank texts are skipped, user images are dropped for a text-only
  model (tool-result images are kept, as in Pi), consecutive tool results become one ``user`` message, a
  thinking block without signature is sent as text, redacted thinking as ``redacted_thinking``.
* Prompt caching: ``cache_control`` (``{"type": "ephemeral"}``, plus ``"ttl": "1h"`` for ``long`` retention on
  api.anthropic.com) goes on every system block and on the last block of the last message when that message
  is a ``user`` one. Retention is ``options.cache_retention``, else ``long`` if the environment variable
  ``PI_CACHE_RETENTION`` is ``long``, else ``short``; ``none`` turns caching off.
* An OAuth token (a key containing ``sk-ant-oat``) switches to Claude Code mode: an identity system block
  comes first and tool names take Claude Code's casing (``read`` → ``Read``).
* ``max_tokens`` defaults to ``min(model.max_tokens, 32000)``. With ``reasoning`` set, Opus/Sonnet 4.6 get
  adaptive thinking with an effort; other reasoning models a token budget (``minimal`` 1024, ``low`` 2048,
  ``medium`` 8192, ``high``/``xhigh`` 16384, overridable by ``thinking_budgets``) added to ``max_tokens``
  (capped at the model's limit). ``temperature`` is not sent while thinking is requested.
* ``metadata`` carries only a string ``user_id``. Pi's simple entry point does not forward ``toolChoice``,
  so this builder ignores ``options.tool_choice`` (matching Pi's payloads); the transport passes it in
  through the ``tool_choice=`` keyword so a user's choice still reaches the API.

The body never contains the API key: the key only decides the OAuth mode.
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from typing import Any

from ..jstext import is_blank, sanitize_surrogates
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
from .transform import transform_messages

CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
"""First system block in OAuth (Claude Code) mode."""

CLAUDE_CODE_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
)
"""Claude Code 2.x tool names: in OAuth mode a tool matching one case-insensitively takes its casing."""

DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""Thinking budget per level for budget-based thinking (``xhigh`` uses ``high``)."""

DEFAULT_MAX_TOKENS_CAP = 32000
"""Without ``max_tokens`` in the options, a request asks for ``min(model.max_tokens, 32000)``."""

IMAGE_PLACEHOLDER = "(see attached image)"
"""Text put before the images of a tool result that has no text (the API wants text in a result)."""

_OAUTH_MARKER = "sk-ant-oat"
_MIN_OUTPUT_TOKENS = 1024  # left for the answer when the thinking budget would eat the whole limit
_CLAUDE_CODE_BY_LOWER = {name.lower(): name for name in CLAUDE_CODE_TOOLS}
_CACHEABLE_BLOCKS = ("text", "image", "tool_result")
_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class _Plan:
    """What Pi's ``streamSimpleAnthropic`` derives from the simple options before building params."""

    max_tokens: int
    thinking: bool = False
    budget: int = 0
    effort: str | None = None


def build_anthropic_request(
    model: Model | dict[str, Any],
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    *,
    repair: bool = True,
    tool_choice: str | dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Anthropic Messages request body for ``context`` sent to ``model`` (see the module docstring).

    ``model`` and ``context`` may be objects or Pi JSON; ``options`` a :class:`StreamOptions` or a dict with
    snake_case or Pi's camelCase keys. ``repair`` is passed to ``transform_messages`` (``False`` reproduces Pi
    @83378aad exactly). ``tool_choice`` (``"auto"``, ``"any"``, ``"none"`` or
    ``{"type": "tool", "name": ...}``) is Pi's lower-level ``toolChoice``. Pure: no I/O except reading
    ``PI_CACHE_RETENTION``.
    """
    target = model if isinstance(model, Model) else Model.model_validate(model)
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options)
    oauth = _OAUTH_MARKER in (opts.key() or "")
    plan = _plan(target, opts)
    cache_control = _cache_control(target.base_url, opts.cache_retention)

    params: dict[str, Any] = {
        "model": target.id,
        "messages": _convert_messages(ctx.messages, target, oauth, cache_control, repair),
        # Pi: `maxTokens || (model.maxTokens / 3) | 0`; the second only shows when the first is 0.
        "max_tokens": plan.max_tokens or int(target.max_tokens / 3),
        "stream": True,
    }
    system = [CLAUDE_CODE_IDENTITY] if oauth else []  # OAuth tokens are only accepted as Claude Code
    if ctx.system_prompt:
        system.append(sanitize_surrogates(ctx.system_prompt))
    if system:
        params["system"] = [_text_block(text, cache_control) for text in system]
    if opts.temperature is not None and not plan.thinking:
        # The API rejects temperature together with extended thinking (adaptive or budget-based).
        params["temperature"] = opts.temperature
    if ctx.tools is not None:
        params["tools"] = [_convert_tool(tool, oauth) for tool in ctx.tools]
    if plan.thinking and target.reasoning:
        if supports_adaptive_thinking(target.id):
            params["thinking"] = {"type": "adaptive"}
            if plan.effort:
                params["output_config"] = {"effort": plan.effort}
        else:
            params["thinking"] = {"type": "enabled", "budget_tokens": plan.budget or 1024}
    user_id = (opts.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        params["metadata"] = {"user_id": user_id}
    if tool_choice:
        params["tool_choice"] = {"type": tool_choice} if isinstance(tool_choice, str) else dict(tool_choice)
    return params


# --- options -------------------------------------------------------------------------------------------


def _plan(model: Model, opts: StreamOptions) -> _Plan:
    max_tokens = opts.max_tokens or min(model.max_tokens, DEFAULT_MAX_TOKENS_CAP)
    if not opts.reasoning:
        return _Plan(max_tokens)
    if supports_adaptive_thinking(model.id):
        return _Plan(max_tokens, thinking=True, effort=_effort(opts.reasoning, model.id))
    # Budget-based thinking counts against max_tokens, so the budget is added on top (up to the model's
    # limit); if that leaves no room for an answer, the budget shrinks to keep 1024 tokens of output.
    budgets = {**DEFAULT_THINKING_BUDGETS, **(opts.thinking_budgets or {})}
    budget = budgets["high" if opts.reasoning == "xhigh" else opts.reasoning]
    max_tokens = min(max_tokens + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - _MIN_OUTPUT_TOKENS)
    return _Plan(max_tokens, thinking=True, budget=budget)


def supports_adaptive_thinking(model_id: str) -> bool:
    """Opus 4.6 and Sonnet 4.6 (with or without a date suffix) think adaptively, with an effort level."""
    return any(tag in model_id for tag in ("opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"))


def _effort(level: str, model_id: str) -> str:
    if level in ("minimal", "low"):
        return "low"
    if level == "medium":
        return "medium"
    if level == "xhigh" and ("opus-4-6" in model_id or "opus-4.6" in model_id):
        return "max"  # only Opus 4.6 accepts effort "max"
    return "high"


def _cache_control(base_url: str, retention: str | None) -> dict[str, str] | None:
    if not retention:
        retention = "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"
    if retention == "none":
        return None
    if retention == "long" and "api.anthropic.com" in base_url:
        return {"type": "ephemeral", "ttl": "1h"}  # the 1-hour TTL exists only on Anthropic's own API
    return {"type": "ephemeral"}


# --- messages ------------------------------------------------------------------------------------------


def normalize_tool_call_id(call_id: str) -> str:
    """Make a foreign tool-call id valid for Anthropic: ``[a-zA-Z0-9_-]``, at most 64 characters.

    Pi replaces per UTF-16 code unit, so a character outside the BMP becomes two underscores."""
    cleaned = _ID_CHAR.sub(lambda m: "_" * (2 if ord(m.group()) > 0xFFFF else 1), call_id)
    return cleaned[:64]


def _convert_messages(
    messages: list[Any],
    model: Model,
    oauth: bool,
    cache_control: dict[str, str] | None,
    repair: bool,
) -> list[dict[str, Any]]:
    prepared = transform_messages(messages, model, normalize_tool_call_id, repair=repair)
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []  # the run of consecutive tool results being collected
    for message in prepared:
        if isinstance(message, ToolResultMessage):
            results.append(_tool_result_block(message))
            continue
        if results:
            out.append({"role": "user", "content": results})
            results = []
        if isinstance(message, UserMessage):
            content = _user_content(message, model)
        else:
            content = _assistant_content(message, oauth)
        if content:
            out.append({"role": message.role, "content": content})
    if results:
        # All tool results of a turn go in one user message (some Anthropic-compatible endpoints need it).
        out.append({"role": "user", "content": results})
    if cache_control and out and out[-1]["role"] == "user":
        _mark_cached(out[-1], cache_control)
    return out


def _user_content(message: UserMessage, model: Model) -> str | list[dict[str, Any]] | None:
    if isinstance(message.content, str):
        # Pi checks blankness before removing surrogates here, and after it for blocks.
        return None if is_blank(message.content) else sanitize_surrogates(message.content)
    blocks = []
    for item in message.content:
        if isinstance(item, TextContent):
            text = sanitize_surrogates(item.text)
            if not is_blank(text):
                blocks.append({"type": "text", "text": text})
        elif "image" in model.input:  # a text-only model would reject the request
            blocks.append(_image_block(item))
    return blocks or None


def _assistant_content(message: AssistantMessage, oauth: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if not is_blank(block.text):
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            blocks.extend(_thinking_blocks(block))
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": _claude_code_name(block.name) if oauth else block.name,
                    "input": copy.deepcopy(block.arguments),
                }
            )
    return blocks


def _thinking_blocks(block: ThinkingContent) -> list[dict[str, Any]]:
    if block.redacted:
        # The encrypted payload goes back as is; the model needs it to continue its reasoning.
        redacted: dict[str, Any] = {"type": "redacted_thinking"}
        if block.thinking_signature is not None:
            redacted["data"] = block.thinking_signature
        return [redacted]
    if is_blank(block.thinking):
        return []
    text = sanitize_surrogates(block.thinking)
    if is_blank(block.thinking_signature):
        # Unsigned thinking (an interrupted stream) would be rejected as thinking; send it as plain text,
        # without <thinking> tags that the model would learn to imitate.
        return [{"type": "text", "text": text}]
    return [{"type": "thinking", "thinking": text, "signature": block.thinking_signature}]


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": _tool_result_content(message.content),
        "is_error": message.is_error,
    }


def _tool_result_content(content: list[Any]) -> str | list[dict[str, Any]]:
    if not any(isinstance(item, ImageContent) for item in content):
        return sanitize_surrogates("\n".join(item.text for item in content))
    blocks = [
        {"type": "text", "text": sanitize_surrogates(item.text)}
        if isinstance(item, TextContent)
        else _image_block(item)
        for item in content
    ]
    if not any(isinstance(item, TextContent) for item in content):
        blocks.insert(0, {"type": "text", "text": IMAGE_PLACEHOLDER})
    return blocks


def _image_block(image: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _text_block(text: str, cache_control: dict[str, str] | None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache_control:
        block["cache_control"] = dict(cache_control)
    return block


def _mark_cached(message: dict[str, Any], cache_control: dict[str, str]) -> None:
    """Put the cache breakpoint on the last block, so the whole conversation so far is cached."""
    content = message["content"]
    if isinstance(content, str):
        message["content"] = [_text_block(content, cache_control)]
    elif content and content[-1]["type"] in _CACHEABLE_BLOCKS:
        content[-1]["cache_control"] = dict(cache_control)


# --- tools ---------------------------------------------------------------------------------------------


def _convert_tool(tool: Tool, oauth: bool) -> dict[str, Any]:
    schema = tool.parameters
    return {
        "name": _claude_code_name(tool.name) if oauth else tool.name,
        "description": tool.description,
        # Only the object's properties and required list are sent; $schema, additionalProperties etc. are not.
        "input_schema": {
            "type": "object",
            "properties": copy.deepcopy(schema.get("properties") or {}),
            "required": copy.deepcopy(schema.get("required") or []),
        },
    }


def _claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_BY_LOWER.get(name.lower(), name)
