"""openai-completions request bodies: Pi's golden payloads, our documented deviations, user-visible rules.

The conformance test compares every public case with the payload Pi produced. A difference is accepted only
when it is one of the documented deviations *and* the input shows the behaviour that deviation is about: the
checker recomputes what Pi would have sent (the inverse of the deviation) from the case's input.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai.jstext import is_blank, js_json_stringify, sanitize_surrogates
from pi_notebook.ai.providers.openai_compat import resolve_openai_compat
from pi_notebook.ai.providers.openai_completions_convert import (
    ASSISTANT_BRIDGE_TEXT,
    IMAGE_OMITTED_TEXT,
    NO_OUTPUT_TEXT,
    SEE_ATTACHED_IMAGE_TEXT,
    TEXT_BLOCK_SEPARATOR,
    TOOL_IMAGES_TEXT,
    build_openai_completions_request,
    normalize_openai_tool_call_id,
)
from pi_notebook.ai.providers.transform import NO_RESULT_TEXT, transform_messages
from pi_notebook.ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"
CASES = json.loads((FIXTURES / "openai_completions_payload.json").read_text(encoding="utf-8"))
PI_UNSHIFT_ERROR = "textContent.unshift is not a function"


def build(case: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Call the builder the way Pi's entry point was called for this case."""
    raw = case["input"]
    context = {key: raw[key] for key in ("systemPrompt", "messages", "tools") if key in raw}
    return build_openai_completions_request(Model.model_validate(raw["model"]), context, raw["options"], **kwargs)


# --- the checker: Pi's payload = ours with each verified deviation undone -------------------------------


def pi_history(case: dict[str, Any]) -> list[Any]:
    """The messages Pi translates: its pre-pass, without our repairs."""
    model = Model.model_validate(case["input"]["model"])
    return transform_messages(case["input"]["messages"], model, normalize_openai_tool_call_id, repair=False)


def assistant_texts(message: AssistantMessage) -> list[str]:
    return [sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent) and not is_blank(b.text)]


def assistant_thoughts(message: AssistantMessage) -> list[str]:
    return [b.thinking for b in message.content if isinstance(b, ThinkingContent) and not is_blank(b.thinking)]


def pi_joinings(text: str, blocks: set[str]) -> set[str]:
    """Every ``"".join(parts)`` for which ``TEXT_BLOCK_SEPARATOR.join(parts) == text``, parts being text
    blocks of the input: the strings Pi may have sent where we sent ``text`` (inverse of deviation 3)."""

    @cache
    def rest(pos: int) -> frozenset[str]:
        found: set[str] = set()
        for block in blocks:
            end = pos + len(block)
            if not text.startswith(block, pos):
                continue
            if end == len(text):
                found.add(block)
            elif text.startswith(TEXT_BLOCK_SEPARATOR, end):
                found.update(block + tail for tail in rest(end + len(TEXT_BLOCK_SEPARATOR)))
        return frozenset(found)

    return set(rest(0))


