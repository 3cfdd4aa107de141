"""Overflow detection and retry rules, on messages as providers really phrase their errors."""

import pytest

from pi_notebook.ai import AssistantMessage, Usage
from pi_notebook.ai.overflow import is_context_overflow
from pi_notebook.ai.retry import RetrySettings, is_retryable, retry_delay_ms


def failed(text, stop_reason="error"):
    return AssistantMessage(api="a", provider="p", model="m", stop_reason=stop_reason, error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000",
        "Your input exceeds the context window of this model",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048575)",
        "request (9000 tokens) exceeds the available context size (8192 tokens)",
        "400 status code (no body)",
        "413 (no body)",
        "Error: context_length_exceeded",
    ],
)
def test_provider_overflow_errors_are_recognised(text):
    assert is_context_overflow(failed(text))
    assert not is_retryable(failed(text))  # compaction, not a retry, fixes these


def test_silent_overflow_is_seen_from_usage():
    ok = AssistantMessage(api="a", provider="p", model="m", usage=Usage(input=7000, cache_read=2000))
    assert is_context_overflow(ok, context_window=8192)
    assert not is_context_overflow(ok, context_window=16384)
    assert not is_context_overflow(ok)


@pytest.mark.parametrize(
    ("text", "retry"),
    [
        ("overloaded_error: Overloaded", True),
        ("429 Too Many Requests", True),
        ("Rate limit reached for gpt-4o", True),
        ("503 Service Unavailable", True),
        ("other side closed", True),
        ("Connection refused", True),
        ("invalid x-api-key", False),
        ("No API key for provider 'anthropic'", False),
    ],
)
def test_retryable_errors(text, retry):
    assert is_retryable(failed(text)) is retry


def test_aborted_and_successful_messages_are_never_retried():
    assert not is_retryable(failed("429", stop_reason="aborted"))
    assert not is_retryable(AssistantMessage(api="a", provider="p", model="m"))


def test_backoff_doubles_and_is_capped():
    assert [retry_delay_ms(n) for n in (1, 2, 3)] == [2000, 4000, 8000]
    assert retry_delay_ms(10) == 60_000
    assert retry_delay_ms(2, RetrySettings(base_delay_ms=10)) == 20
