"""build_anthropic_request against the params Pi's streamSimpleAnthropic hands to the SDK, plus unit tests.

``repair=False`` must reproduce Pi @83378aad exactly. With the default the body may differ from Pi's only by
our two documented repairs (see tests/ai/test_transform_messages.py), seen at the wire level as:

1. a ``tool_result`` block whose ``tool_use_id`` is not a ``tool_use`` of the immediately preceding
   assistant message is removed (a user message left empty disappears);
2. ``tool_use`` blocks still unanswered at the end get ``No result provided`` error results;

and the cache breakpoint then sits on the last block of the (new) last message.
"""

import copy
import json
from pathlib import Path

import pytest

from pi_notebook.ai import Context, Model, ToolCall, UserMessage
from pi_notebook.ai.jstext import is_blank, js_trim, sanitize_surrogates
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.anthropic_convert import (
    CLAUDE_CODE_IDENTITY,
    build_anthropic_request,
    normalize_tool_call_id,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"


def cases(name: str) -> list:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["name"]) for case in data]


def run(case: dict, **kwargs) -> dict:
    given = case["input"]
    context = {key: given[key] for key in ("systemPrompt", "messages", "tools") if key in given}
    return build_anthropic_request(given["model"], context, given["options"], **kwargs)


@pytest.fixture(autouse=True)
def _no_cache_env(monkeypatch):
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)  # unset when the fixtures were generated


# --- the repair checker --------------------------------------------------------------------------------


def pop_message_cache_control(messages: list[dict]) -> dict | None:
    """Remove the message cache breakpoint, checking Pi's rule: at most one, on the very last block."""
    found = []
    for index, message in enumerate(messages):
        if isinstance(message["content"], list):
            for position, block in enumerate(message["content"]):
                if "cache_control" in block:
                    found.append((index, position, block.pop("cache_control")))
    assert len(found) <= 1
    if not found:
        return None
    index, position, value = found[0]
    assert (index, position) == (len(messages) - 1, len(messages[-1]["content"]) - 1)
    assert messages[-1]["role"] == "user"
    return value


def with_documented_repairs(messages: list[dict]) -> list[dict]:
    out: list[dict] = []
    for message in messages:
        if message["role"] == "user" and isinstance(message["content"], list):
            before = out[-1] if out and out[-1]["role"] == "assistant" else {"content": []}
            allowed = {block["id"] for block in before["content"] if block["type"] == "tool_use"}
            content = [b for b in message["content"] if b["type"] != "tool_result" or b["tool_use_id"] in allowed]
            if not content:
                continue  # repair 1 emptied it
            message = {**message, "content": content}
        out.append(message)
    # repair 2: answer what the last assistant message left open
    if out and out[-1]["role"] == "assistant":
        out.append({"role": "user", "content": []})
    if len(out) >= 2 and out[-2]["role"] == "assistant":
        answered = {b.get("tool_use_id") for b in out[-1]["content"] if isinstance(b, dict)}
        missing = [b for b in out[-2]["content"] if b["type"] == "tool_use" and b["id"] not in answered]
        out[-1] = {**out[-1], "content": out[-1]["content"] + [synthetic(b["id"]) for b in missing]}
        if not out[-1]["content"]:
            out.pop()
    return out


def synthetic(tool_use_id: str) -> dict:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": "No result provided",
        "is_error": True,
    }


def assert_equal_up_to_repairs(ours: dict, pi: dict) -> None:
    ours, pi = copy.deepcopy(ours), copy.deepcopy(pi)
    our_mark = pop_message_cache_control(ours["messages"])
    pi_mark = pop_message_cache_control(pi["messages"])
    pi["messages"] = with_documented_repairs(pi["messages"])
    last = pi["messages"][-1] if pi["messages"] else {}
    if our_mark is not None and last.get("role") == "user" and isinstance(last["content"], str):
        # a repair made this string message the last one: the breakpoint turns it into one text block
        last["content"] = [{"type": "text", "text": last["content"]}]
    assert ours == pi
    system = pi.get("system", [])
    caching = pi_mark or next((b["cache_control"] for b in system if "cache_control" in b), None)
    if not ours["messages"] or ours["messages"][-1]["role"] != "user":
        assert our_mark is None
    elif caching is not None:
        assert our_mark == caching
    else:  # Pi's body shows no breakpoint to compare with (no system prompt, and it ended on a tool_use)
        assert our_mark is None or our_mark["type"] == "ephemeral"