def text_of(content: Any) -> str | None:
    """An assistant content as one string: a string, or OpenRouter's one text part carrying a cache mark."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        return content[0]["text"]
    return None


def with_text(content: Any, text: str) -> Any:
    if isinstance(content, str):
        return text
    return [{**content[0], "text": text}]


def undo_deviations(ours: dict[str, Any], expected: dict[str, Any], case: dict[str, Any]) -> tuple[dict, set]:
    """Undo deviations 2 and 3 where the input shows their behaviour; return (Pi's view, deviations used)."""
    history = pi_history(case)
    model = Model.model_validate(case["input"]["model"])
    blocks = {t for m in history if isinstance(m, AssistantMessage) for t in assistant_texts(m)}
    results = iter([m for m in history if isinstance(m, ToolResultMessage)])
    view, used = copy.deepcopy(ours), set()
    assert len(view["messages"]) == len(expected["messages"]), "no deviation adds or removes a message"
    for mine, pis in zip(view["messages"], expected["messages"], strict=True):
        if mine["role"] == "tool":
            result = next(results)
            if mine["content"] != pis["content"] and pis["content"] == SEE_ATTACHED_IMAGE_TEXT:
                # Deviation 2: the result has no text, and its image is not attached (or there is none).
                assert not "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                has_images = any(isinstance(b, ImageContent) for b in result.content)
                assert not (has_images and "image" in model.input), "the image is attached: keep Pi's text"
                assert mine["content"] == (IMAGE_OMITTED_TEXT if has_images else NO_OUTPUT_TEXT)
                mine["content"] = SEE_ATTACHED_IMAGE_TEXT
                used.add("tool result placeholder")
        elif mine["role"] == "assistant" and mine.get("content") != pis.get("content"):
            ours_text, pis_text = text_of(mine.get("content")), text_of(pis.get("content"))
            if ours_text is not None and pis_text is not None and pis_text in pi_joinings(ours_text, blocks):
                mine["content"] = with_text(mine["content"], pis_text)  # deviation 3
                used.add("text block separator")
    return view, used


def check_pi_would_throw(ours: dict[str, Any], case: dict[str, Any]) -> None:
    """Deviation 1: Pi throws because a replayed message has thinking and text under requiresThinkingAsText;
    we send the thinking as a text part before the answer instead."""
    assert case["expected_error"] == PI_UNSHIFT_ERROR
    assert resolve_openai_compat(Model.model_validate(case["input"]["model"])).requires_thinking_as_text
    both = [m for m in pi_history(case) if isinstance(m, AssistantMessage) and assistant_thoughts(m)]
    both = [m for m in both if assistant_texts(m)]
    assert both, "Pi throws only for a message with both thinking and text"
    sent = [
        [part["text"] for part in m["content"]]
        for m in ours["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
    ]
    for message in both:
        thinking = "\n\n".join(assistant_thoughts(message))
        assert [thinking, TEXT_BLOCK_SEPARATOR.join(assistant_texts(message))] in sent


def invalid_tool_messages(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of tool messages an API rejects: not answering a call of the assistant turn they follow, or
    answering a call a second time."""
    invalid, calls, answered = [], set(), set()
    for index, message in enumerate(messages):
        if message["role"] != "tool":
            calls, answered = {call["id"] for call in message.get("tool_calls") or []}, set()
        elif message["tool_call_id"] not in calls - answered:
            invalid.append(index)
        else:
            answered.add(message["tool_call_id"])
    return invalid


def comparable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without what follows from the tool messages around them: the user message carrying their
    images, the bridge turn, and OpenRouter's cache mark (one-text-part lists read as strings, since the
    mark turns a string into such a list)."""
    out = []
    for message in copy.deepcopy(messages):
        content = message.get("content")
        if message == {"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT}:
            continue
        if message["role"] == "user" and isinstance(content, list) and content[0].get("text") == TOOL_IMAGES_TEXT:
            continue
        if isinstance(content, list):
            for part in content:
                part.pop("cache_control", None)
            if len(content) == 1 and content[0]["type"] == "text":
                message["content"] = content[0]["text"]
        out.append(message)
    return out


def check_repair(repaired: dict[str, Any], plain: dict[str, Any]) -> None:
    """``repair=True`` only drops the tool messages an API rejects and answers unanswered calls with
    ``No result provided``; everything else is as with ``repair=False``."""
    msgs = comparable(repaired["messages"])
    plain = {**plain, "messages": comparable(plain["messages"])}
    repaired = {**repaired, "messages": msgs}
    assert invalid_tool_messages(msgs) == []
    for i, message in enumerate(msgs):
        answered = {m["tool_call_id"] for m in msgs[i + 1 :] if m["role"] == "tool"}
        assert {call["id"] for call in message.get("tool_calls") or []} <= answered
    dropped = invalid_tool_messages(plain["messages"])
    kept = [m for i, m in enumerate(plain["messages"]) if i not in dropped]
    added = [m for m in msgs if m not in kept]
    assert all(m["role"] == "tool" and m["content"] == NO_RESULT_TEXT for m in added)
    assert [m for m in msgs if m not in added] == kept
    assert {k: v for k, v in repaired.items() if k != "messages"} == {k: v for k, v in plain.items() if k != "messages"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_matches_pi_except_documented_deviations(case):
    plain = build(case, repair=False)
    if case["expected"] is None:
        check_pi_would_throw(plain, case)
    else:
        view, _ = undo_deviations(plain, case["expected"], case)
        assert view == case["expected"]
    check_repair(build(case), plain)


def test_public_cases_exercise_the_deviations():
    """The checker is not vacuous: the public cases do show deviations 2 and 3."""
    used = set()
    for case in CASES:
        if case["expected"] is not None:
            used |= undo_deviations(build(case, repair=False), case["expected"], case)[1]
    assert used == {"tool result placeholder", "text block separator"}


# --- one test per deviation --------------------------------------------------------------------------------

MODEL = {
    "id": "gpt-4o-mini",
    "name": "GPT-4o mini",
    "api": "openai-completions",
    "provider": "openai",
    "baseUrl": "https://api.openai.com/v1",
    "reasoning": False,
    "input": ["text", "image"],
    "cost": {"input": 0.15, "output": 0.6, "cacheRead": 0.08, "cacheWrite": 0},
    "contextWindow": 128000,
    "maxTokens": 16384,
}
PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def model(**changes: Any) -> Model:
    return Model.model_validate({**MODEL, **changes})


def assistant(content: list[dict], *, who: dict[str, str] | None = None, stop: str = "stop") -> dict[str, Any]:
    who = who or {"api": "openai-completions", "provider": "openai", "model": "gpt-4o-mini"}
    return {"role": "assistant", "content": content, **who, "stopReason": stop, "timestamp": 1}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def result(call_id: str, content: list[dict]) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": content,
        "isError": False,
    }


def call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": "ls"}}


def sent(m: Model, messages: list[dict], **context: Any) -> list[dict[str, Any]]:
    return build_openai_completions_request(m, {"messages": messages, **context})["messages"]


def test_deviation_1_thinking_as_text_with_text_is_sent_not_thrown():
    m = model(id="o4-mini", reasoning=True, compat={"requiresThinkingAsText": True})
    who = {"api": "openai-completions", "provider": "openai", "model": "o4-mini"}
    blocks = [
        {"type": "thinking", "thinking": "First thought.", "thinkingSignature": "reasoning_content"},
        {"type": "thinking", "thinking": "Second thought."},
        {"type": "text", "text": "Answer."},
        {"type": "text", "text": "More."},
    ]
    messages = sent(m, [user("q"), assistant(blocks, who=who), user("next")])
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "First thought.\n\nSecond thought."},
            {"type": "text", "text": "Answer.\n\nMore."},
        ],
    }
    # Thinking alone keeps Pi's shape: one text part, no reasoning field.
    alone = sent(m, [user("q"), assistant(blocks[:1], who=who)])
    assert alone[1] == {"role": "assistant", "content": [{"type": "text", "text": "First thought."}]}


def test_deviation_2_tool_result_placeholder_only_promises_real_images():
    history = [user("q"), assistant([call("c1"), call("c2"), call("c3")], stop="toolUse")]
    history += [result("c1", []), result("c2", [PNG]), result("c3", [{"type": "text", "text": ""}])]
    vision = sent(model(), history)
    assert [m["content"] for m in vision[2:5]] == [NO_OUTPUT_TEXT, SEE_ATTACHED_IMAGE_TEXT, NO_OUTPUT_TEXT]
    assert vision[5] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached image(s) from tool result:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    }
    text_only = sent(model(input=["text"]), history)
    assert [m["content"] for m in text_only[2:]] == [NO_OUTPUT_TEXT, IMAGE_OMITTED_TEXT, NO_OUTPUT_TEXT]


