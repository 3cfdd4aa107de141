"""The api registry: one provider object per API, the built-ins registered in one place and imported on first use."""

import asyncio
import subprocess
import sys

import pytest

from pi_notebook.ai import (
    ApiProvider,
    Context,
    UnknownApiError,
    UserMessage,
    build_request,
    complete,
    faux,
    get_api_provider,
    list_api_providers,
    register_api_provider,
    register_provider,
    register_request_builder,
    stream,
)

BUILTIN_APIS = {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "local", "faux"}
PROVIDER_MODULES = ("anthropic", "openai_completions", "openai_responses", "google", "local", "local_prompt")
SDKS = ("anthropic", "openai", "google.genai", "llama_cpp")
CONTEXT = Context(messages=[UserMessage(content="hi", timestamp=1)])


def run_fresh(code: str) -> str:
    """``code`` in a fresh interpreter (the registry and the imports start empty there); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def loaded(names: tuple[str, ...], prefix: str = "") -> str:
    """Code printing which of ``names`` (each after ``prefix``) are imported."""
    return f"print(sorted(n for n in {names!r} if {prefix!r} + n in sys.modules))\n"


def test_every_builtin_api_has_one_provider():
    providers = {p.api: p for p in list_api_providers()}
    assert set(providers) >= BUILTIN_APIS
    assert all(providers[api].stream is not None for api in BUILTIN_APIS)
    assert providers["faux"].build_request is None  # it receives the context itself
    assert all(providers[api].build_request is not None for api in BUILTIN_APIS - {"faux"})


def test_importing_the_package_or_loading_the_extension_imports_no_provider_and_no_sdk():
    code = (
        "import sys\n"
        "import pi_notebook.ai as ai\n"
        "ai.stream, ai.complete, ai.build_request, ai.register_provider, ai.list_api_providers()\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'pi_notebook')\n"
        + loaded(PROVIDER_MODULES, "pi_notebook.ai.providers.")
        + loaded(SDKS)
    )
    assert run_fresh(code).splitlines() == ["[]", "[]"]


def test_build_request_imports_only_the_builder_of_its_api():
    code = (
        "import sys\n"
        "from pi_notebook.ai import build_request, get_model\n"
        "build_request(get_model('anthropic/claude-sonnet-4-5'), {'messages': []})\n"
        + loaded(("anthropic", "anthropic_convert", "openai_completions_convert"), "pi_notebook.ai.providers.")
        + loaded(SDKS)
    )
    assert run_fresh(code).splitlines() == ["['anthropic_convert']", "[]"]


def test_a_registration_made_before_the_first_call_is_not_replaced_by_the_builtin():
    code = (
        "from pi_notebook.ai.api_registry import register_provider, get_api_provider\n"
        "def mine(model, context, options): ...\n"
        "register_provider('anthropic-messages', mine)\n"
        "provider = get_api_provider('anthropic-messages')\n"
        "print(provider.stream is mine, provider.build_request.__name__)\n"
    )
    assert run_fresh(code).split() == ["True", "build_anthropic_request"]


@pytest.fixture
def restore_registry():
    saved = list_api_providers()
    yield
    for provider in saved:
        register_api_provider(provider)


def test_register_provider_replaces_the_stream_and_keeps_the_request_builder(restore_registry, fresh_faux):
    model = faux.model(api="anthropic-messages")
    body = build_request(model, CONTEXT)
    faux.set_responses(["from the stand-in"])
    register_provider("anthropic-messages", faux.provider.stream)
    final = asyncio.run(complete(model, CONTEXT))
    assert final.content[0].text == "from the stand-in" and final.api == "anthropic-messages"
    assert build_request(model, CONTEXT) == body and body["messages"][0]["role"] == "user"


def test_a_provider_object_is_registered_whole(restore_registry):
    register_api_provider(ApiProvider(api="echo-api-test", stream=faux.provider.stream, build_request=None))
    register_request_builder("echo-api-test", lambda model, ctx, opts: {"echo": True})
    model = faux.model(api="echo-api-test")
    assert build_request(model, CONTEXT) == {"echo": True}
    register_api_provider(ApiProvider(api="echo-api-test", stream=faux.provider.stream))
    assert build_request(model, CONTEXT) == CONTEXT.to_pi_json()


def test_an_api_with_only_a_request_builder_cannot_stream(restore_registry):
    register_request_builder("body-only-test", lambda model, ctx, opts: {})
    with pytest.raises(UnknownApiError, match=r"^No API provider registered for api: body-only-test$"):
        stream(faux.model(api="body-only-test"), CONTEXT)
    with pytest.raises(UnknownApiError, match=r"^No API provider registered for api: never-registered$"):
        get_api_provider("never-registered")