def test_repair_checker_is_not_vacuous():
    pi = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "stream": True}
    assert_equal_up_to_repairs(copy.deepcopy(pi), pi)
    changed = copy.deepcopy(pi)
    changed["messages"][0]["content"] = "hello"
    with pytest.raises(AssertionError):
        assert_equal_up_to_repairs(changed, pi)
    orphan = {"role": "user", "content": [synthetic("gone")]}
    assert_equal_up_to_repairs(pi, {**pi, "messages": [*pi["messages"], orphan]})
    mark = {"type": "ephemeral"}
    cached_orphan = {"role": "user", "content": [{**synthetic("gone"), "cache_control": mark}]}
    cached_hi = {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": mark}]}
    assert_equal_up_to_repairs({**pi, "messages": [cached_hi]}, {**pi, "messages": [*pi["messages"], cached_orphan]})


# --- conformance ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("anthropic_payload.json"))
def test_without_repairs_matches_pi_exactly(case):
    assert run(case, repair=False) == case["expected"]


@pytest.mark.parametrize("case", cases("anthropic_payload.json"))
def test_default_differs_from_pi_only_by_documented_repairs(case):
    assert_equal_up_to_repairs(run(case), case["expected"])


@pytest.mark.parametrize("case", cases("anthropic_payload.json"))
def test_the_api_key_never_reaches_the_body(case):
    key = case["input"]["options"]["apiKey"]
    assert key not in json.dumps(run(case))


@pytest.mark.parametrize("case", cases("anthropic_payload.json"))
def test_accepts_objects_and_snake_case_options(case):
    given = case["input"]
    context = Context.model_validate({k: given[k] for k in ("systemPrompt", "messages", "tools") if k in given})
    options = StreamOptions.coerce(given["options"])
    body = build_anthropic_request(Model.model_validate(given["model"]), context, options, repair=False)
    assert body == case["expected"]


# --- the two repairs, precisely ------------------------------------------------------------------------

SONNET = {
    "id": "claude-sonnet-4-20250514",
    "name": "Claude Sonnet 4",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "contextWindow": 200000,
    "maxTokens": 64000,
}
KEY = {"apiKey": "sk-ant-api03-secret"}


def model(**changes) -> dict:
    return {**SONNET, **changes}


def turn(*blocks, stop="toolUse", **extra) -> dict:
    meta = {"api": "anthropic-messages", "provider": "anthropic", "model": SONNET["id"], "timestamp": 1}
    return {"role": "assistant", "content": list(blocks), "stopReason": stop, **meta, **extra}


def call(call_id: str, name: str = "bash", **arguments) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(call_id: str, *content: dict, is_error: bool = False) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": list(content),
        "isError": is_error,
        "timestamp": 1,
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def user(content) -> dict:
    return {"role": "user", "content": content, "timestamp": 1}


def test_tool_result_of_an_errored_turn_is_not_sent():
    history = [
        user("go"),
        turn(call("t1"), stop="error", errorMessage="boom"),
        tool_result("t1"),
        user("again"),
    ]
    pi = build_anthropic_request(SONNET, {"messages": history}, KEY, repair=False)["messages"]
    assert pi[1] == {"role": "user", "content": [{**synthetic("t1"), "content": "", "is_error": False}]}
    ours = build_anthropic_request(SONNET, {"messages": history}, KEY)["messages"]
    assert ours == [
        {"role": "user", "content": "go"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "again", "cache_control": {"type": "ephemeral"}}],
        },
    ]


def test_unanswered_tool_use_at_the_end_is_answered_and_cached():
    history = [user("list"), turn(text("Listing."), call("t1", command="ls"))]
    pi = build_anthropic_request(SONNET, {"messages": history}, KEY, repair=False)["messages"]
    assert pi[-1]["role"] == "assistant"  # Pi sends a request ending on an unanswered tool_use
    ours = build_anthropic_request(SONNET, {"messages": history}, KEY)["messages"]
    assert ours[-1] == {
        "role": "user",
        "content": [{**synthetic("t1"), "cache_control": {"type": "ephemeral"}}],
    }


# --- what a user would notice --------------------------------------------------------------------------


