"""The request of a ``google-generative-ai`` call (the Gemini API), built as Pi's ``streamSimpleGoogle`` builds it.

:func:`build_google_request` is pure (no SDK, no I/O) and returns what Pi @83378aad hands to the ``@google/genai``
SDK, the object its ``onPayload`` hook sees: ``{"model", "contents", "config"}`` in the SDK's camelCase *input*
shape (``parts``, ``inlineData``, ``functionCall``, ``functionResponse``, ``thoughtSignature``,
``systemInstruction``, ``maxOutputTokens``, ``thinkingConfig``, ``functionDeclarations``,
``parametersJsonSchema``). The Python ``google-genai`` SDK takes the same dict (its models accept these camelCase
aliases); it then moves ``config`` into the REST body's ``generationConfig``/``systemInstruction``/``tools``.

Pi's rules, in short:

* Messages go through :func:`~.transform.transform_messages` first. Same-model (provider and id) thinking is sent
  as ``{"thought": true, "text"}``; a thought signature (``thinkingSignature``, ``textSignature``, a tool call's
  ``thoughtSignature``) is kept only for the same model and only when it is base64; blank text and thinking are
  skipped, and so is an assistant message left empty. On Gemini 3 a function call without a usable signature gets
  ``skip_thought_signature_validator``.
* Function calls carry ``{name, args}``; results become ``functionResponse`` parts ``{name, response: {output}}``
  (``{error}`` when ``isError``), texts joined with ``"\\n"``, and consecutive results share one ``user`` turn.
  Tool-result images are nested in ``functionResponse.parts`` on Gemini 3 and follow as a ``user`` turn
  (``Tool result image:`` + images) on older models. A text-only model gets no images at all.
* ``maxOutputTokens`` is ``options.max_tokens`` or ``min(model.max_tokens, 32000)``; ``temperature`` when set.
  With ``reasoning`` on a reasoning model: ``thinkingConfig = {includeThoughts: true, ...}`` with a
  ``thinkingLevel`` on Gemini 3 (pro: ``LOW``/``HIGH``; flash: ``MINIMAL``…``HIGH``) and a ``thinkingBudget``
  elsewhere (2.5 pro 128/2048/8192/32768, 2.5 flash 128/2048/8192/24576, others ``-1``, dynamic), which
  ``thinking_budgets`` overrides; ``xhigh`` counts as ``high``.

Where Pi is wrong we are more correct; each deviation is pinned by a test (tests/ai/test_google_payload.py):

1. **Thinking off turns thinking off.** Without ``reasoning`` Pi sends no ``thinkingConfig``, so Gemini 2.5 and 3
   still think (hidden, billed) with their default budget. We send the lowest setting each family accepts, without
   ``includeThoughts``: ``thinkingBudget: 0`` on 2.5 flash / flash-lite, ``128`` on 2.5 pro (it cannot stop
   thinking), ``thinkingLevel: LOW`` on Gemini 3 pro and ``MINIMAL`` on Gemini 3 flash. Other ids keep Pi's
   (no ``thinkingConfig``), since we do not know what they accept.
2. **The thinking budget fits in the output limit.** Gemini counts thinking tokens against ``maxOutputTokens``;
   Pi sends e.g. ``thinkingBudget: 32768`` with ``maxOutputTokens: 32000`` (gemini-2.5-pro, ``high``), so the
   thinking can use up the whole limit and leave no answer. As Pi's own Anthropic and Gemini CLI providers do,
   a fixed budget is added to the limit (capped at the model's ``max_tokens``), and a budget that would still
   fill it shrinks to leave 1024 tokens for the answer.
3. **2.5 flash-lite's smallest budget is 512** (the API rejects less); Pi asks 128 for ``minimal``.
4. **Parallel results with images stay in one turn.** On pre-Gemini-3 models Pi puts each result's image turn
   right after that result, which splits the function responses of one model turn across several ``user``
   turns (the API wants them together). We send all the responses of a run first, then the image turns.
5. **An image the model cannot see is named.** On a text-only model an image-only tool result is sent by Pi as
   ``""``; we say ``(tool image omitted: model does not support images)`` (newer Pi's words).

``repair=True`` (the default) also runs the pre-pass with its repairs: a function response whose call was made
by a dropped (errored/aborted) assistant message is not sent (Pi sends it, orphaned), and calls left unanswered
at the end get a ``No result provided`` error response. The API key is never part of the request.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ..jstext import is_blank, sanitize_surrogates
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
from .anthropic_convert import normalize_tool_call_id
from .transform import transform_messages

__all__ = [
    "DEFAULT_MAX_TOKENS_CAP",
    "IMAGE_OMITTED_TEXT",
    "MIN_ANSWER_TOKENS",
    "SEE_ATTACHED_IMAGE_TEXT",
    "SKIP_THOUGHT_SIGNATURE",
    "TOOL_RESULT_IMAGE_TEXT",
    "build_google_request",
    "disabled_thinking_config",
    "is_gemini3_flash",
    "is_gemini3_pro",
    "is_valid_thought_signature",
    "requires_tool_call_id",
    "thinking_budget",
]

DEFAULT_MAX_TOKENS_CAP = 32_000
"""Without ``max_tokens`` in the options, a request asks for ``min(model.max_tokens, 32000)``."""
MIN_ANSWER_TOKENS = 1024
"""Output left for the answer when a thinking budget would fill the whole output limit (deviation 2)."""
SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""The signature Gemini 3 accepts for a function call it did not sign (another model's, or an unsigned one)."""
SEE_ATTACHED_IMAGE_TEXT = "(see attached image)"
"""Function-response text of a result that has images and no text (the images go along)."""
IMAGE_OMITTED_TEXT = "(tool image omitted: model does not support images)"
"""Function-response text of an image-only result on a text-only model (deviation 5; Pi sends ``""``)."""
TOOL_RESULT_IMAGE_TEXT = "Tool result image:"
"""First part of the ``user`` turn carrying a tool result's images on models before Gemini 3."""

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_GEMINI3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
_LEVELS_PRO = {"minimal": "LOW", "low": "LOW", "medium": "HIGH", "high": "HIGH"}
_LEVELS_FLASH = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}
_BUDGETS_25_PRO = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
_BUDGETS_25_FLASH = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}
_FLASH_LITE_MIN_BUDGET = 512
_TOOL_CHOICE_MODES = {"auto": "AUTO", "none": "NONE", "any": "ANY"}


