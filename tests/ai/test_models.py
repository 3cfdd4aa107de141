"""The model catalogue, get_model's prefixes, and Pi's cost calculation (no network, no keys)."""

import json
import math

import pytest

from pi_notebook.ai import Model, Usage
from pi_notebook.ai.models import (
    OLLAMA_COMPAT,
    PREFIXES,
    UnknownModelError,
    calculate_cost,
    catalogue_source,
    default_model,
    get_model,
    list_models,
    ollama_base_url,
)
from tests.pi_fixtures import FIXTURES, load_cases

KEY_VARS = ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in (*KEY_VARS, "OLLAMA_HOST", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


# --- the catalogue -----------------------------------------------------------------------------------


def test_catalogue_records_its_source():
    source = catalogue_source()
    assert source["repo"] == "badlogic/pi-mono"
    assert source["path"] == "packages/ai/src/models.generated.ts"
    assert len(source["commit"]) == 40


@pytest.mark.parametrize("model", list_models(), ids=lambda m: f"{m.provider}/{m.id}")
def test_every_catalogue_model_round_trips(model):
    data = model.to_pi_json()
    assert Model.model_validate(data) == model
    assert Model.model_validate(data).to_pi_json() == data
    assert "headers" not in data and (model.provider == "ollama" or "compat" not in data)


def test_catalogue_contents():
    anthropic, openai = list_models("anthropic"), list_models("openai")
    assert {m.api for m in anthropic} == {"anthropic-messages"}
    assert {m.api for m in openai} == {"openai-completions"}
    assert {m.base_url for m in anthropic} == {"https://api.anthropic.com"}
    assert {m.base_url for m in openai} == {"https://api.openai.com/v1"}
    ids = [m.id for m in anthropic + openai]
    assert len(ids) == len(set(ids))
    for m in anthropic + openai:
        assert m.context_window >= m.max_tokens > 0
        assert m.cost.input > 0 and m.cost.output > m.cost.input
        assert "text" in m.input
    assert list_models() == [*anthropic, *openai, get_model("local")]


def _fixture_models():
    seen = {}
    for name in ("anthropic_payload.json", "openai_completions_payload.json"):
        for case in load_cases(name):
            raw = dict(case["input"]["model"])
            if raw["provider"] in ("anthropic", "openai"):
                raw.pop("compat", None)  # added by the fixture to exercise a flag, not part of the model
                seen[(raw["provider"], raw["id"])] = raw
    return list(seen.values())


@pytest.mark.parametrize("raw", _fixture_models(), ids=lambda r: f"{r['provider']}/{r['id']}")
def test_fixture_models_equal_catalogue_entries(raw):
    assert get_model(f"{raw['provider']}/{raw['id']}").to_pi_json() == raw


def test_fixture_models_cover_both_providers():
    assert {(r["provider"], r["id"]) for r in _fixture_models()} >= {
        ("anthropic", "claude-sonnet-4-20250514"),
        ("openai", "gpt-4o-mini"),
        ("openai", "o4-mini"),
    }


def test_returned_models_are_independent_copies():
    first = get_model("openai/gpt-4o-mini")
    first.cost.input = 999
    assert get_model("openai/gpt-4o-mini").cost.input == 0.15


# --- get_model ---------------------------------------------------------------------------------------


def test_catalogue_model_with_overrides():
    model = get_model("anthropic/claude-sonnet-4-5", max_tokens=4096, base_url="http://proxy:8080")
    assert (model.max_tokens, model.base_url, model.context_window) == (4096, "http://proxy:8080", 200_000)
    assert get_model("openai/gpt-4o", contextWindow=1000).context_window == 1000  # Pi's spelling works too
    assert get_model("openai/gpt-4o", compat={"supportsStore": False}).compat == {"supportsStore": False}


def test_unknown_override_field_is_rejected():
    with pytest.raises(TypeError, match="context_windw"):
        get_model("openai/gpt-4o", context_windw=1)


def test_unknown_id_suggests_the_closest():
    with pytest.raises(UnknownModelError) as info:
        get_model("anthropic/claude-sonet-4-5")
    err = info.value
    assert isinstance(err, LookupError)
    assert err.suggestions[0] == "claude-sonnet-4-5"
    text = str(err)
    assert "Did you mean: anthropic/claude-sonnet-4-5" in text
    assert "id='claude-sonet-4-5'" in text and "Model(id=" in text


def test_unknown_id_without_close_match_lists_known_ids():
    with pytest.raises(UnknownModelError) as info:
        get_model("openai/zzzzzzzz")
    assert info.value.suggestions == []
    assert "gpt-4o-mini" in str(info.value)


def test_spec_without_prefix_lists_prefixes():
    with pytest.raises(ValueError) as info:
        get_model("gpt-4o")
    for prefix in PREFIXES:
        assert f"{prefix}/<id>" in str(info.value)
    with pytest.raises(ValueError, match="Unknown provider prefix 'bogus'"):
        get_model("bogus/x")


def test_ollama_defaults():
    model = get_model("ollama/qwen3:4b")
    assert model.to_pi_json() == {
        "id": "qwen3:4b",
        "name": "qwen3:4b",
        "api": "openai-completions",
        "provider": "ollama",
        "baseUrl": "http://localhost:11434/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
        "compat": {"supportsDeveloperRole": False, "supportsStore": False, "supportsReasoningEffort": False},
    }
    assert get_model("ollama/llama3.2", context_window=8192, reasoning=True).context_window == 8192
    model.compat["supportsStore"] = True
    assert OLLAMA_COMPAT["supportsStore"] is False


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("", "http://localhost:11434/v1"),
        ("localhost", "http://localhost:11434/v1"),
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("gpu-box:9000", "http://gpu-box:9000/v1"),
        (":9000", "http://localhost:9000/v1"),
        ("0.0.0.0", "http://localhost:11434/v1"),
        ("0.0.0.0:11434", "http://localhost:11434/v1"),
        ("http://gpu-box:11434", "http://gpu-box:11434/v1"),
        ("http://gpu-box:11434/", "http://gpu-box:11434/v1"),
        ("http://gpu-box:11434/v1", "http://gpu-box:11434/v1"),
        ("https://ollama.example.com", "https://ollama.example.com/v1"),
        ("https://example.com/ollama/", "https://example.com/ollama/v1"),
        ("[::1]:8080", "http://[::1]:8080/v1"),
    ],
)
def test_ollama_host_forms(monkeypatch, host, url):
    assert ollama_base_url(host) == url
    monkeypatch.setenv("OLLAMA_HOST", host)
    assert get_model("ollama/m").base_url == url


