"""Pi's shared pre-pass ``transformMessages``: make a stored history safe to replay to one model.

Every request builder runs this before translating messages to its API. Two passes:

1. **Per message, for the target model.** An assistant message from a *different* model (provider, api or id
   differ) loses what only its own model can read: thinking becomes plain text (blank thinking and redacted
   thinking are dropped), text loses its signature, tool calls lose their ``thought_signature`` and get their
   id rewritten by the provider's ``normalize_tool_call_id`` (tool results follow the rewrite). Messages from
   the same model pass through untouched; user messages always do.
2. **Ordering.** Errored/aborted assistant messages are dropped (they are incomplete turns), and a tool call
   left unanswered when the next user or assistant message arrives gets a synthetic error result
   ``No result provided``.

Two repairs go beyond Pi @83378aad (``repair=True``, the default; ``repair=False`` reproduces Pi exactly):

* a tool result that does not answer a tool call of the latest kept assistant message is dropped. This is the
  result of a call made by a dropped errored/aborted message, or one arriving after its turn was already
  closed; Pi keeps it, and the Anthropic API rejects a ``tool_result`` without its ``tool_use``.
* tool calls still unanswered at the end of the list are answered with ``No result provided`` too, as newer
  Pi does (earendil-works/pi@2e5a972a); otherwise the request ends on a ``tool_use`` the API rejects.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import TypeAdapter

from .._base import describe_pending, now_ms
from ..jstext import is_blank
from ..types import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

NO_RESULT_TEXT = "No result provided"
"""Text of the synthetic error result given to a tool call that never got one."""

NormalizeToolCallId = Callable[..., str]
"""``normalize(id, model, source_message) -> str``; like a JS callback it may take fewer arguments."""

describe_pending()  # the field descriptions, before the schemas are built below
_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
_LLM_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)


def transform_messages(
    messages: Iterable[Message | dict[str, Any]],
    model: Model | dict[str, Any],
    normalize_tool_call_id: NormalizeToolCallId | None = None,
    *,
    now: Callable[[], int] | None = None,
    repair: bool = True,
) -> list[Message]:
    """Prepare ``messages`` for ``model`` as Pi's ``transformMessages`` does (see the module docstring).

    ``messages`` are LLM messages (objects or Pi JSON dicts; run ``convert_to_llm`` on agent messages first);
    ``model`` is a :class:`Model` or its Pi JSON. ``normalize_tool_call_id(id, model, source)`` rewrites the
    ids of tool calls made by other models (``None``: ids are kept). ``now()`` gives the timestamp of each
    synthetic result in Unix ms (default: the current time). ``repair=False`` skips our two repairs and
    reproduces Pi @83378aad exactly. Unchanged messages are returned as the same objects.
    """
    target = model if isinstance(model, Model) else Model.model_validate(model)
    normalize = _adapt(normalize_tool_call_id) if normalize_tool_call_id is not None else None
    adapted = _adapt_to_model([_as_message(m) for m in messages], target, normalize)
    return _fix_tool_result_order(adapted, now or now_ms, repair)


def _as_message(message: Any) -> Message:
    if isinstance(message, _LLM_MESSAGES):
        return message
    if isinstance(message, dict):
        return _MESSAGE.validate_python(message)
    raise TypeError(
        f"transform_messages takes user/assistant/toolResult messages, got {type(message).__name__}; "
        "run convert_to_llm() on agent messages first"
    )


def _adapt(normalize: NormalizeToolCallId) -> Callable[[str, Model, AssistantMessage], str]:
    """Call ``normalize`` with as many of ``(id, model, source)`` as it accepts: JS callbacks ignore extra
    arguments, so a port of Pi's one-argument Anthropic normalizer must work too."""
    try:
        params = inspect.signature(normalize).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: assume Pi's full form
        return normalize
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return normalize
    positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if positional >= 3:
        return normalize
    return lambda call_id, model, source: normalize(*(call_id, model, source)[:positional])


def _adapt_to_model(
    messages: list[Message],
    model: Model,
    normalize: Callable[[str, Model, AssistantMessage], str] | None,
) -> list[Message]:
    """Pass 1: strip what only another model can read; rewrite foreign tool-call ids."""
    id_map: dict[str, str] = {}  # original tool-call id -> normalized id, filled in message order
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            out.append(_adapt_assistant(message, model, normalize, id_map))
        elif isinstance(message, ToolResultMessage):
            new_id = id_map.get(message.tool_call_id)
            if new_id and new_id != message.tool_call_id:
                message = message.model_copy(update={"tool_call_id": new_id})
            out.append(message)
        else:
            out.append(message)
    return out


def _adapt_assistant(
    message: AssistantMessage,
    model: Model,
    normalize: Callable[[str, Model, AssistantMessage], str] | None,
    id_map: dict[str, str],
) -> AssistantMessage:
    same_model = message.provider == model.provider and message.api == model.api and message.model == model.id
    if same_model:
        # Signatures, redacted payloads and even empty thinking blocks are valid for the model that made them.
        return message
    blocks: list[Any] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            # Redacted thinking is encrypted for its own model; blank thinking carries nothing. Other
            # thinking becomes plain text (no <thinking> tags, which models would start to imitate).
            if not block.redacted and not is_blank(block.thinking):
                blocks.append(TextContent(text=block.thinking))
        elif isinstance(block, TextContent):
            blocks.append(TextContent(text=block.text))  # drop the signature and any provider extras
        elif isinstance(block, ToolCall):
            call = block
            if call.thought_signature:
                call = call.model_copy(update={"thought_signature": None})
            if normalize is not None:
                new_id = normalize(block.id, model, message)
                if new_id != block.id:
                    id_map[block.id] = new_id
                    call = call.model_copy(update={"id": new_id})
            blocks.append(call)
        else:
            blocks.append(block)
    return message.model_copy(update={"content": blocks})


def _fix_tool_result_order(messages: list[Message], now: Callable[[], int], repair: bool) -> list[Message]:
    """Pass 2: drop errored/aborted turns and answer tool calls left open (plus our repairs)."""
    result: list[Message] = []
    open_calls: list[ToolCall] = []  # tool calls of the latest kept assistant message, until its turn closes
    answered: set[str] = set()

    def close_turn() -> None:
        nonlocal open_calls, answered
        result.extend(_no_result(call, now()) for call in open_calls if call.id not in answered)
        open_calls, answered = [], set()

    for message in messages:
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                # An incomplete turn (partial thinking, half-streamed tool calls): the model retries from
                # the last good state instead. Its tool calls are never opened. Pi also closes the turn before
                # it, so a real result arriving after it is then both answered by "No result provided" and
                # kept; repaired, the failed message is simply not there and the real result answers the call.
                if not repair:
                    close_turn()
                continue
            close_turn()
            calls = [block for block in message.content if isinstance(block, ToolCall)]
            if calls:
                open_calls, answered = calls, set()
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            if repair and all(call.id != message.tool_call_id for call in open_calls):
                continue  # repair 1: an orphan result (its tool_use is not in the turn it would follow)
            answered.add(message.tool_call_id)
            result.append(message)
        else:
            close_turn()  # a user message interrupts the tool flow
            result.append(message)
    if repair:
        close_turn()  # repair 2: calls still open at the end get their error result too
    return result


def _no_result(call: ToolCall, timestamp: int) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=NO_RESULT_TEXT)],
        is_error=True,
        timestamp=timestamp,
    )
