"""The public agent API in one import: the generic core and the coding agent built on it.

``from pi_notebook.agent import convert_to_llm, from_pi_json, BashExecutionMessage, ...`` gives the names of
both layers. The code lives in two packages that mirror Pi's: :mod:`pi_notebook.agent_core` (Pi's
``packages/agent``: AgentMessage and the role registry, the LLM boundary, the loop, ``Agent``, events, the tool
protocol) and :mod:`pi_notebook.coding_agent` (Pi's ``packages/coding-agent``: the four roles, the boundary
trace, session files, compaction, branch summaries, recovery, tools). This module only re-exports them.

Modules that lived under ``pi_notebook.agent`` before the split (``pi_notebook.agent.session``, ``.tools``,
``.compaction``, ...) still import, as the same module objects as their new homes.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys

from .agent_core import (
    AfterToolCallResult,
    Agent,
    AgentBusyError,
    AgentContext,
    AgentLoopConfig,
    AgentMessage,
    AgentState,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    ContextPipelineError,
    LoopGuardSettings,
    MessageType,
    MessageTypeError,
    MessageValidationError,
    OpaqueMessage,
    RunStop,
    ToolArgumentsError,
    Visibility,
    agent_loop,
    agent_loop_continue,
    aprepare_llm_messages,
    as_agent_message,
    canonical_arguments,
    convert_to_llm,
    find_repeated_tail,
    from_pi_json,
    message_type,
    opaque_messages,
    prepare_llm_messages,
    register_message_type,
    registered_message_types,
    run_agent_loop,
    run_agent_loop_continue,
    to_pi_json,
    validate_tool_arguments,
    visibility,
)
from .coding_agent import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    BashExecutionMessage,
    BoundaryTrace,
    BranchSummaryMessage,
    CodingAgentMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TraceRow,
    atrace_boundary,
    bash_execution_to_text,
    trace_boundary,
)

MOVED_MODULES = {
    **{name: f"agent_core.{name}" for name in ("agent", "convert", "events", "loop", "loop_guard", "messages", "tool")},
    **{
        name: f"coding_agent.{name}"
        for name in (
            "branch_summary", "compaction", "compaction_prompts", "context_fit", "recovery", "session",
            "session_context", "session_entries", "tools", "trace", "truncate",
        )
    },
}  # fmt: skip
"""Old submodule name under ``pi_notebook.agent`` → its module under ``pi_notebook``."""

for _old, _new in MOVED_MODULES.items():
    _sys.modules[f"{__name__}.{_old}"] = _importlib.import_module(f"pi_notebook.{_new}")
for _info in _pkgutil.iter_modules(_sys.modules[f"{__name__}.tools"].__path__):  # and the tools' own modules
    _sys.modules[f"{__name__}.tools.{_info.name}"] = _importlib.import_module(
        f"pi_notebook.coding_agent.tools.{_info.name}"
    )

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "BashExecutionMessage",
    "BeforeToolCallResult",
    "BoundaryTrace",
    "BranchSummaryMessage",
    "CodingAgentMessage",
    "CompactionSummaryMessage",
    "ContextPipelineError",
    "CustomMessage",
    "LoopGuardSettings",
    "MessageType",
    "MessageTypeError",
    "MessageValidationError",
    "OpaqueMessage",
    "RunStop",
    "ToolArgumentsError",
    "TraceRow",
    "Visibility",
    "agent_loop",
    "agent_loop_continue",
    "aprepare_llm_messages",
    "as_agent_message",
    "atrace_boundary",
    "bash_execution_to_text",
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
    "trace_boundary",
    "validate_tool_arguments",
    "visibility",
]
