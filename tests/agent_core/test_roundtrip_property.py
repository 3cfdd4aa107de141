"""Property: any message built from the models survives to_pi_json → JSON text → from_pi_json unchanged."""

import json

from hypothesis import given
from hypothesis import strategies as st

from pi_notebook.agent import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    convert_to_llm,
    from_pi_json,
    to_pi_json,
)
from pi_notebook.ai import (
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

text = st.text(max_size=40)
maybe_text = st.none() | text
ints = st.integers(min_value=0, max_value=2**53)
numbers = ints | st.floats(min_value=0, max_value=1e6, allow_nan=False)
json_values = st.recursive(
    st.none() | st.booleans() | ints | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)

text_block = st.builds(TextContent, text=text, text_signature=maybe_text)
image_block = st.builds(
    ImageContent,
    data=st.text("ABCDEFabcdef0123456789+/=", max_size=20),
    mime_type=st.sampled_from(["image/png", "image/jpeg"]),
)
thinking_block = st.builds(
    ThinkingContent, thinking=text, thinking_signature=maybe_text, redacted=st.none() | st.booleans()
)
tool_call = st.builds(
    ToolCall,
    id=text,
    name=text,
    arguments=st.dictionaries(text, json_values, max_size=3),
    thought_signature=maybe_text,
)
user_content = st.lists(text_block | image_block, max_size=3)
usage = st.builds(
    Usage,
    input=ints,
    output=ints,
    cache_read=ints,
    cache_write=ints,
    total_tokens=ints,
    cost=st.builds(Cost, input=numbers, output=numbers, total=numbers),
)

messages = st.one_of(
    st.builds(UserMessage, content=text | user_content, timestamp=ints),
    st.builds(
        AssistantMessage,
        content=st.lists(text_block | thinking_block | tool_call, max_size=3),
        api=text,
        provider=text,
        model=text,
        usage=usage,
        stop_reason=st.sampled_from(["stop", "length", "toolUse", "error", "aborted"]),
        error_message=maybe_text,
        timestamp=ints,
    ),
    st.builds(
        ToolResultMessage,
        tool_call_id=text,
        tool_name=text,
        content=user_content,
        details=json_values,
        is_error=st.booleans(),
        timestamp=ints,
    ),
    st.builds(
        BashExecutionMessage,
        command=text,
        output=text,
        exit_code=st.none() | st.integers(-255, 255),
        cancelled=st.booleans(),
        truncated=st.booleans(),
        full_output_path=maybe_text,
        timestamp=ints,
        exclude_from_context=st.none() | st.booleans(),
    ),
    st.builds(
        CustomMessage,
        custom_type=text,
        content=text | user_content,
        display=st.booleans(),
        details=json_values,
        timestamp=ints,
    ),
    st.builds(BranchSummaryMessage, summary=text, from_id=text, timestamp=ints),
    st.builds(CompactionSummaryMessage, summary=text, tokens_before=ints, timestamp=ints),
)


@given(messages)
def test_to_pi_json_from_pi_json_round_trip(message):
    data = to_pi_json(message)
    assert json.loads(json.dumps(data)) == data  # plain JSON, nothing Python-only
    again = from_pi_json(json.loads(json.dumps(data)))
    assert type(again) is type(message)
    assert to_pi_json(again) == data


@given(st.lists(messages, max_size=6))
def test_convert_to_llm_only_ever_produces_the_three_llm_roles(history):
    out = convert_to_llm(history)
    assert {m.role for m in out} <= {"user", "assistant", "toolResult"}
    assert len(out) <= len(history)
