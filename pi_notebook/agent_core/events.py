"""Events of an agent run (Pi's ``AgentEvent``), each with ``.type`` set to Pi's name.

A run emits ``agent_start``, then turns: ``turn_start``, ``message_start``/``message_update``/``message_end``
for the prompts, the assistant response and each tool result, ``tool_execution_start``/``update``/``end``
around each tool, ``turn_end``; and finally ``agent_end`` with the messages new in this run (and, not in Pi,
``stop``: why the loop ended a run the model had not finished).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..ai import AssistantMessage, ToolResultMessage
from ..ai.events import AssistantMessageEvent
from .tool import AgentToolResult


@dataclass(frozen=True)
class RunStop:
    """Why the loop ended a run the model had not finished (not in Pi): carried by ``agent_end``."""

    reason: Literal["max_turns", "loop_guard"]
    """``"max_turns"``: the turn limit was reached while the model still called tools; ``"loop_guard"``: the
    model repeated a tool call or its text."""
    message: str
    """One human sentence saying what happened."""
    details: dict[str, Any] = field(default_factory=dict)
    """Structured facts (``turns``/``maxTurns``; ``kind``, ``toolName``, ``count``, ``chunk``, ``repeats``)."""


@dataclass(frozen=True)
class AgentStartEvent:
    """A run began."""

    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True)
class AgentEndEvent:
    """A run ended; ``messages`` are the ones it added (prompts included)."""

    type: ClassVar[str] = "agent_end"
    messages: list[Any] = field(default_factory=list)
    stop: RunStop | None = None
    """Set when the loop stopped the run itself (``max_turns``, the loop guard); ``None`` when the model
    finished, or the run ended in an error or an abort (those are on the last assistant message)."""


@dataclass(frozen=True)
class TurnStartEvent:
    """A turn (one assistant response and its tool results) began."""

    type: ClassVar[str] = "turn_start"


@dataclass(frozen=True)
class TurnEndEvent:
    """A turn ended."""

    type: ClassVar[str] = "turn_end"
    message: AssistantMessage
    tool_results: list[ToolResultMessage] = field(default_factory=list)


@dataclass(frozen=True)
class MessageStartEvent:
    """A message entered the conversation (for the assistant: streaming began)."""

    type: ClassVar[str] = "message_start"
    message: Any


@dataclass(frozen=True)
class MessageUpdateEvent:
    """The streaming assistant message changed; ``assistant_message_event`` says how."""

    type: ClassVar[str] = "message_update"
    message: AssistantMessage
    assistant_message_event: AssistantMessageEvent


@dataclass(frozen=True)
class MessageEndEvent:
    """A message is complete."""

    type: ClassVar[str] = "message_end"
    message: Any


@dataclass(frozen=True)
class ToolExecutionStartEvent:
    """A tool call is about to be prepared and run."""

    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ToolExecutionUpdateEvent:
    """A running tool reported partial output."""

    type: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult


@dataclass(frozen=True)
class ToolExecutionEndEvent:
    """A tool call finished (or was refused, or skipped)."""

    type: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool


AgentEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)
