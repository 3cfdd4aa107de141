"""Context-overflow detection (Pi's ``isContextOverflow``): provider error texts, or a silent overflow."""

from __future__ import annotations

import re

from .types import AssistantMessage

# The texts providers use when the prompt does not fit (Anthropic, OpenAI, Google, xAI, Groq, OpenRouter,
# llama.cpp, LM Studio, vLLM, Ollama ...), and proxies that answer 400/413 with no body.
OVERFLOW_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt is too long",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"model_context_window_exceeded",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^4(00|13)\s*(status code)?\s*\(no body\)",
    )
)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """True if ``message`` failed because the context did not fit, or (given ``context_window``) if it
    succeeded although its input was larger than the window (a provider that truncated silently)."""
    if message.stop_reason == "error":
        text = message.error_message or ""
        return any(p.search(text) for p in OVERFLOW_PATTERNS)
    if message.stop_reason == "stop" and context_window:
        return message.usage.input + message.usage.cache_read > context_window
    return False
