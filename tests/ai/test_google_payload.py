"""google-generative-ai request params: Pi's golden payloads, our documented deviations, user-visible rules.

The conformance test compares every public case with the params Pi handed to ``@google/genai``. A difference is
accepted only when it is one of the deviations documented in ``pi_notebook/ai/providers/google_convert.py`` *and*
the case's input shows what that deviation is about: the checker recomputes, from the input, both what we must
send and what Pi sent instead. ``repair=True`` (the default) is checked separately against ``repair=False``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.anthropic_convert import normalize_tool_call_id
from pi_notebook.ai.providers.google_convert import (
    IMAGE_OMITTED_TEXT,
    MIN_ANSWER_TOKENS,
    SEE_ATTACHED_IMAGE_TEXT,
    SKIP_THOUGHT_SIGNATURE,
    TOOL_RESULT_IMAGE_TEXT,
    build_google_request,
    disabled_thinking_config,
    is_valid_thought_signature,
    requires_tool_call_id,
    thinking_budget,
)
from pi_notebook.ai.providers.transform import NO_RESULT_TEXT, transform_messages
from pi_notebook.ai.request import build_request
from pi_notebook.ai.types import ImageContent, Model, TextContent, ToolResultMessage

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"
CASES = json.loads((FIXTURES / "google_payload.json").read_text(encoding="utf-8"))


def build(case: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Call the builder the way Pi's entry point was called for this case."""
    raw = case["input"]
    context = {key: raw[key] for key in ("systemPrompt", "messages", "tools") if key in raw}
    return build_google_request(raw["model"], context, raw["options"], **kwargs)


# --- the checker: Pi's payload = ours with each verified deviation undone -------------------------------


def is_fr_turn(turn: dict[str, Any]) -> bool:
    return turn["role"] == "user" and any("functionResponse" in part for part in turn["parts"])


def is_image_turn(turn: dict[str, Any]) -> bool:
    return turn["role"] == "user" and turn["parts"][0].get("text") == TOOL_RESULT_IMAGE_TEXT


def undo_config(config: dict[str, Any], pi: dict[str, Any], case: dict[str, Any], used: set[str]) -> None:
    """Deviations 1–3 (thinking): check ours against the input, then put Pi's values back."""
    model = Model.model_validate(case["input"]["model"])
    opts = StreamOptions.coerce(case["input"]["options"])
    base = opts.max_tokens or min(model.max_tokens, 32000)  # Pi's maxOutputTokens, always
    assert pi["maxOutputTokens"] == base
    ours = config.get("thinkingConfig")
    if ours is None or (ours == pi.get("thinkingConfig") and config["maxOutputTokens"] == base):
        return
    if "thinkingConfig" not in pi:
        # Deviation 1: no reasoning asked, Pi sends nothing; we turn thinking off (or as low as it goes).
        assert not opts.reasoning and model.reasoning
        assert ours == disabled_thinking_config(model.id)
        requested = ours.get("thinkingBudget", 0)
        del config["thinkingConfig"]
        used.add("thinking off")
    else:
        pi_budget = pi["thinkingConfig"]["thinkingBudget"]
        effort = "high" if opts.reasoning == "xhigh" else opts.reasoning
        requested = pi_budget
        if "2.5-flash-lite" in model.id and effort == "minimal" and (opts.thinking_budgets or {}).get(effort) is None:
            assert pi_budget == 128
            requested = 512  # deviation 3
            used.add("flash-lite minimum")
        expected_max = min(base + requested, model.max_tokens) if requested > 0 else base
        expected_budget = requested if expected_max > requested else max(0, expected_max - MIN_ANSWER_TOKENS)
        assert ours == {**pi["thinkingConfig"], "thinkingBudget": expected_budget}
        ours["thinkingBudget"] = pi_budget
    if requested > 0:
        # Deviation 2: a fixed budget is added to the output limit.
        assert config["maxOutputTokens"] == min(base + requested, model.max_tokens)
        config["maxOutputTokens"] = base
        used.add("budget fits the output limit")


