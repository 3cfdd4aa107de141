"""Layer 1 types: Pi's JSON in, Pi's JSON out, documented fields."""

import inspect
import json
import subprocess
import sys

import pytest
from pydantic import TypeAdapter, ValidationError

import pi_notebook.agent as agent_layer
import pi_notebook.ai as ai_layer
from pi_notebook.ai import AssistantMessage, Context, Message, Model, PiModel, UserMessage
from tests.pi_fixtures import load_cases

PAYLOAD_FILES = ("anthropic_payload.json", "openai_completions_payload.json")
MESSAGE = TypeAdapter(Message)


def all_pi_models():
    for module in (ai_layer, agent_layer):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, PiModel) and obj is not PiModel:
                yield obj


@pytest.mark.parametrize("cls", list(all_pi_models()), ids=lambda c: c.__name__)
def test_every_field_has_a_docstring(cls):
    undocumented = [name for name, field in cls.model_fields.items() if not field.description]
    assert undocumented == []


@pytest.mark.parametrize("name", PAYLOAD_FILES)
def test_pi_models_and_contexts_round_trip(name):
    for case in load_cases(name):
        raw_model = case["input"]["model"]
        assert Model.model_validate(raw_model).to_pi_json() == raw_model
        context = {"messages": case["input"]["messages"]}
        for key in ("systemPrompt", "tools"):
            if key in case["input"]:
                context[key] = case["input"][key]
        assert Context.model_validate(context).to_pi_json() == context, case["name"]


def test_messages_are_discriminated_by_role():
    assert isinstance(MESSAGE.validate_python({"role": "user", "content": "hi", "timestamp": 1}), UserMessage)
    with pytest.raises(ValidationError):
        MESSAGE.validate_python({"role": "bashExecution", "command": "ls"})


def test_numbers_keep_their_json_type():
    m = AssistantMessage.model_validate(
        {
            "role": "assistant",
            "content": [],
            "api": "a",
            "provider": "p",
            "model": "m",
            "usage": {
                "input": 3,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 3,
                "cost": {"input": 0.5, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
            },
            "stopReason": "stop",
            "timestamp": 1735689600000,
        }
    )
    dumped = m.to_pi_json()
    assert type(dumped["usage"]["input"]) is int and type(dumped["usage"]["cost"]["input"]) is float
    assert '"output":0,' in m.model_dump_json()


def test_a_new_message_gets_a_millisecond_timestamp():
    import time

    before = time.time() * 1000
    m = UserMessage(content="hi")
    assert before - 1 <= m.timestamp <= time.time() * 1000 + 1
    assert isinstance(m.timestamp, int)


def test_set_numbers_writes_what_setattr_would_and_refuses_other_fields():
    from pi_notebook.ai import Usage

    fast, slow = Usage(), Usage()
    fast.set_numbers(input=10, output=2, total_tokens=12)
    slow.input, slow.output, slow.total_tokens = 10, 2, 12
    assert fast.to_pi_json() == slow.to_pi_json() and fast == slow
    with pytest.raises(AttributeError, match="cost is not a number field"):
        fast.set_numbers(cost=1)
    with pytest.raises(AttributeError, match="nope is not a number field"):
        fast.set_numbers(nope=1)


def test_field_docstrings_are_read_at_first_use_not_at_import():
    # Importing the package (what %load_ext does) parses no source for them; the first schema built, a TypeAdapter
    # over the messages or model_fields gets them, nested classes included.
    code = """
import ast, json
parsed = []
real = ast.parse
ast.parse = lambda *a, **k: parsed.append(1) or real(*a, **k)
import pi_notebook.coding_agent, pi_notebook.coding_agent.session
from pi_notebook.agent_core import from_pi_json
assert parsed == [], parsed
from_pi_json({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1})
from pi_notebook.ai import TextContent, UserMessage
schema = UserMessage.model_json_schema()
print(json.dumps([len(parsed), schema["$defs"]["TextContent"]["properties"]["text"].get("description"),
                  TextContent.model_fields["text"].description]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    parses, in_schema, in_fields = json.loads(out.stdout)
    assert parses >= 1 and in_schema == in_fields == "The text."


def test_a_models_signature_shows_number_fields_as_numbers_and_keeps_other_annotations():
    from typing import Annotated

    from pi_notebook.ai import Number

    class Measured(PiModel):
        size: Number = 0
        """A number."""
        label: Annotated[str, "a note"] = ""
        """Text with a note."""

    parameters = inspect.signature(Measured).parameters
    assert parameters["size"].annotation == int | float
    assert parameters["label"].annotation == Annotated[str, "a note"]