def test_deviation_3_text_blocks_and_foreign_thinking_stay_apart():
    claude = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-20250514"}
    blocks = [
        {"type": "thinking", "thinking": "Claude reasoning.", "thinkingSignature": "sig"},
        {"type": "text", "text": "Claude answer."},
    ]
    messages = sent(model(), [user("q"), assistant(blocks, who=claude), user("again")])
    assert messages[1] == {"role": "assistant", "content": "Claude reasoning.\n\nClaude answer."}


def test_repair_drops_orphan_results_and_answers_trailing_calls():
    history = [
        user("q"),
        assistant([call("lost")], stop="aborted"),
        result("lost", [{"type": "text", "text": "x"}]),
    ]
    history += [user("again"), assistant([call("open")], stop="toolUse")]
    repaired = sent(model(), history)
    assert [m["role"] for m in repaired] == ["user", "user", "assistant", "tool"]
    assert repaired[3] == {"role": "tool", "content": NO_RESULT_TEXT, "tool_call_id": "open"}
    pi = build_openai_completions_request(model(), {"messages": history}, repair=False)["messages"]
    assert [m["role"] for m in pi] == ["user", "tool", "user", "assistant"]


# --- behaviours a user notices -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "role"),
    [
        ({}, "system"),
        ({"id": "o4-mini", "reasoning": True}, "developer"),
        ({"id": "o4-mini", "reasoning": True, "compat": {"supportsDeveloperRole": False}}, "system"),
        ({"provider": "xai", "baseUrl": "https://api.x.ai/v1", "reasoning": True}, "system"),
    ],
)
def test_system_prompt_role(changes, role):
    messages = sent(model(**changes), [user("hi")], systemPrompt="Be brief.")
    assert messages[0] == {"role": role, "content": "Be brief."}


def test_images_dropped_for_text_only_models():
    history = [user([{"type": "text", "text": "look"}, PNG]), user([PNG]), user("after")]
    assert sent(model(input=["text"]), history) == [
        {"role": "user", "content": [{"type": "text", "text": "look"}]},
        {"role": "user", "content": "after"},
    ]
    assert len(sent(model(), history)[1]["content"]) == 1