def test_bad_ollama_host():
    with pytest.raises(ValueError, match="OLLAMA_HOST"):
        ollama_base_url("box:notaport")


def test_openai_compatible_base_url(monkeypatch):
    model = get_model("openai-compatible/my-model", base_url="http://127.0.0.1:8080/v1/")
    assert (model.api, model.provider, model.base_url) == (
        "openai-completions",
        "openai-compatible",
        "http://127.0.0.1:8080/v1",
    )
    assert model.compat is None  # Pi's detectCompat decides from the URL
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm:8000/v1")
    assert get_model("openai-compatible/m").base_url == "http://vllm:8000/v1"
    assert get_model("openai-compatible/m", base_url="http://other/v1").base_url == "http://other/v1"
    assert get_model("openai-compatible/m", baseUrl="http://pi-spelling/v1").base_url == "http://pi-spelling/v1"


def test_openai_compatible_without_base_url_explains_both_ways():
    with pytest.raises(ValueError) as info:
        get_model("openai-compatible/my-model")
    assert "base_url=" in str(info.value) and "OPENAI_BASE_URL" in str(info.value)


def test_missing_id_for_server_prefixes():
    with pytest.raises(ValueError, match="ollama/<model id>"):
        get_model("ollama/")


@pytest.mark.parametrize(
    ("spec", "base_url"),
    [
        ("openrouter/anthropic/claude-sonnet-4", "https://openrouter.ai/api/v1"),
        ("groq/llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"),
    ],
)
def test_presets(spec, base_url):
    model = get_model(spec)
    assert model.id == spec.split("/", 1)[1]
    assert (model.api, model.provider, model.base_url) == ("openai-completions", spec.split("/")[0], base_url)


