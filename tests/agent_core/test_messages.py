"""The AgentMessage layer: registry, parsing, opaque messages, visibility and the two-stage pipeline."""

import asyncio
from typing import Literal

import pytest

from pi_notebook.agent import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContextPipelineError,
    CustomMessage,
    MessageTypeError,
    MessageValidationError,
    OpaqueMessage,
    aprepare_llm_messages,
    convert_to_llm,
    from_pi_json,
    message_type,
    opaque_messages,
    prepare_llm_messages,
    register_message_type,
    registered_message_types,
    to_pi_json,
    visibility,
)
from pi_notebook.ai import AssistantMessage, PiModel, TextContent, ToolCall, ToolResultMessage, UserMessage


def user(text):
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def texts(llm_messages):
    return [block.text for m in llm_messages for block in m.content if block.type == "text"]


# --- the registry --------------------------------------------------------------------------------------


def test_the_coding_agent_roles_are_registered_like_any_other():
    roles = [t.role for t in registered_message_types()]
    for role in (
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    ):
        assert role in roles
    assert message_type("bashExecution").model is BashExecutionMessage


def test_a_registered_role_parses_typed_and_reaches_the_llm_through_its_converter():
    class TicketEvent(PiModel):
        role: Literal["ticketEventA"] = "ticketEventA"
        ticket_id: str
        event: str
        timestamp: int = 0

    register_message_type(
        TicketEvent,
        to_llm=lambda m: UserMessage(content=f"Ticket {m.ticket_id}: {m.event}", timestamp=m.timestamp),
    )
    raw = {"role": "ticketEventA", "ticketId": "T-7", "event": "reopened", "timestamp": 5}
    parsed = from_pi_json(raw)  # the parser was rebuilt on registration
    assert isinstance(parsed, TicketEvent) and parsed.ticket_id == "T-7"
    assert to_pi_json(parsed) == raw
    assert [to_pi_json(m) for m in convert_to_llm([parsed])] == [
        {"role": "user", "content": "Ticket T-7: reopened", "timestamp": 5}
    ]


def test_a_converter_may_return_several_messages_or_none():
    class Pair(PiModel):
        role: Literal["pairB"] = "pairB"
        a: str
        b: str

    class Silent(PiModel):
        role: Literal["silentB"] = "silentB"

    register_message_type(Pair, to_llm=lambda m: [user(m.a), user(m.b)])
    register_message_type(Silent, to_llm=lambda m: None)
    assert texts(convert_to_llm([Pair(a="x", b="y"), Silent(), user("z")])) == ["x", "y", "z"]


def test_a_role_without_converter_is_ui_only():
    class Note(PiModel):
        role: Literal["noteC"] = "noteC"
        text: str

    register_message_type(Note)
    assert convert_to_llm([Note(text="n")]) == []
    assert visibility(Note(text="n")).level == "ui"


def test_registering_a_role_twice_with_another_class_is_an_error_unless_replaced():
    class First(PiModel):
        role: Literal["dupD"] = "dupD"

    class Second(PiModel):
        role: Literal["dupD"] = "dupD"
        extra_field: int = 1

    register_message_type(First)
    register_message_type(First)  # the same class again is fine (re-imports)
    with pytest.raises(MessageTypeError, match=r"already registered to .*First"):
        register_message_type(Second)
    assert isinstance(from_pi_json({"role": "dupD"}), First)
    register_message_type(Second, replace=True)
    assert isinstance(from_pi_json({"role": "dupD"}), Second)


def test_built_in_roles_cannot_be_taken_over_by_accident():
    class FakeUser(PiModel):
        role: Literal["user"] = "user"

    with pytest.raises(MessageTypeError):
        register_message_type(FakeUser)


def test_a_class_without_a_literal_role_cannot_be_registered():
    class NoRole(PiModel):
        text: str

    class LooseRole(PiModel):
        role: str = "loose"

    for cls in (NoRole, LooseRole):
        with pytest.raises(MessageTypeError, match="role: Literal"):
            register_message_type(cls)
    with pytest.raises(MessageTypeError):
        register_message_type(dict)


def test_a_converter_returning_a_non_message_is_reported_with_its_role():
    class Broken(PiModel):
        role: Literal["brokenE"] = "brokenE"

    register_message_type(Broken, to_llm=lambda m: "just a string")
    with pytest.raises(TypeError, match="brokenE"):
        convert_to_llm([Broken()])


# --- unknown and invalid messages -----------------------------------------------------------------------


def test_an_unknown_role_is_kept_verbatim_and_never_sent():
    raw = {"role": "notification", "text": "build finished", "level": {"n": 1}, "timestamp": 3}
    message = from_pi_json(raw)
    assert isinstance(message, OpaqueMessage)
    assert "unknown role 'notification'" in message.reason
    assert message.role == "notification"
    assert to_pi_json(message) == raw
    assert convert_to_llm([message, raw, user("hi")]) == [user("hi")]
    assert visibility(message).level == "ui"


def test_opaque_messages_are_reported_when_asked():
    history = [user("hi"), {"role": "notification", "text": "x"}, {"role": "user", "content": 5}]
    found = opaque_messages(history)
    assert [i for i, _ in found] == [1, 2]
    assert "unknown role 'notification'" in found[0][1].reason and "invalid 'user'" in found[1][1].reason