def undo_contents(contents: list[dict[str, Any]], case: dict[str, Any], used: set[str]) -> list[dict[str, Any]]:
    """Deviations 4 and 5 (tool results): check ours against the input, then rebuild Pi's turns."""
    model = Model.model_validate(case["input"]["model"])
    normalize = normalize_tool_call_id if requires_tool_call_id(model.id) else None
    history = transform_messages(case["input"]["messages"], model, normalize, repair=False)
    results = iter([m for m in history if isinstance(m, ToolResultMessage)])
    sees_images = "image" in model.input
    out: list[dict[str, Any]] = []
    pending_images = [t for t in contents if is_image_turn(t)]
    for turn in contents:
        if is_image_turn(turn):
            continue  # put back below, after the response it belongs to
        if not is_fr_turn(turn):
            out.append(turn)
            continue
        current: list[dict[str, Any]] = []
        for part in turn["parts"]:
            result = next(results)
            response = part["functionResponse"]["response"]
            images = [b for b in result.content if isinstance(b, ImageContent)]
            has_text = any(isinstance(b, TextContent) and b.text for b in result.content)
            if IMAGE_OMITTED_TEXT in response.values():
                # Deviation 5: an image-only result on a text-only model; Pi sends "".
                assert images and not has_text and not sees_images
                key = next(iter(response))
                response[key] = ""
                used.add("omitted image named")
            current.append(part)
            if images and sees_images and "gemini-3" not in model.id:
                # Pi puts this result's image turn right here, splitting the responses (deviation 4).
                image_turn = pending_images.pop(0)
                assert len(image_turn["parts"]) == len(images) + 1
                if len(turn["parts"]) > 1:
                    used.add("image turns after the responses")
                out.append({"role": "user", "parts": current})
                out.append(image_turn)
                current = []
        if current:
            out.append({"role": "user", "parts": current})
    assert pending_images == [] and next(results, None) is None
    return out


