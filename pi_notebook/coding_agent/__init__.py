"""Layer 3, the coding agent (Pi's ``packages/coding-agent``): an app built on the core.

It declares four roles (``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``) through the
core's public :func:`~pi_notebook.agent_core.register_message_type`, with Pi's texts for what the LLM reads of
each; and it owns what a coding agent needs around the loop: the boundary trace, session files, compaction,
branch summaries, overflow recovery, the built-in tools and the shell executor, and
:class:`~.agent_session.AgentSession`, which puts them together around one session file (Pi's ``AgentSession``).
Imports
:mod:`pi_notebook.agent_core` and :mod:`pi_notebook.ai`, never the notebook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ai.lazy import lazy_exports

# Eager: importing the package is what registers the four roles.
from .messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    BashExecutionMessage,
    BranchSummaryMessage,
    CodingAgentMessage,
    CompactionSummaryMessage,
    CustomMessage,
    bash_execution_to_text,
)

if TYPE_CHECKING:
    from .agent_session import AgentSession, SessionPreview
    from .run_policy import RunPlan, SessionSettings
    from .trace import BoundaryTrace, TraceRow, atrace_boundary, trace_boundary

# Imported on first use (``%load_ext`` does not need the boundary trace).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".agent_session": ["AgentSession", "SessionPreview"],
        ".run_policy": ["RunPlan", "SessionSettings"],
        ".trace": ["BoundaryTrace", "TraceRow", "atrace_boundary", "trace_boundary"],
    },
)


__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentSession",
    "BashExecutionMessage",
    "BoundaryTrace",
    "BranchSummaryMessage",
    "CodingAgentMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "RunPlan",
    "SessionPreview",
    "SessionSettings",
    "TraceRow",
    "atrace_boundary",
    "bash_execution_to_text",
    "trace_boundary",
]