def test_tools_list_follows_the_history():
    with_calls = {"messages": [user("q"), assistant([call("c1")], stop="toolUse")]}
    assert build_openai_completions_request(model(), with_calls)["tools"] == []
    assert "tools" not in build_openai_completions_request(model(), {"messages": [user("q")]})
    given = {"messages": [user("q")], "tools": [{"name": "t", "description": "d", "parameters": {}}]}
    tool = build_openai_completions_request(model(), given)["tools"][0]
    assert tool == {
        "type": "function",
        "function": {"name": "t", "description": "d", "parameters": {}, "strict": False},
    }
    no_strict = model(compat={"supportsStrictMode": False})
    assert "strict" not in build_openai_completions_request(no_strict, given)["tools"][0]["function"]


def test_usage_is_asked_for_unless_the_server_cannot_stream_it():
    body = build_openai_completions_request(model(), {"messages": [user("q")]})
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    off = model(compat={"supportsUsageInStreaming": False})
    assert "stream_options" not in build_openai_completions_request(off, {"messages": [user("q")]})


def test_api_key_never_in_the_body():
    body = build_openai_completions_request(model(), {"messages": [user("q")]}, {"apiKey": "sk-secret-4242"})
    assert "sk-secret-4242" not in json.dumps(body)


def test_options_limits_and_inputs_untouched():
    context = {"messages": [user("q"), assistant([{"type": "text", "text": "a"}])], "tools": []}
    before = copy.deepcopy(context)
    body = build_openai_completions_request(model(), context, {"maxTokens": 99, "temperature": 0})
    assert (body["max_completion_tokens"], body["temperature"], body["tools"]) == (99, 0, [])
    assert context == before
    chutes = model(baseUrl="https://llm.chutes.ai/v1")
    body = build_openai_completions_request(chutes, {"messages": [user("q")]})
    assert (body["max_tokens"], "store" in body) == (16384, False)


@pytest.mark.parametrize(
    ("changes", "reasoning", "expected"),
    [
        ({"id": "o4-mini"}, "xhigh", {"reasoning_effort": "high"}),
        ({"id": "gpt-5.2"}, "xhigh", {"reasoning_effort": "xhigh"}),
        ({"id": "o4-mini"}, None, {}),
        ({"provider": "zai", "baseUrl": "https://api.z.ai/api/paas/v4"}, "low", {"enable_thinking": True}),
        ({"compat": {"thinkingFormat": "qwen"}}, None, {"enable_thinking": False}),
        (
            {"compat": {"thinkingFormat": "qwen-chat-template"}},
            "low",
            {"chat_template_kwargs": {"enable_thinking": True}},
        ),
        ({"compat": {"thinkingFormat": "openrouter"}}, None, {"reasoning": {"effort": "none"}}),
        ({"provider": "groq", "id": "qwen/qwen3-32b"}, "low", {"reasoning_effort": "default"}),
        ({"compat": {"reasoning_effort_map": {"low": "minimal"}}}, "low", {"reasoning_effort": "minimal"}),
    ],
)
def test_thinking_switches(changes, reasoning, expected):
    body = build_openai_completions_request(
        model(reasoning=True, **changes), {"messages": []}, {"reasoning": reasoning}
    )
    keys = ("reasoning_effort", "enable_thinking", "chat_template_kwargs", "reasoning")
    assert {k: body[k] for k in keys if k in body} == expected


def test_gateway_routing_from_compat():
    routing = {"only": ["anthropic"], "order": []}
    openrouter = model(baseUrl="https://openrouter.ai/api/v1", compat={"openRouterRouting": routing})
    assert build_openai_completions_request(openrouter, {"messages": []})["provider"] == routing
    vercel = model(baseUrl="https://ai-gateway.vercel.sh/v1", compat={"vercelGatewayRouting": routing})
    body = build_openai_completions_request(vercel, {"messages": []})
    assert body["providerOptions"] == {"gateway": {"only": ["anthropic"], "order": []}}


def test_tool_call_ids_from_other_apis():
    m = model()
    assert normalize_openai_tool_call_id("call_A+b|fc_" + "x" * 400, m) == "call_A_b"
    assert normalize_openai_tool_call_id("call_😀|item", m) == "call___"  # JS sees two code units
    assert normalize_openai_tool_call_id("t" * 50, m) == "t" * 40
    assert normalize_openai_tool_call_id("t" * 50, model(provider="groq")) == "t" * 50


def test_tool_call_arguments_are_javascript_json():
    args = {"b": 1.0, "2": [1e21, 1e-7, 0.5, None], "1": 'é\n"\ud800😀', "a": {"x": True}}
    assert js_json_stringify(args) == '{"1":"é\\n\\"\\ud800😀","2":[1e+21,1e-7,0.5,null],"b":1,"a":{"x":true}}'