def test_an_invalid_message_of_a_known_role_is_kept_opaque_or_raises_when_strict():
    raw = {"role": "assistant", "content": "not a list", "timestamp": 1}
    message = from_pi_json(raw)
    assert isinstance(message, OpaqueMessage) and "invalid 'assistant' message" in message.reason
    assert to_pi_json(message) == raw
    with pytest.raises(MessageValidationError, match="assistant"):
        from_pi_json(raw, lenient=False)
    with pytest.raises(TypeError):
        from_pi_json(["not", "a", "dict"])


# --- JSON shape -----------------------------------------------------------------------------------------


def test_python_attributes_are_snake_case_and_json_is_pis_camel_case():
    m = BashExecutionMessage(
        command="ls",
        output="a",
        exit_code=0,
        full_output_path="/tmp/x",
        timestamp=9,
        exclude_from_context=True,
    )
    assert to_pi_json(m) == {
        "role": "bashExecution",
        "command": "ls",
        "output": "a",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "fullOutputPath": "/tmp/x",
        "timestamp": 9,
        "excludeFromContext": True,
    }


def test_unset_optional_fields_are_absent_but_explicit_nulls_round_trip():
    assert "exitCode" not in to_pi_json(BashExecutionMessage(command="x", cancelled=True))
    assert "exitCode" not in to_pi_json(BashExecutionMessage(command="x", exit_code=None))
    raw = {
        "role": "bashExecution",
        "command": "x",
        "output": "",
        "exitCode": None,
        "cancelled": True,
        "truncated": False,
        "timestamp": 1,
    }
    assert to_pi_json(from_pi_json(raw)) == raw


def test_unknown_keys_are_kept_at_every_level():
    raw = {
        "role": "assistant",
        "content": [{"type": "text", "text": "hi", "phase": "final"}],
        "api": "a",
        "provider": "p",
        "model": "m",
        "responseId": "r1",
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 3,
            "reasoning": 1,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": 1,
    }
    assert to_pi_json(from_pi_json(raw)) == raw


# --- visibility -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "level"),
    [
        (user("hi"), "both"),
        (BashExecutionMessage(command="ls"), "both"),
        (BashExecutionMessage(command="ls", exclude_from_context=True), "ui"),
        (CustomMessage(custom_type="ext", content="secret hint", display=False), "llm"),
        (CustomMessage(custom_type="ext", content="shown"), "both"),
        (BranchSummaryMessage(summary="s", from_id="root"), "both"),
        (CompactionSummaryMessage(summary="s", tokens_before=10), "both"),
    ],
)
def test_the_three_visibility_levels(message, level):
    assert visibility(message).level == level
    assert visibility(to_pi_json(message)).level == level


def test_hidden_custom_messages_are_still_sent_and_excluded_bash_is_not():
    history = [
        BashExecutionMessage(command="cat secrets.env", output="KEY=1", exclude_from_context=True),
        CustomMessage(custom_type="ext", content="only the model sees this", display=False),
    ]
    assert texts(convert_to_llm(history)) == ["only the model sees this"]


# --- the two-stage pipeline ------------------------------------------------------------------------------


def tool_turn():
    call = ToolCall(id="c1", name="ls", arguments={})
    return [
        user("list files"),
        AssistantMessage(content=[call], api="a", provider="p", model="m", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a.txt")]),
    ]


def test_transform_context_sees_agent_messages_and_runs_before_convert():
    seen = {}

    def transform(messages):
        seen["roles"] = [m.role for m in messages]
        return [
            CompactionSummaryMessage(summary="earlier work", tokens_before=100, timestamp=1),
            *messages[-1:],
        ]

    def convert(messages):
        seen["converted_roles"] = [m.role for m in messages]
        return convert_to_llm(messages)

    history = [BashExecutionMessage(command="ls", output="a.txt", exit_code=0), *tool_turn()]
    out = prepare_llm_messages(history, transform_context=transform, convert=convert)
    assert seen == {
        "roles": ["bashExecution", "user", "assistant", "toolResult"],
        "converted_roles": ["compactionSummary", "toolResult"],
    }
    assert out[0].content[0].text.endswith("earlier work\n</summary>")
    assert len(history) == 4  # the caller's list is untouched


def test_a_failing_stage_gives_a_typed_error_naming_it():
    def bad_transform(messages):
        raise KeyError("boom")

    with pytest.raises(ContextPipelineError, match="transform_context failed: KeyError") as info:
        prepare_llm_messages(tool_turn(), transform_context=bad_transform)
    assert info.value.stage == "transform_context" and isinstance(info.value.__cause__, KeyError)

    with pytest.raises(ContextPipelineError, match="convert_to_llm") as info:
        prepare_llm_messages(tool_turn(), convert=lambda ms: [*ms, BashExecutionMessage(command="x")])
    assert info.value.stage == "convert_to_llm"

    with pytest.raises(ContextPipelineError, match="expected a list"):
        prepare_llm_messages(tool_turn(), transform_context=lambda ms: None)


def test_async_stages_run_in_aprepare_and_are_refused_by_the_sync_pipeline():
    async def transform(messages):
        await asyncio.sleep(0)
        return messages[:1]

    assert texts(asyncio.run(aprepare_llm_messages(tool_turn(), transform_context=transform))) == ["list files"]
    with pytest.raises(ContextPipelineError, match="aprepare_llm_messages"):
        prepare_llm_messages(tool_turn(), transform_context=transform)

    async def failing_convert(messages):
        raise RuntimeError("provider exploded")

    with pytest.raises(ContextPipelineError, match="convert_to_llm failed: RuntimeError: provider exploded"):
        asyncio.run(aprepare_llm_messages(tool_turn(), convert=failing_convert))