def build_google_request(
    model: Model | dict[str, Any],
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    *,
    repair: bool = True,
    tool_choice: str | None = None,
) -> dict[str, Any]:
    """The ``generateContentStream`` params for ``context`` sent to ``model`` (see the module docstring).

    ``model`` and ``context`` may be objects or Pi JSON; ``options`` a :class:`StreamOptions` or a dict with
    snake_case or Pi's camelCase keys (``reasoning``, ``thinkingBudgets``, ``maxTokens``, ``temperature``; the
    key, ``sessionId`` and ``cacheRetention`` do not change the request). ``repair=False`` replays the history as
    Pi does, orphaned function responses included. ``tool_choice`` (``"auto"``, ``"none"``, ``"any"``) is Pi's
    lower-level ``toolChoice``, which its simple entry point never sets: it adds ``config.toolConfig`` when there
    are tools. The result is a fresh JSON-ready dict sharing nothing with the inputs.
    """
    target = model if isinstance(model, Model) else Model.model_validate(model)
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options)

    max_tokens = opts.max_tokens or min(target.max_tokens, DEFAULT_MAX_TOKENS_CAP)
    thinking: dict[str, Any] | None = None
    if opts.reasoning and target.reasoning:
        effort = "high" if opts.reasoning == "xhigh" else opts.reasoning
        level = _thinking_level(target.id, effort)
        if level is not None:
            thinking = {"includeThoughts": True, "thinkingLevel": level}
        else:
            budget = thinking_budget(target.id, effort, opts.thinking_budgets)
            max_tokens, budget = _fit_budget(max_tokens, budget, target.max_tokens)
            thinking = {"includeThoughts": True, "thinkingBudget": budget}
    elif not opts.reasoning and target.reasoning:
        thinking = disabled_thinking_config(target.id)  # deviation 1
        if thinking is not None and thinking.get("thinkingBudget", 0) > 0:
            max_tokens, thinking["thinkingBudget"] = _fit_budget(
                max_tokens, thinking["thinkingBudget"], target.max_tokens
            )

    config: dict[str, Any] = {}
    if opts.temperature is not None:
        config["temperature"] = opts.temperature
    config["maxOutputTokens"] = max_tokens
    if ctx.system_prompt:
        config["systemInstruction"] = sanitize_surrogates(ctx.system_prompt)
    if ctx.tools:
        config["tools"] = [{"functionDeclarations": [_function_declaration(tool) for tool in ctx.tools]}]
        if tool_choice:
            mode = _TOOL_CHOICE_MODES.get(tool_choice, "AUTO")
            config["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    if thinking is not None:
        config["thinkingConfig"] = thinking
    return {"model": target.id, "contents": _convert_messages(ctx.messages, target, repair), "config": config}


# --- thinking ------------------------------------------------------------------------------------------


def is_gemini3_pro(model_id: str) -> bool:
    """Gemini 3 Pro (``gemini-3-pro…``, ``gemini-3.1-pro…``): thinks by level, ``LOW`` or ``HIGH``."""
    return _GEMINI3_PRO.search(model_id.lower()) is not None


def is_gemini3_flash(model_id: str) -> bool:
    """Gemini 3 Flash and Flash-Lite (``gemini-3-flash…``, ``gemini-3.1-flash-lite…``): thinks by level."""
    return _GEMINI3_FLASH.search(model_id.lower()) is not None


def _thinking_level(model_id: str, effort: str) -> str | None:
    if is_gemini3_pro(model_id):
        return _LEVELS_PRO[effort]
    if is_gemini3_flash(model_id):
        return _LEVELS_FLASH[effort]
    return None


def thinking_budget(model_id: str, effort: str, custom: dict[str, int] | None = None) -> int:
    """The thinking budget for ``effort`` (``minimal``…``high``) on a model that thinks by budget: the caller's
    ``thinking_budgets`` first, then Pi's table for 2.5 pro / 2.5 flash, else ``-1`` (dynamic). 2.5 flash-lite's
    ``minimal`` is 512, its lower limit (deviation 3)."""
    if custom and custom.get(effort) is not None:
        return custom[effort]
    if "2.5-pro" in model_id:
        return _BUDGETS_25_PRO[effort]
    if "2.5-flash" in model_id:
        budget = _BUDGETS_25_FLASH[effort]
        return max(budget, _FLASH_LITE_MIN_BUDGET) if "2.5-flash-lite" in model_id else budget
    return -1


def disabled_thinking_config(model_id: str) -> dict[str, Any] | None:
    """The ``thinkingConfig`` that turns thinking off, or as far down as the model allows (deviation 1); ``None``
    for a model family whose settings we do not know (nothing is sent, as in Pi)."""
    if is_gemini3_pro(model_id):
        return {"thinkingLevel": "LOW"}
    if is_gemini3_flash(model_id):
        return {"thinkingLevel": "MINIMAL"}
    if "2.5-pro" in model_id:
        return {"thinkingBudget": _BUDGETS_25_PRO["minimal"]}  # 2.5 pro always thinks: its smallest budget
    if "2.5-flash" in model_id:
        return {"thinkingBudget": 0}
    return None


def _fit_budget(max_tokens: int, budget: int, model_max: int) -> tuple[int, int]:
    """Deviation 2: room for a fixed budget on top of the output limit, as Pi's ``adjustMaxTokensForThinking``."""
    if budget <= 0:  # 0 (off) and -1 (dynamic) take nothing fixed
        return max_tokens, budget
    max_tokens = min(max_tokens + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_ANSWER_TOKENS)
    return max_tokens, budget


# --- messages ------------------------------------------------------------------------------------------


def requires_tool_call_id(model_id: str) -> bool:
    """Models behind Google's API that need ids on function calls and responses (Claude, gpt-oss)."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def is_valid_thought_signature(signature: str | None) -> bool:
    """A thought signature Google accepts back: standard base64 (``+/``, padding), length divisible by 4."""
    if not signature:
        return False
    return len(signature) % 4 == 0 and _BASE64.fullmatch(signature) is not None


def _signature(same_model: bool, signature: str | None) -> str | None:
    return signature if same_model and is_valid_thought_signature(signature) else None


def _convert_messages(messages: list[Message], model: Model, repair: bool) -> list[dict[str, Any]]:
    normalize = normalize_tool_call_id if requires_tool_call_id(model.id) else None
    history = transform_messages(messages, model, normalize, repair=repair)
    sees_images = "image" in model.input
    contents: list[dict[str, Any]] = []
    image_turns: list[dict[str, Any]] = []  # of the current run of tool results, sent after its responses
    for message in history:
        if isinstance(message, ToolResultMessage):
            response, images = _function_response(message, model, sees_images)
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(response)
            else:
                contents.append({"role": "user", "parts": [response]})
            if images:
                image_turns.append({"role": "user", "parts": [{"text": TOOL_RESULT_IMAGE_TEXT}, *images]})
            continue
        contents.extend(image_turns)  # deviation 4: after all the responses of the run, not between them
        image_turns = []
        if isinstance(message, UserMessage):
            turn = _user_turn(message, sees_images)
        else:
            turn = _model_turn(message, model)
        if turn is not None:
            contents.append(turn)
    contents.extend(image_turns)
    return contents


def _user_turn(message: UserMessage, sees_images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "parts": [{"text": sanitize_surrogates(message.content)}]}  # even when blank
    parts = [
        {"text": sanitize_surrogates(block.text)} if isinstance(block, TextContent) else _inline_data(block)
        for block in message.content
        if isinstance(block, TextContent) or sees_images
    ]
    return {"role": "user", "parts": parts} if parts else None


def _model_turn(message: AssistantMessage, model: Model) -> dict[str, Any] | None:
    same_model = message.provider == model.provider and message.model == model.id
    gemini3 = "gemini-3" in model.id.lower()
    include_id = requires_tool_call_id(model.id)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if is_blank(block.text):
                continue
            part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
            signature = _signature(same_model, block.text_signature)
        elif isinstance(block, ThinkingContent):
            if is_blank(block.thinking):
                continue
            if not same_model:  # another model's reasoning is context, as plain text (no tags to imitate)
                parts.append({"text": sanitize_surrogates(block.thinking)})
                continue
            part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
            signature = _signature(same_model, block.thinking_signature)
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": copy.deepcopy(block.arguments or {})}
            if include_id:
                call["id"] = block.id
            part = {"functionCall": call}
            signature = _signature(same_model, block.thought_signature) or (SKIP_THOUGHT_SIGNATURE if gemini3 else None)
        else:
            continue
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return {"role": "model", "parts": parts} if parts else None


def _function_response(
    result: ToolResultMessage, model: Model, sees_images: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``functionResponse`` part of one result, and the image parts that go in a separate turn."""
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    all_images = [block for block in result.content if isinstance(block, ImageContent)]
    images = [_inline_data(block) for block in all_images] if sees_images else []
    if text:
        value = sanitize_surrogates(text)
    elif images:
        value = SEE_ATTACHED_IMAGE_TEXT
    else:
        value = IMAGE_OMITTED_TEXT if all_images else ""  # deviation 5 (Pi: "" for dropped images)
    response: dict[str, Any] = {"name": result.tool_name, "response": {"error" if result.is_error else "output": value}}
    nested = bool(images) and "gemini-3" in model.id  # Gemini 3 takes images inside the function response
    if nested:
        response["parts"] = images
    if requires_tool_call_id(model.id):
        response["id"] = result.tool_call_id
    return {"functionResponse": response}, [] if nested else images


def _inline_data(image: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


# --- tools ---------------------------------------------------------------------------------------------


def _function_declaration(tool: Tool) -> dict[str, Any]:
    # parametersJsonSchema takes full JSON Schema (anyOf, const, additionalProperties…): passed as is.
    return {"name": tool.name, "description": tool.description, "parametersJsonSchema": copy.deepcopy(tool.parameters)}
