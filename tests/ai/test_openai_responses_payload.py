"""openai-responses request bodies: Pi's golden payloads, our documented deviations, user-visible rules.

The conformance test compares every public case with the payload Pi produced. A difference is accepted only
when it is one of the documented deviations *and* the input shows the behaviour that deviation is about: the
checker recomputes what Pi would have sent (the inverse of the deviation) from the case's input.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai import build_request, get_model
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.openai_responses_convert import (
    IMAGE_OMITTED_TEXT,
    JUICE_TEXT,
    NO_OUTPUT_TEXT,
    SEE_ATTACHED_IMAGE_TEXT,
    build_openai_responses_request,
    encode_text_signature,
    normalize_responses_tool_call_id,
    parse_text_signature,
    short_hash,
)
from pi_notebook.ai.providers.transform import NO_RESULT_TEXT, transform_messages
from pi_notebook.ai.types import ImageContent, Model, TextContent, ToolResultMessage

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"
CASES = json.loads((FIXTURES / "openai_responses_payload.json").read_text(encoding="utf-8"))
JUICE_ITEM = {"role": "developer", "content": [{"type": "input_text", "text": JUICE_TEXT}]}


def build(case: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Call the builder the way Pi's entry point was called for this case."""
    raw = case["input"]
    context = {key: raw[key] for key in ("systemPrompt", "messages", "tools") if key in raw}
    return build_openai_responses_request(Model.model_validate(raw["model"]), context, raw["options"], **kwargs)


# --- the checker: Pi's payload = ours with each verified deviation undone -------------------------------


def pi_tool_results(case: dict[str, Any]) -> list[ToolResultMessage]:
    """The tool results Pi translates, in order: its pre-pass, without our repairs."""
    model = Model.model_validate(case["input"]["model"])
    history = transform_messages(case["input"]["messages"], model, normalize_responses_tool_call_id, repair=False)
    return [m for m in history if isinstance(m, ToolResultMessage)]


def undo_deviations(ours: dict[str, Any], expected: dict[str, Any], case: dict[str, Any]) -> tuple[dict, set]:
    """Undo deviations 1-3 where the input shows their behaviour; return (Pi's view, deviations used)."""
    model = Model.model_validate(case["input"]["model"])
    options = StreamOptions.coerce(case["input"]["options"])
    view, used = copy.deepcopy(ours), set()
    items = view["input"]

    # 1: a GPT-5 model named "GPT-5…", reasoning, no level asked: we send the juice item, Pi does not.
    if items and items[-1] == JUICE_ITEM and JUICE_ITEM not in expected["input"]:
        assert model.reasoning and options.reasoning is None
        assert model.name.lower().startswith("gpt-5") and not model.name.startswith("gpt-5")
        items.pop()
        used.add("juice")

    assert len(items) == len(expected["input"]), "no other deviation adds or removes an item"
    pi_ids = [item.get("id") for item in expected["input"] if item.get("type") == "message"]
    results = iter(pi_tool_results(case))
    for mine, pis in zip(items, expected["input"], strict=True):
        if mine.get("type") == "message" and mine["id"] != pis["id"]:
            # 2: Pi repeats an id; ours is that id with the first free suffix.
            assert pi_ids.count(pis["id"]) > 1 and re.fullmatch(re.escape(pis["id"]) + r"_\d+", mine["id"])
            mine["id"] = pis["id"]
            used.add("unique ids")
        elif mine.get("type") == "function_call_output":
            result = next(results)
            if mine["output"] != pis["output"] and pis["output"] == SEE_ATTACHED_IMAGE_TEXT:
                # 3: the result has no text, and no image goes with it.
                assert not "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                has_images = any(isinstance(b, ImageContent) for b in result.content)
                assert not (has_images and "image" in model.input), "the image is attached: keep Pi's text"
                assert mine["output"] == (IMAGE_OMITTED_TEXT if has_images else NO_OUTPUT_TEXT)
                mine["output"] = SEE_ATTACHED_IMAGE_TEXT
                used.add("tool result placeholder")
    assert len({i["id"] for i in ours["input"] if i.get("type") == "message"}) == len(pi_ids)  # all unique
    return view, used


