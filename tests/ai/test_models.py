"""The model catalogue, get_model's prefixes, the default model and Pi's cost calculation.

No network and no keys: the Ollama path talks to a tiny server on 127.0.0.1, keys are fake values made at
run time.
"""

import json
import math
import secrets
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pi_notebook.ai import Model, Usage, model_note
from pi_notebook.ai import catalogue as catalogue_module
from pi_notebook.ai import models as models_module
from pi_notebook.ai.models import (
    DEFAULT_MODELS,
    OLLAMA_COMPAT,
    PREFIXES,
    UnknownModelError,
    calculate_cost,
    catalogue_source,
    default_model,
    default_model_choice,
    get_model,
    list_models,
    ollama_base_url,
    ollama_models,
)
from tests.ollama_fake import fake_ollama
from tests.pi_fixtures import FIXTURES, load_cases

KEY_VARS = ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def fake_key() -> str:
    return "test-" + secrets.token_hex(8)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, closed_port):
    for name in (*KEY_VARS, "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # No Ollama unless a test starts one: a port nothing listens on (never the machine's real Ollama).
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    models_module._ollama_tags.cache_clear()
    yield
    models_module._ollama_tags.cache_clear()


@pytest.fixture(scope="module")
def closed_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return port


# --- the catalogue -----------------------------------------------------------------------------------


def test_catalogue_records_its_sources():
    source = catalogue_source()
    assert source["genai_prices"] == catalogue_module.genai_prices_version() is not None
    overlay = source["pi_overlay"]
    assert overlay["repo"] == "badlogic/pi-mono"
    assert overlay["path"] == "packages/ai/src/models.generated.ts"
    assert len(overlay["commit"]) == 40


@pytest.mark.parametrize(
    ("spec", "api"),
    [("anthropic/claude-sonnet-4-6", "anthropic-messages"), ("openai/gpt-5.4", "openai-responses")],
)
def test_todays_models_are_known(spec, api):
    model = get_model(spec)
    assert (model.api, model.id) == (api, spec.split("/")[1])
    assert model.cost.input > 0 and model.cost.output > model.cost.input
    assert model.context_window >= 400_000 and model.reasoning and model_note(model) is None


def test_catalogue_comes_from_genai_prices():
    from genai_prices.data import providers

    genai = {p.id: {m.id for m in p.models} for p in providers if p.id in ("anthropic", "openai")}
    for provider in ("anthropic", "openai"):
        ids = {m.id for m in list_models(provider)}
        assert len(ids & genai[provider]) >= 20  # most of the catalogue is genai-prices' list
        assert not [i for i in ids if "embedding" in i or "tts" in i or "whisper" in i]  # chat models only


def test_genai_prices_is_imported_lazily():
    code = (
        "import sys, pi_notebook, pi_notebook.ai, pi_notebook.notebook.magics\n"
        "assert 'genai_prices' not in sys.modules\n"
        "from pi_notebook.ai import get_model\n"
        "get_model('local'); get_model('faux/faux-1'); get_model('ollama/m')\n"
        "assert 'genai_prices' not in sys.modules\n"
        "get_model('anthropic/claude-sonnet-4-6')\n"
        "assert 'genai_prices' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dated_snapshots_resolve_through_genai_prices():
    model = get_model("anthropic/claude-sonnet-4-6-20990101")
    known = get_model("anthropic/claude-sonnet-4-6")
    assert model.id == "claude-sonnet-4-6-20990101" and model.name == known.name
    assert (model.cost, model.context_window) == (known.cost, known.context_window)
    assert model_note(model) is None


def test_without_genai_prices_the_catalogue_is_pis_list(monkeypatch):
    monkeypatch.setattr(catalogue_module, "_genai_providers", dict)
    monkeypatch.setattr(catalogue_module, "_entries", catalogue_module._entries.__wrapped__)
    overlay = json.loads(
        catalogue_module.resources.files("pi_notebook.ai").joinpath("models_catalogue.json").read_text()
    )
    pi_ids = {m["id"] for m in overlay["models"] if m["provider"] == "openai"}
    assert {m.id for m in list_models("openai")} == pi_ids
    assert get_model("openai/gpt-4o-mini").cost.cache_read == 0.08  # Pi's rounded price
    model = get_model("openai/gpt-5.5")  # unknown without genai-prices: still runs, from Pi's newest
    assert (model.id, model.cost) == ("gpt-5.5", get_model("openai/gpt-5.2").cost)
    monkeypatch.setattr(catalogue_module, "genai_prices_version", lambda: None)
    assert "catalogue (Pi's list; genai-prices is not installed); it runs with openai's defaults from gpt-5.2" in (
        model_note(model)
    )


@pytest.mark.parametrize("model", list_models(), ids=lambda m: f"{m.provider}/{m.id}")
def test_every_catalogue_model_round_trips(model):
    data = model.to_pi_json()
    assert Model.model_validate(data) == model
    assert Model.model_validate(data).to_pi_json() == data
    assert "headers" not in data and (model.provider == "ollama" or "compat" not in data)


def test_catalogue_contents():
    anthropic, openai = list_models("anthropic"), list_models("openai")
    assert {m.api for m in anthropic} == {"anthropic-messages"}
    assert {m.api for m in openai} == {"openai-responses"}  # as in Pi
    assert {m.base_url for m in anthropic} == {"https://api.anthropic.com"}
    assert {m.base_url for m in openai} == {"https://api.openai.com/v1"}
    ids = [m.id for m in anthropic + openai]
    assert len(ids) == len(set(ids))
    for m in anthropic + openai:
        assert m.context_window >= m.max_tokens > 0
        assert m.cost.input > 0 and m.cost.output >= m.cost.input
        assert "text" in m.input
    assert list_models() == [*anthropic, *openai, *list_models("google"), get_model("local")]


def _spec(raw):
    # The completions fixtures' OpenAI models are the catalogue's, through Chat Completions.
    prefix = "openai-completions" if raw["api"] == "openai-completions" else raw["provider"]
    return f"{prefix}/{raw['id']}"


def _fixture_models():
    seen = {}
    for name in ("anthropic_payload.json", "openai_completions_payload.json", "openai_responses_payload.json"):
        for case in load_cases(name):
            raw = dict(case["input"]["model"])
            if raw["id"] == raw["name"] == "gpt-5":
                continue  # a responses case renames GPT-5 "gpt-5" to reach a code path: not the catalogue's name
            if raw["provider"] in ("anthropic", "openai"):
                raw.pop("compat", None)  # added by the fixture to exercise a flag, not part of the model
                seen[_spec(raw)] = raw
    return list(seen.values())


@pytest.mark.parametrize("raw", _fixture_models(), ids=_spec)
def test_fixture_models_keep_pis_fields(raw):
    # Pi's fields come from the overlay; the prices from genai-prices, which does not round them as Pi did
    # (gpt-4o-mini's cache read: 0.075, Pi 0.08).
    model = get_model(_spec(raw)).to_pi_json()
    assert {k: v for k, v in model.items() if k != "cost"} == {k: v for k, v in raw.items() if k != "cost"}
    for kind, pi_price in raw["cost"].items():
        assert model["cost"][kind] == pytest.approx(pi_price, abs=0.006)


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


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_unknown_id_runs_with_the_providers_defaults_and_a_note(provider):
    model = get_model(f"{provider}/tomorrows-model", max_tokens=1000)
    base = get_model(f"{provider}/{DEFAULT_MODELS[provider]}")
    # Pi's buildFallbackModel: the provider's default model under the new id and name
    assert (model.id, model.name, model.api, model.base_url) == (
        "tomorrows-model",
        "tomorrows-model",
        base.api,
        base.base_url,
    )
    assert (model.cost, model.context_window, model.max_tokens) == (base.cost, base.context_window, 1000)
    note = model_note(model)
    assert note.startswith(f"Note: {provider}/tomorrows-model is not in the model catalogue (genai-prices ")
    assert f"defaults from {DEFAULT_MODELS[provider]}" in note and "max output 1,000" in note
    assert "\n" not in note and "%agent_models" in note


def test_no_note_for_known_or_uncatalogued_providers():
    for spec in ("anthropic/claude-sonnet-4-5", "openai/gpt-4o-mini", "ollama/qwen3:4b", "local", "faux/faux-1"):
        assert model_note(get_model(spec)) is None


def test_unknown_prefix_suggests_the_closest():
    with pytest.raises(UnknownModelError) as info:
        get_model("antropic/claude-sonnet-4-5")
    err = info.value
    assert isinstance(err, LookupError) and isinstance(err, ValueError)
    assert err.suggestions[0] == "anthropic" and "Did you mean anthropic/...?" in str(err)


def test_spec_without_prefix_lists_prefixes():
    with pytest.raises(ValueError) as info:
        get_model("gpt-4o")
    for prefix in PREFIXES:
        assert f"{prefix}/<id>" in str(info.value)
    with pytest.raises(ValueError, match="Unknown provider prefix 'bogus'"):
        get_model("bogus/x")
    with pytest.raises(ValueError, match="anthropic/<model id>"):
        get_model("anthropic/")


def test_ollama_defaults(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST")
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
    runtime = models_module._LOCAL_MODELS["smollm2-135m"]  # the local runtime's sizes, tuned with local.py
    assert model.to_pi_json() == {
        "id": "smollm2-135m",
        "name": "SmolLM2-135M-Instruct",
        "api": "local",
        "provider": "local",
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": runtime["context_window"],
        "maxTokens": runtime["max_tokens"],
    }


def test_local_path_and_name():
    model = get_model("local//models/qwen2.5-0.5b.Q4.gguf", context_window=4096)
    assert (model.id, model.name, model.api, model.context_window) == (
        "/models/qwen2.5-0.5b.Q4.gguf", "qwen2.5-0.5b.Q4", "local", 4096,
    )  # fmt: skip
    assert get_model("local/gemma3-270m").id == "gemma3-270m"
    assert list_models("local") == [get_model("local")]


def test_faux():
    from pi_notebook.ai import faux

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
    monkeypatch.setenv("OPENAI_API_KEY", fake_key())
    assert default_model_choice() == (get_model("openai/gpt-5.5"), "OPENAI_API_KEY is set")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key())
    assert default_model_choice() == (get_model("anthropic/claude-opus-4-8"), "ANTHROPIC_API_KEY is set")
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", fake_key())
    assert default_model_choice()[1] == "ANTHROPIC_OAUTH_TOKEN is set"  # read first, as in Pi
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # empty counts as unset, as in Pi
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "")
    assert default_model().provider == "openai"


def test_default_models_are_in_the_catalogue():
    for provider, model_id in DEFAULT_MODELS.items():
        assert model_note(get_model(f"{provider}/{model_id}")) is None


OLLAMA_TAGS = ["qwen3:4b", "llama3.2:latest"]


@pytest.fixture
def ollama_server(monkeypatch):
    tags = list(OLLAMA_TAGS)
    with fake_ollama(tags) as (server, hits):
        server.tags, server.hits = tags, hits
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.server_address[1]}")
        yield server