def undo_deviations(ours: dict[str, Any], case: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    view, used = copy.deepcopy(ours), set()
    undo_config(view["config"], case["expected"]["config"], case, used)
    view["contents"] = undo_contents(view["contents"], case, used)
    return view, used


def check_repair(repaired: dict[str, Any], plain: dict[str, Any]) -> None:
    """``repair=True`` only drops function responses that answer no call of the model turn before them and
    answers trailing calls with ``No result provided``; every other turn and the config are as without it."""
    turns = [t for t in repaired["contents"] if not is_image_turn(t)]
    for index, turn in enumerate(turns):
        calls = [p["functionCall"]["name"] for p in turn["parts"] if "functionCall" in p]
        if calls:
            after = turns[index + 1] if index + 1 < len(turns) else None
            assert after is not None and is_fr_turn(after), "every call is answered"
            assert [p["functionResponse"]["name"] for p in after["parts"]] == calls
        if is_fr_turn(turn):
            before = turns[index - 1] if index else None
            assert before is not None and before["role"] == "model", "no orphan responses"

    def without_responses(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [t for t in contents if not is_fr_turn(t)]

    def responses(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [p for t in contents if is_fr_turn(t) for p in t["parts"]]

    assert without_responses(repaired["contents"]) == without_responses(plain["contents"])
    for part in responses(repaired["contents"]):
        if part not in responses(plain["contents"]):
            assert part["functionResponse"]["response"] == {"error": NO_RESULT_TEXT}
    assert repaired["config"] == plain["config"] and repaired["model"] == plain["model"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES])
def test_matches_pi_except_documented_deviations(case):
    plain = build(case, repair=False)
    view, _ = undo_deviations(plain, case)
    assert view == case["expected"]
    check_repair(build(case), plain)


def test_public_cases_exercise_the_deviations():
    """The checker is not vacuous: the public cases show deviations 1 and 2 (the others have their own tests)."""
    used: set[str] = set()
    for case in CASES:
        used |= undo_deviations(build(case, repair=False), case)[1]
    assert used == {"thinking off", "budget fits the output limit"}


def test_without_deviations_contents_and_levels_match_pi_exactly():
    """Cases that show none of the deviations match Pi byte for byte (Gemini 3 levels, dynamic budgets, the
    opencode variant, nested tool-result images)."""
    exact = [c["name"] for c in CASES if build(c, repair=False) == c["expected"]]
    assert set(exact) >= {
        "gemini_flash_latest_dynamic_budget_minus_one",
        "gemini3_pro_reasoning_medium_level_high",
        "gemini3_flash_reasoning_medium_level_medium",
        "gemini31_flash_lite_reasoning_low_level_low",
        "tool_result_images_gemini3_nested_parts",
        "opencode_gemini3_pro_variant",
    }
    for case in CASES:  # and every case's contents are Pi's, deviations 4 and 5 aside (no public case has them)
        assert build(case, repair=False)["contents"] == case["expected"]["contents"]


# --- one test per deviation --------------------------------------------------------------------------------

FLASH = {
    "id": "gemini-2.5-flash",
    "name": "Gemini 2.5 Flash",
    "api": "google-generative-ai",
    "provider": "google",
    "baseUrl": "https://generativelanguage.googleapis.com/v1beta",
    "reasoning": True,
    "input": ["text", "image"],
    "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.075, "cacheWrite": 0},
    "contextWindow": 1048576,
    "maxTokens": 65536,
}
PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
JPEG = {"type": "image", "data": "/9j/4AAQSkZJRg==", "mimeType": "image/jpeg"}


def model(**changes: Any) -> Model:
    return Model.model_validate({**FLASH, **changes})


def who(m: Model) -> dict[str, str]:
    return {"api": m.api, "provider": m.provider, "model": m.id}


def assistant(content: list[dict], m: Model | None = None, stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": content, **who(m or model()), "stopReason": stop, "timestamp": 1}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def result(call_id: str, content: list[dict], error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "shot", "content": content, "isError": error}


def call(call_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "shot", "arguments": {"n": 1}, **extra}


def config(m: Model, **options: Any) -> dict[str, Any]:
    return build_google_request(m, {"messages": [user("q")]}, options)["config"]


@pytest.mark.parametrize(
    ("model_id", "thinking", "max_output"),
    [
        ("gemini-2.5-flash", {"thinkingBudget": 0}, 32000),
        ("gemini-2.5-flash-lite", {"thinkingBudget": 0}, 32000),
        ("gemini-2.5-pro", {"thinkingBudget": 128}, 32128),  # 2.5 pro cannot stop thinking: its least
        ("gemini-3-pro-preview", {"thinkingLevel": "LOW"}, 32000),
        ("gemini-3.1-pro-preview", {"thinkingLevel": "LOW"}, 32000),
        ("gemini-3-flash-preview", {"thinkingLevel": "MINIMAL"}, 32000),
        ("gemini-3.1-flash-lite-preview", {"thinkingLevel": "MINIMAL"}, 32000),
        ("gemini-flash-latest", None, 32000),  # unknown family: as Pi, nothing
    ],
)
def test_deviation_1_thinking_off_turns_thinking_off(model_id, thinking, max_output):
    body = config(model(id=model_id))
    assert body.get("thinkingConfig") == thinking and body["maxOutputTokens"] == max_output
    assert "includeThoughts" not in (body.get("thinkingConfig") or {})  # hidden, as Pi shows none
    assert "thinkingConfig" not in config(model(id="gemini-2.0-flash", reasoning=False))


@pytest.mark.parametrize(
    ("changes", "options", "max_output", "budget"),
    [
        ({"id": "gemini-2.5-pro"}, {"reasoning": "high"}, 64768, 32768),  # Pi: 32000 with a 32768 budget
        ({}, {"reasoning": "medium"}, 40192, 8192),
        ({}, {"reasoning": "xhigh"}, 56576, 24576),
        ({}, {"reasoning": "low", "maxTokens": 1000}, 3048, 2048),
        ({"maxTokens": 8192}, {"reasoning": "high"}, 8192, 8192 - MIN_ANSWER_TOKENS),  # shrinks to leave 1024
        ({"maxTokens": 500}, {"reasoning": "high"}, 500, 0),
        ({}, {"reasoning": "low", "thinkingBudgets": {"low": 0}}, 32000, 0),
        ({"id": "gemini-flash-latest"}, {"reasoning": "high"}, 32000, -1),  # dynamic: nothing to add
    ],
)
def test_deviation_2_the_thinking_budget_fits_in_the_output_limit(changes, options, max_output, budget):
    body = config(model(**changes), **options)
    assert body["maxOutputTokens"] == max_output
    assert body["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": budget}


def test_deviation_3_flash_lite_minimal_budget_is_its_lower_limit():
    assert thinking_budget("gemini-2.5-flash-lite", "minimal") == 512  # Pi: 128, which the API rejects
    assert thinking_budget("gemini-2.5-flash-lite-preview-09-2025", "low") == 2048
    assert thinking_budget("gemini-2.5-flash", "minimal") == 128
    assert thinking_budget("gemini-2.5-flash-lite", "minimal", {"minimal": 300}) == 300  # the caller decides
    body = config(model(id="gemini-2.5-flash-lite"), reasoning="minimal")
    assert body["thinkingConfig"]["thinkingBudget"] == 512


def test_deviation_4_parallel_results_with_images_stay_in_one_turn():
    history = [
        user("Take three screenshots"),
        assistant([call("c1"), call("c2"), call("c3")], stop="toolUse"),
        result("c1", [{"type": "text", "text": "one"}, PNG]),
        result("c2", [{"type": "text", "text": "two"}]),
        result("c3", [JPEG], error=True),
        user("thanks"),
    ]
    contents = build_google_request(model(), {"messages": history})["contents"]
    responses = [
        {"functionResponse": {"name": "shot", "response": {"output": "one"}}},
        {"functionResponse": {"name": "shot", "response": {"output": "two"}}},
        {"functionResponse": {"name": "shot", "response": {"error": SEE_ATTACHED_IMAGE_TEXT}}},
    ]
    assert contents[2:] == [
        {"role": "user", "parts": responses},
        {
            "role": "user",
            "parts": [{"text": TOOL_RESULT_IMAGE_TEXT}, {"inlineData": {"mimeType": "image/png", "data": PNG["data"]}}],
        },
        {
            "role": "user",
            "parts": [
                {"text": TOOL_RESULT_IMAGE_TEXT},
                {"inlineData": {"mimeType": "image/jpeg", "data": JPEG["data"]}},
            ],
        },
        {"role": "user", "parts": [{"text": "thanks"}]},
    ]
    # What Pi sends (the checker's rebuild): the responses split around each image turn.
    case = {"input": {"model": FLASH, "messages": history}}
    used: set[str] = set()
    pi = undo_contents(copy.deepcopy(contents), case, used)
    assert [len(t["parts"]) for t in pi[2:]] == [1, 2, 2, 2, 1]  # fr1 | image | fr2, fr3 | image | thanks
    assert used == {"image turns after the responses"}
    # One result with images is sent exactly as Pi does; Gemini 3 nests the images instead.
    one = [user("q"), assistant([call("c1")], stop="toolUse"), history[2]]
    single = build_google_request(model(), {"messages": one})["contents"]
    assert [len(t["parts"]) for t in single[2:]] == [1, 2]
    gemini3 = model(id="gemini-3-flash-preview")
    nested = build_google_request(gemini3, {"messages": history})["contents"]
    assert (
        len(nested) == 4 and nested[2]["parts"][0]["functionResponse"]["parts"][0]["inlineData"]["data"] == PNG["data"]
    )


def test_deviation_5_an_image_the_model_cannot_see_is_named():
    blind = model(id="gemini-live-2.5-flash-preview-native-audio", input=["text"])
    history = [user("q"), assistant([call("c1"), call("c2"), call("c3")], blind, "toolUse")]
    history += [result("c1", [PNG]), result("c2", [{"type": "text", "text": "caption"}, PNG]), result("c3", [])]
    contents = build_google_request(blind, {"messages": history})["contents"]
    assert [p["functionResponse"]["response"]["output"] for p in contents[2]["parts"]] == [
        IMAGE_OMITTED_TEXT,  # Pi: ""
        "caption",
        "",  # an empty result stays empty, as in Pi
    ]
    assert len(contents) == 3  # no image turn for a model that cannot see it
    used: set[str] = set()
    undo_contents(contents, {"input": {"model": blind.to_pi_json(), "messages": history}}, used)
    assert used == {"omitted image named"}


def test_repair_drops_orphan_responses_and_answers_trailing_calls():
    history = [
        user("q"),
        assistant([call("lost")], stop="aborted"),
        result("lost", [{"type": "text", "text": "x"}]),
        user("again"),
        assistant([call("open")], stop="toolUse"),
    ]
    repaired = build_google_request(model(), {"messages": history})["contents"]
    assert [t["role"] for t in repaired] == ["user", "user", "model", "user"]
    assert repaired[3]["parts"] == [{"functionResponse": {"name": "shot", "response": {"error": NO_RESULT_TEXT}}}]
    pi = build_google_request(model(), {"messages": history}, repair=False)["contents"]
    assert [t["role"] for t in pi] == ["user", "user", "user", "model"]  # an orphan response, a trailing call


# --- behaviours a user notices -----------------------------------------------------------------------------


def test_thought_signatures_only_for_the_same_model_and_only_base64():
    assert is_valid_thought_signature("Cq/7o7Gi+A==")
    for bad in ("abc-_def", "abcde", "not base64!", "", None):
        assert not is_valid_thought_signature(bad)
    signed = [
        {"type": "thinking", "thinking": "plan", "thinkingSignature": "Cq/7o7Gi"},
        {"type": "text", "text": "answer", "textSignature": "CqKMMkMv"},
        call("c1", thoughtSignature="CqPQ0EIW"),
    ]
    history = [user("q"), assistant(signed, stop="toolUse"), result("c1", [{"type": "text", "text": "ok"}])]
    same = build_google_request(model(), {"messages": history})["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in same] == ["Cq/7o7Gi", "CqKMMkMv", "CqPQ0EIW"]
    assert same[0] == {"thought": True, "text": "plan", "thoughtSignature": "Cq/7o7Gi"}
    other = build_google_request(model(id="gemini-2.5-pro"), {"messages": history})["contents"][1]["parts"]
    assert other == [
        {"text": "plan"},  # another model's thinking is plain text
        {"text": "answer"},
        {"functionCall": {"name": "shot", "args": {"n": 1}}},
    ]
    gemini3 = build_google_request(model(id="gemini-3-pro-preview"), {"messages": history})["contents"][1]["parts"]
    assert gemini3[2]["thoughtSignature"] == SKIP_THOUGHT_SIGNATURE


def test_thinking_levels_and_budgets():
    cases = [
        ("gemini-3-pro-preview", "minimal", {"thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", "xhigh", {"thinkingLevel": "HIGH"}),
        ("gemini-3-flash-preview", "minimal", {"thinkingLevel": "MINIMAL"}),
        ("Gemini-3.1-Flash-Lite-Preview", "medium", {"thinkingLevel": "MEDIUM"}),
        ("gemini-flash-latest", "low", {"thinkingBudget": -1}),
    ]
    for model_id, level, expected in cases:
        assert config(model(id=model_id), reasoning=level)["thinkingConfig"] == {"includeThoughts": True, **expected}
    assert "thinkingConfig" not in config(model(id="gemini-2.0-flash", reasoning=False), reasoning="high")


def test_config_fields():
    tools = [{"name": "t", "description": "", "parameters": {"type": "object", "anyOf": [{"const": 1}]}}]
    body = build_google_request(
        model(), {"systemPrompt": "Be brief.\ud800", "messages": [user("q")], "tools": tools}, {"temperature": 0}
    )
    assert body["model"] == "gemini-2.5-flash"
    assert body["config"]["systemInstruction"] == "Be brief."
    assert body["config"]["temperature"] == 0
    assert body["config"]["tools"] == [
        {"functionDeclarations": [{"name": "t", "description": "", "parametersJsonSchema": tools[0]["parameters"]}]}
    ]
    assert "toolConfig" not in body["config"]  # Pi's simple entry point never sets one
    with_choice = build_google_request(model(), {"messages": [], "tools": tools}, tool_choice="any")
    assert with_choice["config"]["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "toolConfig" not in build_google_request(model(), {"messages": [], "tools": []}, tool_choice="any")["config"]
    assert "tools" not in build_google_request(model(), {"messages": [], "tools": []})["config"]


def test_user_turns_images_and_blank_content():
    history = [user(""), user([]), user([{"type": "text", "text": "look"}, PNG]), user([PNG])]
    assert build_google_request(model(), {"messages": history})["contents"] == [
        {"role": "user", "parts": [{"text": ""}]},
        {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": PNG["data"]}}]},
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG["data"]}}]},
    ]
    blind = build_google_request(model(input=["text"]), {"messages": history})["contents"]
    assert blind == [{"role": "user", "parts": [{"text": ""}]}, {"role": "user", "parts": [{"text": "look"}]}]


def test_tool_call_ids_only_for_models_that_need_them():
    m = model(id="claude-sonnet-4-5", reasoning=False)
    other = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    history = [user("q"), {**assistant([call("toolu_01+x")], stop="toolUse"), **other}]
    history.append(result("toolu_01+x", [{"type": "text", "text": "ok"}]))
    contents = build_google_request(m, {"messages": history})["contents"]
    assert contents[1]["parts"][0]["functionCall"]["id"] == "toolu_01_x"
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "toolu_01_x"


def test_api_key_never_in_the_params_and_inputs_untouched():
    context = {"messages": [user("q"), assistant([{"type": "text", "text": "a"}])], "tools": []}
    before = copy.deepcopy(context)
    body = build_google_request(model(), context, {"apiKey": "AIza-secret-4242", "maxTokens": 99})
    assert "AIza-secret-4242" not in json.dumps(body)
    assert context == before and body["config"]["maxOutputTokens"] == 99


def test_build_request_dispatches_to_the_google_builder():
    m = model()
    assert build_request(m, {"messages": [user("q")]}) == build_google_request(m, {"messages": [user("q")]})
