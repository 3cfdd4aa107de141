"""Layer 1: what an LLM API understands. Knows nothing of agents or Jupyter."""

from ._base import PiModel, now_ms
from .types import (
    AssistantMessage,
    CacheRetention,
    Context,
    Cost,
    ImageContent,
    Message,
    Model,
    ModelCost,
    StopReason,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "AssistantMessage",
    "CacheRetention",
    "Context",
    "Cost",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "PiModel",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "now_ms",
]