def test_default_model_is_ollamas_first_model(ollama_server):
    model, why = default_model_choice()
    host = f"http://127.0.0.1:{ollama_server.server_address[1]}"
    assert model == get_model("ollama/qwen3:4b") and model.base_url == host + "/v1"
    assert why == f"no provider key is set; the Ollama server at {host} lists it first"
    assert ollama_models() == ["qwen3:4b", "llama3.2:latest"]
    default_model_choice()
    assert ollama_server.hits == ["/api/tags"]  # asked once per process and host


def test_a_key_wins_over_ollama_without_asking_it(ollama_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key())
    assert default_model_choice()[0].provider == "anthropic"
    assert ollama_server.hits == []


def test_ollama_without_models_or_without_server_is_skipped(ollama_server, monkeypatch, closed_port):
    ollama_server.tags.clear()
    assert default_model_choice()[0] == get_model("local")
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    model, why = default_model_choice()
    assert model == get_model("local") and ollama_models() is None
    assert why == (
        "no ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY or OPENAI_API_KEY is set and no Ollama server answers at "
        f"http://127.0.0.1:{closed_port}"
    )


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
    # Pi's prices for claude-sonnet-4-5 (the catalogue's may change with genai-prices)
    pi_prices = {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
    cost = calculate_cost(get_model("anthropic/claude-sonnet-4-5", cost=pi_prices), usage)
    assert cost is usage.cost
    assert cost.to_pi_json() == pi_usage["cost"]
    # Same floats as JavaScript, and the same JSON text (JS writes 0, never 0.0).
    assert json.dumps(usage.to_pi_json()) == json.dumps(pi_usage)


def test_cost_all_four_kinds():
    model = get_model(
        "anthropic/claude-opus-4-5", cost={"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25}
    )
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


def test_the_sdks_base_url_variables_point_catalogue_models_elsewhere(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", " http://127.0.0.1:8080/v1 ")
    assert get_model("openai/gpt-4o-mini").base_url == "http://127.0.0.1:8080/v1"
    assert get_model("anthropic/claude-sonnet-4-5").base_url == "https://api.anthropic.com"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")  # set but empty: ignored, as the SDKs ignore it
    assert get_model("anthropic/claude-sonnet-4-5").base_url == "https://api.anthropic.com"
    assert get_model("openai/gpt-4o-mini", base_url="http://other/v1").base_url == "http://other/v1"
