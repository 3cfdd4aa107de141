"""build_request(): one entry point for the exact provider body, dispatched by model.api."""

import json

from pi_notebook.ai import Context, UserMessage, build_request, get_model, register_request_builder
from pi_notebook.ai.options import StreamOptions
from pi_notebook.ai.providers.anthropic_convert import build_anthropic_request
from pi_notebook.ai.providers.openai_completions_convert import build_openai_completions_request
from pi_notebook.ai.providers.openai_responses_convert import build_openai_responses_request

CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="hi", timestamp=1)])


def test_dispatches_to_each_providers_builder():
    for spec, builder in (("anthropic/claude-sonnet-4-5", build_anthropic_request),
                          ("openai/gpt-4o-mini", build_openai_responses_request),
                          ("openai-completions/gpt-4o-mini", build_openai_completions_request)):  # fmt: skip
        model = get_model(spec)
        assert build_request(model, CONTEXT, max_tokens=100) == builder(model, CONTEXT, StreamOptions(max_tokens=100))


def test_the_body_never_holds_the_key_and_needs_none():
    body = build_request(get_model("anthropic/claude-sonnet-4-5"), CONTEXT, api_key="sk-ant-secret-1")
    assert "sk-ant-secret-1" not in json.dumps(body)
    assert body["system"][0]["text"] == "Be brief." and body["messages"][0]["role"] == "user"


def test_local_and_faux_bodies():
    local = build_request(get_model("local"), CONTEXT)
    assert local["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert build_request(get_model("faux/faux-1"), CONTEXT) == CONTEXT.to_pi_json()


def test_a_custom_api_can_register_its_builder():
    register_request_builder("echo-test", lambda model, ctx, opts: {"n": len(ctx.messages)})
    model = get_model("faux/faux-1").model_copy(update={"api": "echo-test"})
    assert build_request(model, CONTEXT.to_pi_json()) == {"n": 1}
