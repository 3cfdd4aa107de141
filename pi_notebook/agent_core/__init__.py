"""Layer 2, the generic agent core (Pi's ``packages/agent``): AgentMessage and its role registry, the LLM
boundary (``transform_context`` → ``convert_to_llm``), the loop, :class:`Agent`, events and the tool protocol.

It imports :mod:`pi_notebook.ai` only and knows no app role: an app (such as
:mod:`pi_notebook.coding_agent`) declares its roles and registers them with :func:`register_message_type`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ai.lazy import lazy_exports

if TYPE_CHECKING:
    from .agent import Agent, AgentBusyError, AgentState
    from .convert import (
        ContextPipelineError,
        Visibility,
        aprepare_llm_messages,
        convert_to_llm,
        prepare_llm_messages,
        visibility,
    )
    from .events import RunStop
    from .loop import (
        AfterToolCallResult,
        AgentContext,
        AgentLoopConfig,
        BeforeToolCallResult,
        agent_loop,
        agent_loop_continue,
        run_agent_loop,
        run_agent_loop_continue,
    )
    from .loop_guard import LoopGuardSettings, canonical_arguments, find_repeated_tail
    from .messages import (
        AgentMessage,
        MessageType,
        MessageTypeError,
        MessageValidationError,
        OpaqueMessage,
        as_agent_message,
        from_pi_json,
        message_type,
        on_registry_change,
        opaque_messages,
        register_message_type,
        registered_message_types,
        registry_version,
        to_pi_json,
    )
    from .preview import CallPreview
    from .tool import AgentTool, AgentToolResult, OnUpdate, ToolArgumentsError, validate_tool_arguments

# Each name is imported from its module on first use: %load_ext needs only a few of them (#12, P2).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".agent": ["Agent", "AgentBusyError", "AgentState"],
        ".convert": [
            "ContextPipelineError",
            "Visibility",
            "aprepare_llm_messages",
            "convert_to_llm",
            "prepare_llm_messages",
            "visibility",
        ],
        ".events": ["RunStop"],
        ".loop": [
            "AfterToolCallResult",
            "AgentContext",
            "AgentLoopConfig",
            "BeforeToolCallResult",
            "agent_loop",
            "agent_loop_continue",
            "run_agent_loop",
            "run_agent_loop_continue",
        ],
        ".loop_guard": ["LoopGuardSettings", "canonical_arguments", "find_repeated_tail"],
        ".messages": [
            "AgentMessage",
            "MessageType",
            "MessageTypeError",
            "MessageValidationError",
            "OpaqueMessage",
            "as_agent_message",
            "from_pi_json",
            "message_type",
            "on_registry_change",
            "opaque_messages",
            "register_message_type",
            "registered_message_types",
            "registry_version",
            "to_pi_json",
        ],
        ".preview": ["CallPreview"],
        ".tool": ["AgentTool", "AgentToolResult", "OnUpdate", "ToolArgumentsError", "validate_tool_arguments"],
    },
)

__all__ = [
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "BeforeToolCallResult",
    "CallPreview",
    "ContextPipelineError",
    "LoopGuardSettings",
    "MessageType",
    "MessageTypeError",
    "MessageValidationError",
    "OnUpdate",
    "OpaqueMessage",
    "RunStop",
    "ToolArgumentsError",
    "Visibility",
    "agent_loop",
    "agent_loop_continue",
    "aprepare_llm_messages",
    "as_agent_message",
    "canonical_arguments",
    "convert_to_llm",
    "find_repeated_tail",
    "from_pi_json",
    "message_type",
    "on_registry_change",
    "opaque_messages",
    "prepare_llm_messages",
    "register_message_type",
    "registered_message_types",
    "registry_version",
    "run_agent_loop",
    "run_agent_loop_continue",
    "to_pi_json",
    "validate_tool_arguments",
    "visibility",
]