def test_user_images_are_dropped_for_a_text_only_model_but_tool_result_images_are_kept():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    history = [
        user([text("what is it?"), image]),
        user([image]),
        turn(call("r1", "read", path="a.png")),
        tool_result("r1", image),
    ]
    body = build_anthropic_request(model(input=["text"]), {"messages": history}, KEY)
    assert body["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "what is it?"}]}
    assert body["messages"][1]["role"] == "assistant"  # the image-only user message disappeared
    source = {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert body["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "(see attached image)"},
        {"type": "image", "source": source},
    ]


def test_oauth_token_switches_to_claude_code_mode():
    tools = [
        {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}},
        {"name": "my_tool", "description": "Mine", "parameters": {"type": "object", "properties": {}}},
    ]
    history = [user("hi"), turn(call("t1", "bash")), tool_result("t1", text("ok"))]
    context = {"systemPrompt": "Be brief.", "messages": history, "tools": tools}
    token = "sk-ant-oat01-abc"
    body = build_anthropic_request(SONNET, context, {"apiKey": token})
    assert [block["text"] for block in body["system"]] == [CLAUDE_CODE_IDENTITY, "Be brief."]
    assert all(block["cache_control"] == {"type": "ephemeral"} for block in body["system"])
    assert [tool["name"] for tool in body["tools"]] == ["Read", "my_tool"]
    assert body["messages"][1]["content"][0]["name"] == "Bash"
    assert token not in json.dumps(body)
    assert "system" not in build_anthropic_request(SONNET, {"messages": history}, KEY)


def test_cache_breakpoint_placement():
    body = build_anthropic_request(SONNET, {"messages": [user("hi"), turn(text("hello"), stop="stop")]}, KEY)
    assert "cache_control" not in json.dumps(body["messages"])  # last message is the assistant's
    body = build_anthropic_request(SONNET, {"messages": [user("hi")], "systemPrompt": "S"}, KEY)
    assert body["messages"] == [{"role": "user", "content": [{**text("hi"), "cache_control": {"type": "ephemeral"}}]}]
    body = build_anthropic_request(SONNET, {"messages": [user("hi")], "systemPrompt": "S"}, {"cacheRetention": "none"})
    assert "cache_control" not in json.dumps(body)


def test_pi_cache_retention_env(monkeypatch):
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    context = {"messages": [user("hi")], "systemPrompt": "S"}
    body = build_anthropic_request(SONNET, context, KEY)
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    proxy = model(baseUrl="https://proxy.example/anthropic")
    assert build_anthropic_request(proxy, context, KEY)["system"][0]["cache_control"] == {"type": "ephemeral"}
    explicit = build_anthropic_request(SONNET, context, {**KEY, "cacheRetention": "short"})
    assert explicit["system"][0]["cache_control"] == {"type": "ephemeral"}
    monkeypatch.setenv("PI_CACHE_RETENTION", "LONG")  # only the exact value counts, as in Pi
    assert build_anthropic_request(SONNET, context, KEY)["system"][0]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("changes", "options", "max_tokens", "thinking"),
    [
        ({}, {"reasoning": "medium"}, 40192, {"type": "enabled", "budget_tokens": 8192}),
        ({}, {"reasoning": "xhigh"}, 48384, {"type": "enabled", "budget_tokens": 16384}),
        (
            {},
            {"reasoning": "low", "thinkingBudgets": {"low": 5000}},
            37000,
            {"type": "enabled", "budget_tokens": 5000},
        ),
        ({}, {"reasoning": "minimal", "maxTokens": 2000}, 3024, {"type": "enabled", "budget_tokens": 1024}),
        ({"maxTokens": 4096}, {"reasoning": "high"}, 4096, {"type": "enabled", "budget_tokens": 3072}),
        ({"maxTokens": 1000}, {"reasoning": "high"}, 1000, {"type": "enabled", "budget_tokens": 1024}),
        ({}, {}, 32000, None),
        ({"maxTokens": 8192}, {}, 8192, None),
        ({"reasoning": False, "maxTokens": 8192}, {"reasoning": "medium"}, 8192, None),
    ],
)
def test_max_tokens_and_thinking_budget(changes, options, max_tokens, thinking):
    body = build_anthropic_request(model(**changes), {"messages": [user("q")]}, {**KEY, **options})
    assert body["max_tokens"] == max_tokens
    assert body.get("thinking") == thinking
    assert "output_config" not in body


@pytest.mark.parametrize(
    ("model_id", "level", "effort"),
    [
        ("claude-opus-4-6", "xhigh", "max"),
        ("claude-opus-4.6-20260201", "high", "high"),
        ("claude-sonnet-4-6", "xhigh", "high"),
        ("claude-sonnet-4-6", "minimal", "low"),
        ("claude-sonnet-4.6", "medium", "medium"),
    ],
)
def test_adaptive_thinking_for_4_6_models(model_id, level, effort):
    body = build_anthropic_request(model(id=model_id), {"messages": [user("q")]}, {**KEY, "reasoning": level})
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": effort}
    assert body["max_tokens"] == 32000  # no budget is added for adaptive thinking


