"""Layer 2: the agent core — AgentMessage, custom roles, the LLM boundary, session files.

Imports :mod:`pi_notebook.ai` only.
"""

from .convert import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    ContextPipelineError,
    Visibility,
    aprepare_llm_messages,
    bash_execution_to_text,
    convert_to_llm,
    prepare_llm_messages,
    visibility,
)
from .messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    MessageType,
    MessageTypeError,
    MessageValidationError,
    OpaqueMessage,
    from_pi_json,
    message_type,
    register_message_type,
    registered_message_types,
    to_pi_json,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "ContextPipelineError",
    "CustomMessage",
    "MessageType",
    "MessageTypeError",
    "MessageValidationError",
    "OpaqueMessage",
    "Visibility",
    "aprepare_llm_messages",
    "bash_execution_to_text",
    "convert_to_llm",
    "from_pi_json",
    "message_type",
    "prepare_llm_messages",
    "register_message_type",
    "registered_message_types",
    "to_pi_json",
    "visibility",
]