@pytest.mark.parametrize(
    "spec", ["local", "local/", "local/default", "local/smollm2-135m", "local/SmolLM2-135M-Instruct"]
)
def test_local_default(spec):
    model = get_model(spec)
    assert model.to_pi_json() == {
        "id": "smollm2-135m",
        "name": "SmolLM2-135M-Instruct",
        "api": "local",
        "provider": "local",
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 2048,
        "maxTokens": 512,
    }


def test_local_path_and_name():
    model = get_model("local//models/qwen2.5-0.5b.Q4.gguf", context_window=4096)
    assert (model.id, model.name, model.api, model.context_window) == (
        "/models/qwen2.5-0.5b.Q4.gguf", "qwen2.5-0.5b.Q4", "local", 4096,
    )  # fmt: skip
    assert get_model("local/gemma3-270m").id == "gemma3-270m"
    assert list_models("local") == [get_model("local")]


def test_faux():
    from pi_notebook.ai.providers import faux

    assert get_model("faux/faux-1") == faux.model()
    assert get_model("faux") == faux.model()
    assert get_model("faux/other", context_window=10) == faux.model("other", context_window=10)


def test_list_models_by_provider():
    assert {m.provider for m in list_models("openai")} == {"openai"}
    assert list_models("ollama") == []
    with pytest.raises(ValueError, match="Unknown provider"):
        list_models("antropic")


# --- default_model -----------------------------------------------------------------------------------


def test_default_model_follows_the_keys(monkeypatch):
    assert default_model() == get_model("local/smollm2-135m")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    assert (default_model().provider, default_model().id) == ("openai", "gpt-5-mini")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert (default_model().provider, default_model().id) == ("anthropic", "claude-sonnet-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # empty counts as unset, as in Pi
    assert default_model().provider == "openai"


# --- calculate_cost ----------------------------------------------------------------------------------


def _session_usages():
    """Assistant usages in Pi-written session files, with the cost Pi computed for claude-sonnet-4-5."""
    out = []
    for path in sorted((FIXTURES / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # the malformed-file fixtures
            msg = entry.get("message") if isinstance(entry, dict) else None
            if isinstance(msg, dict) and msg.get("model") == "claude-sonnet-4-5" and "usage" in msg:
                out.append(msg["usage"])
    unique = {json.dumps(u, sort_keys=True): u for u in out}
    return list(unique.values())


def test_session_fixtures_have_usages():
    assert len(_session_usages()) >= 5


@pytest.mark.parametrize("pi_usage", _session_usages(), ids=lambda u: f"in{u['input']}-out{u['output']}")
def test_cost_matches_pi_session_fixtures(pi_usage):
    usage = Usage.model_validate({**pi_usage, "cost": {}})
    cost = calculate_cost(get_model("anthropic/claude-sonnet-4-5"), usage)
    assert cost is usage.cost
    assert cost.to_pi_json() == pi_usage["cost"]
    # Same floats as JavaScript, and the same JSON text (JS writes 0, never 0.0).
    assert json.dumps(usage.to_pi_json()) == json.dumps(pi_usage)


def test_cost_all_four_kinds():
    model = get_model("anthropic/claude-opus-4-5")  # 5 / 25 / 0.5 / 6.25 per million
    usage = Usage(input=1000, output=500, cache_read=20_000, cache_write=3000, total_tokens=24_500)
    cost = calculate_cost(model, usage)
    assert cost.input == 5 / 1_000_000 * 1000
    assert cost.output == 25 / 1_000_000 * 500
    assert cost.cache_read == 0.5 / 1_000_000 * 20_000
    assert cost.cache_write == 6.25 / 1_000_000 * 3000
    assert cost.total == cost.input + cost.output + cost.cache_read + cost.cache_write
    assert math.isclose(cost.total, 0.005 + 0.0125 + 0.01 + 0.01875)


def test_cost_of_free_models_is_integer_zero():
    usage = Usage(input=123, output=45)
    cost = calculate_cost(get_model("local"), usage)
    assert cost.to_pi_json() == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    assert json.dumps(cost.to_pi_json()) == '{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}'
