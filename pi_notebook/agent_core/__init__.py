"""Layer 2, the generic agent core (Pi's ``packages/agent``): AgentMessage and its role registry, the LLM
boundary (``transform_context`` → ``convert_to_llm``), the loop, :class:`Agent`, events and the tool protocol.

It imports :mod:`pi_notebook.ai` only and knows no app role: an app (such as
:mod:`pi_notebook.coding_agent`) declares its roles and registers them with :func:`register_message_type`.
"""

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
    opaque_messages,
    register_message_type,
    registered_message_types,
    to_pi_json,
)
from .tool import AgentTool, AgentToolResult, OnUpdate, ToolArgumentsError, validate_tool_arguments

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
    "opaque_messages",
    "prepare_llm_messages",
    "register_message_type",
    "registered_message_types",
    "run_agent_loop",
    "run_agent_loop_continue",
    "to_pi_json",
    "validate_tool_arguments",
    "visibility",
]
