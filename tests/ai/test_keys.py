"""API key lookup: Pi's environment variables and order; errors name the variable, never a key."""

import pytest
from pydantic import SecretStr

from pi_notebook.ai.keys import (
    ENV_VARS,
    KEYLESS_PROVIDERS,
    MissingApiKeyError,
    get_env_api_key,
    require_api_key,
    resolve_api_key,
)

SECRET = "sk-ant-" + "THIS-MUST-NOT-LEAK-1234"  # built at run time: no key-shaped literal in the repo


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for names in ENV_VARS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


def test_env_var_names_follow_pi():
    assert ENV_VARS["anthropic"] == ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")
    assert ENV_VARS["openai"] == ("OPENAI_API_KEY",)
    assert ENV_VARS["openrouter"] == ("OPENROUTER_API_KEY",)
    assert ENV_VARS["groq"] == ("GROQ_API_KEY",)
    assert ENV_VARS["xai"] == ("XAI_API_KEY",)
    assert ENV_VARS["zai"] == ("ZAI_API_KEY",)
    assert ENV_VARS["mistral"] == ("MISTRAL_API_KEY",)
    assert ENV_VARS["cerebras"] == ("CEREBRAS_API_KEY",)
    assert {"ollama", "local", "faux"} <= KEYLESS_PROVIDERS


def test_anthropic_oauth_token_wins(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "api-key")
    assert get_env_api_key("anthropic") == "api-key"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth-token")
    assert get_env_api_key("anthropic") == "oauth-token"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "")  # empty means unset, like JS `||`
    assert get_env_api_key("anthropic") == "api-key"


def test_explicit_key_wins(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert resolve_api_key("openai") == "from-env"
    assert resolve_api_key("openai", "explicit") == "explicit"
    assert resolve_api_key("openai", SecretStr("secret")) == "secret"
    assert resolve_api_key("openai", "") == "from-env"
    assert require_api_key("openai", "explicit") == "explicit"


def test_unknown_and_keyless_providers():
    assert get_env_api_key("ollama") is None
    assert get_env_api_key("some-custom-provider") is None
    for provider in ("ollama", "local", "faux", "openai-compatible"):
        assert require_api_key(provider) is None
    assert require_api_key("ollama", "given") == "given"


def test_openai_compatible_uses_the_openai_key_when_set(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    assert require_api_key("openai-compatible") == "sk-local"


def test_missing_key_error_names_the_variable_and_the_fix():
    with pytest.raises(MissingApiKeyError) as info:
        require_api_key("anthropic")
    err = info.value
    assert (err.provider, err.env_var) == ("anthropic", "ANTHROPIC_API_KEY")
    text = str(err)
    assert text.startswith("No API key for provider 'anthropic'. Set ANTHROPIC_API_KEY")
    assert "ANTHROPIC_OAUTH_TOKEN" in text
    assert "%env ANTHROPIC_API_KEY=..." in text
    assert "prefer not to type keys into notebooks" in text
    assert text.endswith("or pass api_key=...")


@pytest.mark.parametrize(("provider", "env_var"), [("openai", "OPENAI_API_KEY"), ("groq", "GROQ_API_KEY")])
def test_missing_key_for_other_providers(provider, env_var):
    with pytest.raises(MissingApiKeyError, match=f"Set {env_var} in the environment") as info:
        require_api_key(provider)
    assert info.value.env_var == env_var


def test_missing_key_for_unknown_provider():
    with pytest.raises(MissingApiKeyError, match="Pass api_key=") as info:
        require_api_key("acme")
    assert info.value.env_var is None


def test_key_values_never_leak(monkeypatch):
    # A key set for one provider must not show up in the error of another, nor in an empty-key error.
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with pytest.raises(MissingApiKeyError) as info:
        require_api_key("openai")
    assert SECRET not in str(info.value)
    assert SECRET not in repr(info.value)
    assert SECRET not in repr(info.value.__dict__)
    assert require_api_key("anthropic") == SECRET