def test_temperature_only_without_thinking():
    context = {"messages": [user("q")]}
    assert build_anthropic_request(SONNET, context, {**KEY, "temperature": 0})["temperature"] == 0
    assert "temperature" not in build_anthropic_request(
        SONNET, context, {**KEY, "temperature": 0.5, "reasoning": "low"}
    )
    no_reasoning = model(reasoning=False)
    assert "temperature" not in build_anthropic_request(no_reasoning, context, {"temperature": 1, "reasoning": "low"})


def test_metadata_user_id_and_tool_choice():
    context = {"messages": [user("q")]}
    assert build_anthropic_request(SONNET, context, {"metadata": {"user_id": "u-1", "x": 1}})["metadata"] == {
        "user_id": "u-1"
    }
    assert "metadata" not in build_anthropic_request(SONNET, context, {"metadata": {"user_id": 7}})
    # Pi's simple entry point does not forward toolChoice; the keyword sets it.
    assert "tool_choice" not in build_anthropic_request(SONNET, context, {"toolChoice": "any"})
    assert build_anthropic_request(SONNET, context, tool_choice="any")["tool_choice"] == {"type": "any"}
    forced = {"type": "tool", "name": "read"}
    assert build_anthropic_request(SONNET, context, tool_choice=forced)["tool_choice"] == forced


def test_empty_tool_list_is_sent_and_schema_is_reduced():
    assert build_anthropic_request(SONNET, {"messages": [user("q")], "tools": []})["tools"] == []
    assert "tools" not in build_anthropic_request(SONNET, {"messages": [user("q")]})


def test_thinking_blocks_of_the_same_model():
    blocks = [
        {
            "type": "thinking",
            "thinking": "[Reasoning redacted]",
            "thinkingSignature": "enc",
            "redacted": True,
        },
        {"type": "thinking", "thinking": "signed", "thinkingSignature": "sig"},
        {"type": "thinking", "thinking": "unsigned", "thinkingSignature": "  "},
        text("Answer."),
    ]
    body = build_anthropic_request(SONNET, {"messages": [user("q"), turn(*blocks, stop="stop")]}, KEY)
    assert body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "enc"},
        {"type": "thinking", "thinking": "signed", "signature": "sig"},
        text("unsigned"),
        text("Answer."),
    ]


def test_lone_surrogates_are_removed_but_tool_input_is_left_alone():
    history = [
        user("bad \ud800 text"),
        turn(text("ok \udc00"), call("t1", command="echo \ud83d")),
        tool_result("t1", text("out \ud800")),
    ]
    body = build_anthropic_request(SONNET, {"messages": history, "systemPrompt": "sys \udfff"}, KEY)
    assert body["system"][0]["text"] == "sys "
    assert body["messages"][0]["content"] == "bad  text"
    assert body["messages"][1]["content"][0]["text"] == "ok "
    assert body["messages"][1]["content"][1]["input"] == {"command": "echo \ud83d"}
    assert body["messages"][2]["content"][0]["content"] == "out "


def test_body_does_not_share_state_with_the_history():
    message = UserMessage(content="hi")
    tool_call = ToolCall(id="t1", name="bash", arguments={"nested": {"a": 1}})
    history = [message, turn(tool_call.to_pi_json())]
    body = build_anthropic_request(SONNET, {"messages": history}, KEY, repair=False)
    body["messages"][1]["content"][0]["input"]["nested"]["a"] = 2
    assert history[1]["content"][0]["arguments"] == {"nested": {"a": 1}}


# --- text helpers --------------------------------------------------------------------------------------


def test_normalize_tool_call_id():
    assert normalize_tool_call_id("call_Abc123|fc_0123+/=xyz") == "call_Abc123_fc_0123___xyz"
    assert normalize_tool_call_id("x" * 80) == "x" * 64
    assert normalize_tool_call_id("a\U0001f600b") == "a__b"  # JS replaces per UTF-16 code unit


def test_sanitize_surrogates():
    assert sanitize_surrogates("plain ü 😀") == "plain ü 😀"
    assert sanitize_surrogates("a\ud83db\ude00c") == "abc"
    assert sanitize_surrogates("\ud83d\ude00") == "😀"  # halves of a valid pair are joined, as JS keeps them
    assert json.loads('"\\ud83d\\ude00"') == "😀"


def test_js_blank_rules():
    assert is_blank(" \t\n\u00a0\ufeff\u3000")
    assert not is_blank("\x1c")  # Python whitespace, not JS whitespace
    assert not is_blank("\x85")
    assert is_blank(None) and is_blank("")
    assert js_trim("\ufeff x \u2028") == "x"
