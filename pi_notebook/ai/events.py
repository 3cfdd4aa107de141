"""Streaming events of one assistant response (Pi's ``AssistantMessageEvent``).

A stream emits ``start``, then for each content block ``*_start`` / ``*_delta`` / ``*_end``, then exactly one
terminal event: ``done`` (stop, length, toolUse) or ``error`` (error, aborted). Every non-terminal event
carries ``partial``: the assistant message as streamed so far.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel
from pydantic_core import from_json

from .types import AssistantMessage, TextContent, ThinkingContent, ToolCall


@dataclass(frozen=True)
class _Event:
    type: ClassVar[str]

    def to_pi_json(self) -> dict[str, Any]:
        """The event as Pi's JSON (camelCase; messages and blocks in Pi's form)."""
        out: dict[str, Any] = {"type": self.type}
        for name, value in self.__dict__.items():
            key = "".join(p.capitalize() if i else p for i, p in enumerate(name.split("_")))
            out[key] = value.to_pi_json() if hasattr(value, "to_pi_json") else value
        return out


@dataclass(frozen=True)
class StartEvent(_Event):
    """The response began."""

    type: ClassVar[str] = "start"
    partial: AssistantMessage


@dataclass(frozen=True)
class TextStartEvent(_Event):
    """A text block began at ``content_index``."""

    type: ClassVar[str] = "text_start"
    content_index: int
    partial: AssistantMessage


@dataclass(frozen=True)
class TextDeltaEvent(_Event):
    """More text for the block at ``content_index``."""

    type: ClassVar[str] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(frozen=True)
class TextEndEvent(_Event):
    """The text block is complete; ``content`` is its whole text."""

    type: ClassVar[str] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


@dataclass(frozen=True)
class ThinkingStartEvent(_Event):
    """A thinking block began."""

    type: ClassVar[str] = "thinking_start"
    content_index: int
    partial: AssistantMessage


@dataclass(frozen=True)
class ThinkingDeltaEvent(_Event):
    """More reasoning text."""

    type: ClassVar[str] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(frozen=True)
class ThinkingEndEvent(_Event):
    """The thinking block is complete."""

    type: ClassVar[str] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


@dataclass(frozen=True)
class ToolCallStartEvent(_Event):
    """A tool call began."""

    type: ClassVar[str] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


@dataclass(frozen=True)
class ToolCallDeltaEvent(_Event):
    """A raw JSON fragment of the arguments; ``partial`` holds them parsed so far."""

    type: ClassVar[str] = "toolcall_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(frozen=True)
class ToolCallEndEvent(_Event):
    """The tool call is complete."""

    type: ClassVar[str] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


@dataclass(frozen=True)
class DoneEvent(_Event):
    """Terminal: the response ended normally."""

    type: ClassVar[str] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


@dataclass(frozen=True)
class ErrorEvent(_Event):
    """Terminal: the response failed or was aborted; ``error`` is the final message (partial content kept)."""

    type: ClassVar[str] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage


AssistantMessageEvent = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)

BlockStartEvent = TextStartEvent | ThinkingStartEvent | ToolCallStartEvent
BlockDeltaEvent = TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent
BlockEndEvent = TextEndEvent | ThinkingEndEvent | ToolCallEndEvent

TERMINAL_EVENTS = (DoneEvent, ErrorEvent)
_START_EVENTS: dict[str, type[BlockStartEvent]] = {
    "text": TextStartEvent,
    "thinking": ThinkingStartEvent,
    "toolCall": ToolCallStartEvent,
}


def final_event(message: AssistantMessage) -> DoneEvent | ErrorEvent:
    """The terminal event for a finished message, chosen by its stop reason."""
    reason = message.stop_reason
    if reason == "error" or reason == "aborted":
        return ErrorEvent(reason=reason, error=message)
    return DoneEvent(reason=reason, message=message)


@dataclass
class PartialBuilder:
    """Builds the partial message and its events block by block, for providers and the faux model.

    ``message`` is the builder's own (providers update it: usage, stop reason, ids); every event gets its own
    snapshot of it, so a consumer can keep events around, and nothing a listener does to the partial it receives
    reaches ``message`` or another event's partial. A snapshot copies the message, its usage and each block
    shallowly — strings are immutable and shared, tool-call arguments are copied — so a delta costs the same
    whatever was streamed before it (Pi passes the same mutable object in every event instead).
    """

    message: AssistantMessage
    _json: dict[int, str] = field(default_factory=dict)

    def snapshot(self) -> AssistantMessage:
        message = self.message
        copy = _clone(message)
        fields = copy.__dict__
        usage = message.usage
        if isinstance(usage, BaseModel):
            usage = _clone(usage)
            cost = usage.__dict__.get("cost")
            if isinstance(cost, BaseModel):
                usage.__dict__["cost"] = _clone(cost)
        else:
            usage = deepcopy(usage)
        fields["usage"] = usage
        fields["content"] = [_clone_block(block) for block in message.content]
        return copy

    def start(self) -> StartEvent:
        return StartEvent(partial=self.snapshot())

    def open(self, block: TextContent | ThinkingContent | ToolCall) -> BlockStartEvent:
        self.message.content.append(block)
        index = len(self.message.content) - 1
        return _START_EVENTS[block.type](content_index=index, partial=self.snapshot())

    def delta(self, index: int, delta: str) -> BlockDeltaEvent:
        block = self.message.content[index]
        if block.type == "text":
            block.text += delta
            return TextDeltaEvent(content_index=index, delta=delta, partial=self.snapshot())
        if block.type == "thinking":
            block.thinking += delta
            return ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.snapshot())
        self._json[index] = self._json.get(index, "") + delta
        block.arguments = parse_partial_json(self._json[index])
        return ToolCallDeltaEvent(content_index=index, delta=delta, partial=self.snapshot())

    def close(self, index: int) -> BlockEndEvent:
        block = self.message.content[index]
        if block.type == "text":
            return TextEndEvent(content_index=index, content=block.text, partial=self.snapshot())
        if block.type == "thinking":
            return ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.snapshot())
        if index in self._json:
            block.arguments = parse_partial_json(self._json.pop(index))
        return ToolCallEndEvent(content_index=index, tool_call=block.model_copy(deep=True), partial=self.snapshot())


_set = object.__setattr__


_Model = TypeVar("_Model", bound=BaseModel)


def _clone(model: _Model) -> _Model:
    """A shallow copy of a pydantic model, as ``model_copy()`` makes it, without its overhead (it runs for
    every object of every snapshot)."""
    cls = model.__class__
    copy = cls.__new__(cls)
    _set(copy, "__dict__", model.__dict__.copy())
    extra = model.__pydantic_extra__
    _set(copy, "__pydantic_extra__", None if extra is None else extra.copy())
    _set(copy, "__pydantic_fields_set__", model.__pydantic_fields_set__.copy())
    private = model.__pydantic_private__
    _set(copy, "__pydantic_private__", None if private is None else private.copy())
    return copy


def _clone_block(block: Any) -> Any:
    if not isinstance(block, BaseModel):
        return deepcopy(block)
    copy = _clone(block)
    arguments = copy.__dict__.get("arguments")  # a tool call's, the one mutable field of a block
    if isinstance(arguments, (dict, list)):
        copy.__dict__["arguments"] = _copy_json(arguments)
    return copy


def _copy_json(value: Any) -> Any:
    """A deep copy of parsed JSON (dicts, lists, scalars): much faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return deepcopy(value)


def parse_partial_json(text: str) -> dict[str, Any]:
    """Arguments parsed from a possibly incomplete JSON object; ``{}`` until something parses."""
    if not text.strip():
        return {}
    try:
        value = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