def invalid_outputs(items: list[dict[str, Any]]) -> list[int]:
    """Indexes of ``function_call_output`` items the API rejects: no earlier call, or a call answered twice."""
    invalid, calls, answered = [], set(), set()
    for index, item in enumerate(items):
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        elif item.get("type") == "function_call_output":
            if item["call_id"] not in calls - answered:
                invalid.append(index)
            answered.add(item["call_id"])
    return invalid


def without_fallback_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items without the ``msg_<index>`` ids, which shift when the repair drops or adds a message."""
    out = copy.deepcopy(items)
    for item in out:
        if item.get("type") == "message" and re.fullmatch(r"msg_\d+(_\d+)?", item["id"]):
            del item["id"]
    return out


def check_repair(repaired: dict[str, Any], plain: dict[str, Any]) -> None:
    """``repair=True`` only drops the outputs the API rejects and answers unanswered calls with
    ``No result provided``; everything else is as with ``repair=False``."""
    items = without_fallback_ids(repaired["input"])
    assert invalid_outputs(items) == []
    calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
    assert calls <= {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    dropped = invalid_outputs(plain["input"])
    kept = [item for i, item in enumerate(without_fallback_ids(plain["input"])) if i not in dropped]
    added = [item for item in items if item not in kept]
    assert all(i["type"] == "function_call_output" and i["output"] == NO_RESULT_TEXT for i in added)
    assert [item for item in items if item not in added] == kept
    assert {k: v for k, v in repaired.items() if k != "input"} == {k: v for k, v in plain.items() if k != "input"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_matches_pi_except_documented_deviations(case):
    plain = build(case, repair=False)
    view, _ = undo_deviations(plain, case["expected"], case)
    assert view == case["expected"]
    check_repair(build(case), plain)


def test_public_cases_exercise_the_deviations():
    """The checker is not vacuous: the public cases show deviations 1, 2 and 3."""
    used = set()
    for case in CASES:
        used |= undo_deviations(build(case, repair=False), case["expected"], case)[1]
    assert used == {"juice", "unique ids", "tool result placeholder"}


def test_build_request_dispatches_here_for_openai_models():
    model = get_model("openai/gpt-5-mini")
    context = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    assert model.api == "openai-responses"
    assert build_request(model, context, reasoning="low") == build_openai_responses_request(
        model, context, {"reasoning": "low"}
    )


# --- one test per deviation --------------------------------------------------------------------------------

MODEL = {
    "id": "gpt-5",
    "name": "GPT-5",
    "api": "openai-responses",
    "provider": "openai",
    "baseUrl": "https://api.openai.com/v1",
    "reasoning": True,
    "input": ["text", "image"],
    "cost": {"input": 1.25, "output": 10, "cacheRead": 0.125, "cacheWrite": 0},
    "contextWindow": 400000,
    "maxTokens": 128000,
}
SAME = {"api": "openai-responses", "provider": "openai", "model": "gpt-5"}
CLAUDE = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-20250514"}
PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
REASONING_ITEM = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Think."}],
    "encrypted_content": "gAAAAAB=",
}


def model(**changes: Any) -> Model:
    return Model.model_validate({**MODEL, **changes})


def assistant(content: list[dict], *, who: dict[str, str] | None = None, stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": content, **(who or SAME), "stopReason": stop, "timestamp": 1}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def text(value: str, signature: str | None = None) -> dict[str, Any]:
    return {"type": "text", "text": value} | ({"textSignature": signature} if signature else {})


def call(call_id: str, name: str = "bash") -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"command": "ls"}}


def result(call_id: str, content: list[dict]) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": content, "isError": False}


def sent(m: Model, messages: list[dict], options: dict | None = None, **context: Any) -> list[dict[str, Any]]:
    """The ``input`` items, without the juice item the test model (GPT-5, no reasoning level) ends with."""
    items = build_openai_responses_request(m, {"messages": messages, **context}, options)["input"]
    return items[:-1] if items and items[-1] == JUICE_ITEM else items


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items if item.get("type") == "message"]


@pytest.mark.parametrize(
    ("changes", "options", "juice"),
    [
        ({}, {}, True),  # "GPT-5": Pi's case-sensitive check misses it
        ({"name": "GPT-5.2 Codex", "id": "gpt-5.2-codex"}, {}, True),
        ({"name": "gpt-5"}, {}, True),  # the only name Pi's check catches
        ({}, {"reasoning": "minimal"}, False),  # a level asked for: reasoning params instead
        ({}, {"reasoningSummary": "concise"}, False),
        ({"name": "o4-mini", "id": "o4-mini"}, {}, False),
        ({"name": "GPT-5 Chat", "id": "gpt-5-chat-latest", "reasoning": False}, {}, False),
    ],
)
def test_deviation_1_juice_for_every_gpt5_name(changes, options, juice):
    body = build_openai_responses_request(model(**changes), {"messages": [user("hi")]}, options)
    assert (body["input"][-1] == JUICE_ITEM) is juice
    assert ("reasoning" in body) is bool(options)


def test_deviation_2_item_ids_are_unique():
    # Several unsigned text blocks of one message, as after another model's thinking turned into text.
    claude = assistant([{"type": "thinking", "thinking": "Hmm.", "thinkingSignature": "sig"}, text("A.")], who=CLAUDE)
    assert ids(sent(model(), [user("q"), claude, user("q2")])) == ["msg_1", "msg_1_1"]
    # A stored id equal to a later fallback (OpenAI's own ids are msg_<n> on some gateways): the stored one stays.
    stored = assistant([text("old", encode_text_signature("msg_3"))])
    history = [user("q"), stored, user("q2"), assistant([text("a")]), user("q3")]
    assert ids(sent(model(), history)) == ["msg_3", "msg_3_1"]
    # The same stored message twice (a history pasted together): the second copy gets a new id.
    assert ids(sent(model(), [user("q"), stored, stored])) == ["msg_3", "msg_3_1"]
    # A fallback never takes a reasoning or function-call item's id either.
    clash = assistant(
        [
            {"type": "thinking", "thinking": "", "thinkingSignature": json.dumps({**REASONING_ITEM, "id": "msg_1"})},
            text("x"),
        ]
    )
    assert ids(sent(model(), [user("q"), clash])) == ["msg_1_1"]


def test_deviation_3_tool_result_placeholder_only_promises_real_images():
    history = [user("q"), assistant([call("c1|fc_1"), call("c2|fc_2"), call("c3|fc_3")], stop="toolUse")]
    history += [result("c1|fc_1", []), result("c2|fc_2", [PNG]), result("c3|fc_3", [text("")])]
    vision = [i["output"] for i in sent(model(), history)[-3:]]
    image = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    assert vision == [NO_OUTPUT_TEXT, [image], NO_OUTPUT_TEXT]
    text_only = [i["output"] for i in sent(model(input=["text"]), history)[-3:]]
    assert text_only == [NO_OUTPUT_TEXT, IMAGE_OMITTED_TEXT, NO_OUTPUT_TEXT]


def test_deviation_4_a_thinking_signature_that_is_not_a_reasoning_item_is_dropped_not_thrown():
    # Pi: JSON.parse throws ("Unexpected token 'r', "rs_plain_id_not_json" is not valid JSON") on every turn.
    blocks = [
        {"type": "thinking", "thinking": "a", "thinkingSignature": "rs_plain_id_not_json"},
        {"type": "thinking", "thinking": "b", "thinkingSignature": "[1, 2]"},
        {"type": "thinking", "thinking": "c", "thinkingSignature": '{"v": NaN}'},  # JSON.parse rejects NaN
        {"type": "thinking", "thinking": "", "thinkingSignature": json.dumps(REASONING_ITEM)},
        text("answer"),
    ]
    items = sent(model(), [user("q"), assistant(blocks), user("next")])
    assert items[1] == REASONING_ITEM  # a real item goes back verbatim, even with empty thinking text
    assert [i.get("type", i.get("role")) for i in items] == ["user", "reasoning", "message", "user"]


def test_repair_drops_outputs_of_dropped_turns_and_answers_trailing_calls():
    history = [
        user("q"),
        assistant([call("lost|fc_lost")], stop="aborted"),
        result("lost|fc_lost", [text("x")]),
        user("again"),
        assistant([call("open|fc_open")], stop="toolUse"),
    ]
    repaired = sent(model(), history, {"reasoning": "low"})
    assert [i.get("type", i.get("role")) for i in repaired] == ["user", "user", "function_call", "function_call_output"]
    assert repaired[3] == {"type": "function_call_output", "call_id": "open", "output": NO_RESULT_TEXT}
    pi = build_openai_responses_request(model(), {"messages": history}, {"reasoning": "low"}, repair=False)["input"]
    assert [i.get("type", i.get("role")) for i in pi] == ["user", "function_call_output", "user", "function_call"]


# --- behaviours a user notices -----------------------------------------------------------------------------


def test_system_prompt_role_and_blank_prompt():
    assert sent(model(), [], systemPrompt="Be brief.")[0] == {"role": "developer", "content": "Be brief."}
    assert sent(model(reasoning=False), [], systemPrompt="Be brief.")[0] == {"role": "system", "content": "Be brief."}
    assert sent(model(reasoning=False), [], systemPrompt="") == []


@pytest.mark.parametrize(
    ("changes", "reasoning", "effort"),
    [
        ({"id": "o4-mini"}, "xhigh", "high"),
        ({"id": "gpt-5.4-mini"}, "xhigh", "xhigh"),
        ({"id": "o4-mini"}, "minimal", "minimal"),  # not clamped for o-series either
        ({}, "medium", "medium"),
    ],
)
def test_reasoning_effort(changes, reasoning, effort):
    body = build_openai_responses_request(model(**changes), {"messages": []}, {"reasoning": reasoning})
    assert body["reasoning"] == {"effort": effort, "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_options_of_pis_full_entry_point():
    body = build_openai_responses_request(
        model(), {"messages": []}, {"reasoningSummary": "detailed", "serviceTier": "flex"}
    )
    assert body["reasoning"] == {"effort": "medium", "summary": "detailed"} and body["service_tier"] == "flex"


@pytest.mark.parametrize(
    ("base_url", "retention", "env", "expected"),
    [
        ("https://api.openai.com/v1", "long", None, {"prompt_cache_key": "s1", "prompt_cache_retention": "24h"}),
        ("https://api.openai.com/v1", None, "long", {"prompt_cache_key": "s1", "prompt_cache_retention": "24h"}),
        ("https://api.openai.com/v1", "short", "long", {"prompt_cache_key": "s1"}),
        ("https://proxy.example.com/v1", "long", None, {"prompt_cache_key": "s1"}),
        ("https://api.openai.com/v1", "none", None, {}),
    ],
)
def test_prompt_cache(monkeypatch, base_url, retention, env, expected):
    if env:
        monkeypatch.setenv("PI_CACHE_RETENTION", env)
    else:
        monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    options = {"sessionId": "s1", "cacheRetention": retention}
    body = build_openai_responses_request(model(baseUrl=base_url), {"messages": []}, options)
    assert {k: body[k] for k in ("prompt_cache_key", "prompt_cache_retention") if k in body} == expected


def test_tool_call_ids_of_other_models():
    m = model()
    assert normalize_responses_tool_call_id("call_ab+c/d=|item+/x==", m) == "call_ab_c_d|fc_item__x"
    assert normalize_responses_tool_call_id("call_1|fcabc", m) == "call_1|fcabc"  # Pi checks "fc", not "fc_"
    assert normalize_responses_tool_call_id("a|b|c", m) == "a|fc_b"  # like JS destructuring of split()
    assert normalize_responses_tool_call_id("c😀|i", m) == "c|fc_i"  # two code units, then trailing _ cut
    long = normalize_responses_tool_call_id("c" * 70 + "|" + "f" * 70, m)
    assert long == "c" * 64 + "|fc_" + "f" * 61
    assert normalize_responses_tool_call_id("toolu_01A", m) == "toolu_01A"
    assert normalize_responses_tool_call_id("call+x|item+y", model(provider="github-copilot")) == "call+x|item+y"
    assert normalize_responses_tool_call_id("call+x|item+y", model(provider="opencode")) == "call_x|fc_item_y"


def test_function_call_ids_by_origin():
    history = [user("q"), assistant([call("c1|fc_1"), call("c2|rs_2")], stop="toolUse")]
    history += [result("c1|fc_1", [text("a")]), result("c2|rs_2", [text("b")])]
    same = sent(model(), history)
    assert [(i.get("id"), i["call_id"]) for i in same[1:3]] == [("fc_1", "c1"), ("rs_2", "c2")]
    other = sent(model(id="gpt-5.1"), history)  # same provider and api, another model: fc_ ids left out
    # The pre-pass normalizes first (rs_2 → fc_rs_2), so both lose their id.
    assert [(i.get("id"), i["call_id"]) for i in other[1:3]] == [(None, "c1"), (None, "c2")]
    assert [i["call_id"] for i in other[3:5]] == ["c1", "c2"]


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        (None, None),
        ("", None),
        ('{"v":1,"id":"msg_a","phase":"final_answer"}', ("msg_a", "final_answer")),
        ('{"v":1,"id":"msg_a","phase":"thinking"}', ("msg_a", None)),
        ('{"v":true,"id":"msg_a"}', ('{"v":true,"id":"msg_a"}', None)),  # true is not 1 in JavaScript
        ('{"v":1.0,"id":"msg_a"}', ("msg_a", None)),
        ('{"broken', ('{"broken', None)),  # Pi keeps a malformed JSON string as the id itself
        ("msg_legacy", ("msg_legacy", None)),
    ],
)
def test_text_signatures(signature, expected):
    assert parse_text_signature(signature) == expected


def test_long_item_ids_are_hashed_as_pi_does():
    # Vectors computed with Pi's shortHash under Node.
    assert short_hash("") == "k4n83c7h0j2b"
    assert short_hash("a") == "m8735310ae7sx"
    assert short_hash("é😀\ud800z") == "1xrgit9xzib6p"
    long_id = "msg_" + "x" * 70
    assert short_hash(long_id) == "1f43gnm1wcb1pr"
    items = sent(model(), [user("q"), assistant([text("a", long_id)])])
    assert items[1]["id"] == "msg_1f43gnm1wcb1pr"
    exact = "msg_" + "y" * 60  # 64 characters: kept
    assert sent(model(), [user("q"), assistant([text("a", exact)])])[1]["id"] == exact


def test_surrogates_are_removed_except_from_arguments():
    lone = "\ud800"
    history = [user(f"u{lone}"), assistant([text(f"a{lone}"), {**call("c|fc"), "arguments": {"x": lone}}])]
    history.append(result("c|fc", [text(f"r{lone}")]))
    items = sent(model(), history, systemPrompt=f"s{lone}")
    assert items[0]["content"] == "s" and items[1]["content"][0]["text"] == "u"
    assert items[2]["content"][0]["text"] == "a" and items[4]["output"] == "r"
    assert items[3]["arguments"] == '{"x":"\\ud800"}'


def test_user_images_and_tool_result_images():
    history = [user([text("look"), PNG]), user([PNG])]
    history += [assistant([call("c|fc")], stop="toolUse"), result("c|fc", [text("shot"), PNG])]
    items = sent(model(), history)
    image = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    assert items[0]["content"] == [{"type": "input_text", "text": "look"}, image]
    assert items[1]["content"] == [image]
    assert items[3]["output"] == [{"type": "input_text", "text": "shot"}, image]
    blind = sent(model(input=["text"]), history)
    assert [i.get("type", i.get("role")) for i in blind] == ["user", "function_call", "function_call_output"]
    assert blind[2]["output"] == "shot"


def test_limits_tools_and_inputs_untouched():
    context = {"messages": [user("q"), assistant([text("a")])], "tools": []}
    before = copy.deepcopy(context)
    body = build_openai_responses_request(model(), context, {"maxTokens": 99, "temperature": 0})
    assert (body["max_output_tokens"], body["temperature"], body["tools"]) == (99, 0, [])
    assert context == before
    assert build_openai_responses_request(model(maxTokens=8000), {"messages": []})["max_output_tokens"] == 8000
    tool = {"name": "t", "description": "", "parameters": {"type": "object"}}
    body = build_openai_responses_request(model(), {"messages": [], "tools": [tool]})
    assert body["tools"] == [
        {"type": "function", "name": "t", "description": "", "parameters": {"type": "object"}, "strict": False}
    ]
    assert "tools" not in build_openai_responses_request(model(), {"messages": [user("q")]})


def test_api_key_never_in_the_body():
    body = build_openai_responses_request(model(), {"messages": [user("q")]}, {"apiKey": "sk-secret-4242"})
    assert "sk-secret-4242" not in json.dumps(body)
