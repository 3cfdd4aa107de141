"""Models by name: a catalogue with context windows and prices, the default model, Pi's cost calculation.

    get_model("anthropic/claude-sonnet-4-6")          # from the catalogue (see pi_notebook.ai.catalogue)
    get_model("openai/gpt-4o-mini", max_tokens=4096)  # overrides are Model fields, in snake_case
    get_model("openai-completions/gpt-4o-mini")       # the same model through Chat Completions
    get_model("ollama/qwen3:4b")                      # a local Ollama server (OLLAMA_HOST)
    get_model("openai-compatible/my-model", base_url="http://127.0.0.1:8080/v1")
    get_model("local")                                # in-process SmolLM2-135M-Instruct, the offline default
    get_model("faux/faux-1")                          # the scripted test model

The ``anthropic`` and ``openai`` models come from :mod:`.catalogue`: ids, prices and context windows from
the installed ``genai-prices`` package, Pi's own values on top for the models Pi lists. An id the catalogue
does not know still runs: like Pi's ``buildFallbackModel``, it gets the fields of the provider's default
model (:data:`DEFAULT_MODELS`) under its own id and name, and :func:`model_note` says so in one line (the
``%%agent`` magic prints it). As in Pi, OpenAI models use the Responses API (``openai-responses``: reasoning
summaries, encrypted reasoning carried between turns, ``prompt_cache_key``); ``openai-completions/<id>`` is the
same catalogue model (provider ``openai``, same key, prices and limits) through Chat Completions, for a proxy or
gateway that only speaks that API. In Python, ``get_model("openai/<id>", api="openai-completions")`` is the
same.

:func:`default_model_choice` picks the model when none is named, and says why: a provider key in the
environment, else the first model of an Ollama server that answers (one short local request per process
and host), else the in-process local model.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

from . import catalogue
from .keys import ENV_VARS, get_env_api_key
from .types import Cost, Model, Usage

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_MODELS",
    "DEFAULT_OPENAI_MODEL",
    "PREFIXES",
    "UnknownModelError",
    "calculate_cost",
    "catalogue_source",
    "default_model",
    "default_model_choice",
    "get_model",
    "list_models",
    "model_note",
    "ollama_base_url",
    "ollama_models",
]

DEFAULT_MODELS: dict[str, str] = {"anthropic": "claude-opus-4-8", "openai": "gpt-5.5"}
"""The model :func:`default_model_choice` picks for a provider whose key is set, in this order (Anthropic
first). These are Pi's coding-agent defaults (``defaultModelPerProvider`` in
``packages/coding-agent/src/core/model-resolver.ts``, earendil-works/pi at 021cba10). They are also the base
of a model the catalogue does not know (Pi's ``buildFallbackModel``)."""
DEFAULT_ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
"""The Anthropic model the inspector shows a request for (kept fixed so saved notebooks re-render the same)."""
DEFAULT_OPENAI_MODEL = "openai/gpt-5-mini"
"""The OpenAI model the inspector shows a request for (kept fixed so saved notebooks re-render the same)."""
DEFAULT_GOOGLE_MODEL = "google/gemini-2.5-flash"
"""The Gemini model the inspector shows a request for (kept fixed so saved notebooks re-render the same)."""
DEFAULT_LOCAL_MODEL = "local/smollm2-135m"
"""The offline default: SmolLM2-135M-Instruct, run in-process."""

PREFIXES: dict[str, str] = {
    "anthropic": "Anthropic Messages API, models from the catalogue",
    "openai": "OpenAI Responses API, models from the catalogue",
    "openai-completions": "the same OpenAI models through the Chat Completions API",
    "google": "Google Gemini API (GEMINI_API_KEY), models from the catalogue",
    "ollama": "a local Ollama server (OLLAMA_HOST, default http://localhost:11434)",
    "openai-compatible": "any OpenAI-compatible server (base_url=... or OPENAI_BASE_URL)",
    "openrouter": "OpenRouter (https://openrouter.ai/api/v1)",
    "groq": "Groq (https://api.groq.com/openai/v1)",
    "local": "an in-process GGUF model (default: SmolLM2-135M-Instruct)",
    "faux": "the scripted faux model, for tests and demos",
}
"""The provider prefixes :func:`get_model` understands, with what each one means."""

BASE_URL_VARIABLES = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "google": "GOOGLE_GEMINI_BASE_URL",
}
"""Environment variables that send a catalogue provider's models to another URL (a proxy, a gateway, a local test
server), as the official SDKs read them."""

_PRESET_BASE_URLS = {"openrouter": "https://openrouter.ai/api/v1", "groq": "https://api.groq.com/openai/v1"}

OLLAMA_DEFAULT_HOST = "http://localhost:11434"
# Pi's detectCompat does not recognise Ollama, so these are set explicitly: Ollama ignores `store`, has no
# `developer` role and no `reasoning_effort` (the same three flags Pi sets for its Copilot proxy models).
OLLAMA_COMPAT: dict[str, Any] = {
    "supportsDeveloperRole": False,
    "supportsStore": False,
    "supportsReasoningEffort": False,
}
OLLAMA_PROBE_TIMEOUT = 0.5
"""Seconds :func:`ollama_models` waits for an Ollama server (a local one answers in milliseconds)."""
_DEFAULT_CONTEXT_WINDOW = 128_000

# Local models known by name; anything else after ``local/`` is a model name or a path to a GGUF file.
_LOCAL_DEFAULT = "smollm2-135m"
_LOCAL_MODELS: dict[str, dict[str, Any]] = {
    # The context the in-process llama.cpp runtime is started with (SmolLM2 was trained on 8k).
    _LOCAL_DEFAULT: {"name": "SmolLM2-135M-Instruct", "context_window": 8192, "max_tokens": 256},
}
_LOCAL_ALIASES = {"": _LOCAL_DEFAULT, "default": _LOCAL_DEFAULT, "smollm2-135m-instruct": _LOCAL_DEFAULT}


class UnknownModelError(LookupError, ValueError):
    """A model spec names a provider prefix that :func:`get_model` does not know.

    (An unknown *id* of a known provider is not an error: see :func:`model_note`.) It is a ``ValueError``
    too, as bad specs always were.
    """

    def __init__(self, provider: str, spec: str):
        self.provider = provider
        """The unknown prefix, e.g. ``"antropic"``."""
        self.spec = spec
        """The whole spec that was asked for."""
        import difflib  # only for a misspelt prefix

        self.suggestions = difflib.get_close_matches(provider, list(PREFIXES), n=3, cutoff=0.5)
        """The closest known prefixes, best first (possibly empty)."""
        hint = f" Did you mean {self.suggestions[0]}/...?" if self.suggestions else ""
        super().__init__(f"Unknown provider prefix {provider!r} in {spec!r}.{hint} {_prefix_help()}")


# --- the catalogue ---------------------------------------------------------------------------------------


def catalogue_source() -> dict[str, Any]:
    """Where the catalogue's data came from: ``{"genai_prices": version or None, "pi_overlay": {repo, path,
    commit, notes, ...}}``."""
    return catalogue.catalogue_source()


def list_models(provider: str | None = None) -> list[Model]:
    """The catalogue's models (all, or one provider's); ``local`` lists the default local model.

    Providers without a fixed list (``ollama``, ``openai-compatible``, ``openrouter``, ``groq``, ``faux``)
    give an empty list; an unknown provider raises :class:`ValueError`.
    """
    if provider is None:
        catalogued = [m for p in catalogue.CATALOGUE_PROVIDERS for m in list_models(p)]
        return [*catalogued, get_model(DEFAULT_LOCAL_MODEL)]
    if provider in catalogue.CATALOGUE_PROVIDERS:
        return [Model.model_validate(m) for m in catalogue.catalogue_entries(provider).values()]
    if provider == "local":
        return [get_model(DEFAULT_LOCAL_MODEL)]
    if provider in PREFIXES:
        return []
    raise ValueError(f"Unknown provider {provider!r}. {_prefix_help()}")


# The newest models of Pi's list, the base for unknown ids when genai-prices (hence DEFAULT_MODELS) is missing.
_FALLBACK_WITHOUT_GENAI_PRICES = {"anthropic": "claude-opus-4-5", "openai": "gpt-5.2"}


# The base of unknown ids for catalogue providers that are not in DEFAULT_MODELS (Pi's defaultModelPerProvider).
_FALLBACK_MODELS = {"google": "gemini-2.5-pro"}


def _fallback_base(provider: str) -> tuple[str, dict[str, Any]]:
    first = DEFAULT_MODELS.get(provider) or _FALLBACK_MODELS[provider]
    for model_id in (first, _FALLBACK_WITHOUT_GENAI_PRICES.get(provider, first)):
        entry = catalogue.find_entry(provider, model_id)
        if entry is not None:
            return model_id, entry
    raise LookupError(f"the model catalogue has no {provider}/{first}")  # a broken install


def _fallback_entry(provider: str, model_id: str) -> dict[str, Any]:
    # Pi's buildFallbackModel: the provider's default model under the new id and name.
    return {**_fallback_base(provider)[1], "id": model_id, "name": model_id}


def model_note(model: Model) -> str | None:
    """One line for a model the catalogue does not know (its fields are the provider's defaults), else
    ``None``. ``%%agent`` prints it once per model."""
    if model.provider not in catalogue.CATALOGUE_PROVIDERS or catalogue.find_entry(model.provider, model.id):
        return None
    base = _fallback_base(model.provider)[0]
    version = catalogue.genai_prices_version()
    source = f"genai-prices {version}" if version else "Pi's list; genai-prices is not installed"
    return (
        f"Note: {model.provider}/{model.id} is not in the model catalogue ({source}); it runs with "
        f"{model.provider}'s defaults from {base}: context {model.context_window:,}, max output "
        f"{model.max_tokens:,}, ${model.cost.input:g}/${model.cost.output:g} per MTok (costs may be wrong). "
        "%agent_models lists the known models; pip install -U genai-prices brings new ones."
    )


# --- get_model -------------------------------------------------------------------------------------------


def _prefix_help() -> str:
    return "Known prefixes:\n" + "\n".join(f"  {p}/<id>  — {what}" for p, what in PREFIXES.items())


def _field_names(overrides: dict[str, Any]) -> dict[str, Any]:
    # Overrides are Model fields in snake_case; Pi's camelCase spelling is accepted too.
    fields = Model.__pydantic_fields__
    by_alias = {f.alias: name for name, f in fields.items() if f.alias}
    named = {}
    for key, value in overrides.items():
        name = key if key in fields else by_alias.get(key)
        if name is None:
            raise TypeError(f"get_model() got an unknown Model field {key!r}; fields: {', '.join(fields)}")
        named[name] = value
    return named


def _with_overrides(base: dict[str, Any], overrides: dict[str, Any]) -> Model:
    data = {**base, **_field_names(overrides)}
    # A None left in the data would be remembered as an explicit JSON null; None means "unset" here.
    return Model.model_validate({k: v for k, v in data.items() if v is not None})


def _pi_to_fields(pi_json: dict[str, Any]) -> dict[str, Any]:
    return Model.model_validate(pi_json).model_dump(by_alias=False, exclude_none=True)


def get_model(spec: str, **overrides: Any) -> Model:
    """The model named ``"provider/id"``; keyword overrides (Model fields in snake_case) win.

    Prefixes: see :data:`PREFIXES`. ``local`` alone means the default SmolLM2-135M-Instruct.
    ``openai-completions/<id>`` is ``openai/<id>`` with ``api="openai-completions"``. An
    ``anthropic`` or ``openai`` id the catalogue does not know gets the provider's defaults (see
    :func:`model_note`); ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` replace their base URL, as in the official
    SDKs. An unknown prefix raises :class:`UnknownModelError`.
    """
    provider, sep, model_id = spec.partition("/")
    overrides = _field_names(overrides)
    if not sep and provider not in ("local", "faux"):
        raise ValueError(f"Model spec {spec!r} has no provider prefix; write 'provider/id'. {_prefix_help()}")
    if provider == "openai-completions":  # the catalogue's OpenAI model, through Chat Completions
        if not model_id:
            raise ValueError("Missing model id: write 'openai-completions/<model id>' (%agent_models lists them).")
        return get_model(f"openai/{model_id}", **{"api": "openai-completions", **overrides})
    if provider in catalogue.CATALOGUE_PROVIDERS:
        if not model_id:
            raise ValueError(f"Missing model id: write '{provider}/<model id>' (%agent_models lists them).")
        entry = catalogue.find_entry(provider, model_id) or _fallback_entry(provider, model_id)
        fields = _pi_to_fields(entry)
        if os.environ.get(BASE_URL_VARIABLES.get(provider, ""), "").strip():  # a proxy or gateway, as the SDKs do
            fields["base_url"] = os.environ[BASE_URL_VARIABLES[provider]].strip()
        return _with_overrides(fields, overrides)
    if provider == "ollama":
        return _openai_like("ollama", model_id, ollama_base_url(), OLLAMA_COMPAT, overrides)
    if provider == "openai-compatible":
        base_url = overrides.pop("base_url", None) or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError(
                f"No base URL for {spec!r}: pass base_url='http://host:port/v1' to get_model(), "
                "or set OPENAI_BASE_URL in the environment."
            )
        return _openai_like("openai-compatible", model_id, base_url, None, overrides)
    if provider in _PRESET_BASE_URLS:
        return _openai_like(provider, model_id, _PRESET_BASE_URLS[provider], None, overrides)
    if provider == "local":
        return _local_model(model_id, overrides)
    if provider == "faux":
        from . import faux  # lazily: only tests and demos use it

        return faux.model(model_id or "faux-1", **overrides)
    raise UnknownModelError(provider, spec)


def _openai_like(
    provider: str, model_id: str, base_url: str, compat: dict[str, Any] | None, overrides: dict[str, Any]
) -> Model:
    if not model_id:
        raise ValueError(f"Missing model id: write '{provider}/<model id>'.")
    base: dict[str, Any] = {
        "id": model_id,
        "name": model_id,
        "api": "openai-completions",
        "provider": provider,
        "base_url": base_url.rstrip("/"),
        "context_window": _DEFAULT_CONTEXT_WINDOW,
        "compat": dict(compat) if compat else None,
    }
    return _with_overrides(base, overrides)


def _local_model(name: str, overrides: dict[str, Any]) -> Model:
    key = _LOCAL_ALIASES.get(name.lower(), name.lower())
    known = _LOCAL_MODELS.get(key)
    if known is not None:
        base = {"id": key, **known}
    else:
        # A name the local provider resolves, or a path to a GGUF file: the id keeps it verbatim.
        base = {"id": name, "name": PurePath(name).stem or name, "context_window": 2048, "max_tokens": 512}
    base.update(api="local", provider="local", input=["text"])
    return _with_overrides(base, overrides)


def ollama_base_url(host: str | None = None) -> str:
    """Ollama's OpenAI-compatible base URL: ``host`` or ``OLLAMA_HOST`` (``host``, ``host:port`` or a URL,
    default ``http://localhost:11434``) followed by ``/v1``."""
    raw = (host if host is not None else os.environ.get("OLLAMA_HOST", "")).strip()
    if not raw:
        return OLLAMA_DEFAULT_HOST + "/v1"
    has_scheme = "://" in raw
    parts = urlsplit(raw if has_scheme else "http://" + raw)
    try:
        port = parts.port
    except ValueError as e:
        raise ValueError(f"OLLAMA_HOST {raw!r} is not host, host:port or a URL: {e}") from None
    if port is None and not has_scheme:
        port = 11434  # a bare host name means Ollama's own port, as the ollama client reads it
    hostname = parts.hostname or "localhost"
    # The server is often told to listen on 0.0.0.0 through this same variable: connect to loopback then.
    if hostname in ("0.0.0.0", "::"):
        hostname = "localhost"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    netloc = f"{hostname}:{port}" if port else hostname
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{netloc}{path}/v1"


# --- cost ------------------------------------------------------------------------------------------------


def _integral_as_int(value: float) -> int | float:
    # JavaScript has one number type: JSON.stringify(0.0) is "0". Integral results become ints so the
    # usage JSON matches Pi's byte for byte.
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Pi's ``calculateCost``: fill ``usage.cost`` from the model's per-million prices and return it.

    Each part is ``price / 1_000_000 * tokens`` (divide first, as Pi does, for identical floats);
    ``total`` is the sum of the four parts in Pi's order.
    """
    prices, cost = model.cost, usage.cost
    parts = (
        _integral_as_int(prices.input / 1_000_000 * usage.input),
        _integral_as_int(prices.output / 1_000_000 * usage.output),
        _integral_as_int(prices.cache_read / 1_000_000 * usage.cache_read),
        _integral_as_int(prices.cache_write / 1_000_000 * usage.cache_write),
    )
    total = _integral_as_int(float(parts[0] + parts[1] + parts[2] + parts[3]))
    cost.set_numbers(input=parts[0], output=parts[1], cache_read=parts[2], cache_write=parts[3], total=total)
    return cost


# --- default ---------------------------------------------------------------------------------------------


def _ollama_host(host: str | None = None) -> str:
    return ollama_base_url(host).removesuffix("/v1")


@functools.lru_cache(maxsize=16)
def _ollama_tags(host: str) -> tuple[str, ...] | None:
    import urllib.request  # http.client, email and ssl: only when a probe is made

    try:
        with urllib.request.urlopen(f"{host}/api/tags", timeout=OLLAMA_PROBE_TIMEOUT) as response:
            body = json.load(response)
    except (OSError, ValueError):  # no server, a timeout, or something else answering on that port
        return None
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list):
        return None
    names = [m.get("model") or m.get("name") for m in models if isinstance(m, dict)]
    return tuple(n for n in names if isinstance(n, str) and n)


def ollama_models(host: str | None = None) -> list[str] | None:
    """The models an Ollama server lists (``GET /api/tags``, first as it lists them), or ``None`` if no
    server answers within :data:`OLLAMA_PROBE_TIMEOUT`. ``host`` as for :func:`ollama_base_url`.

    Asked once per process and host: later calls return the first answer (no answer included).
    """
    tags = _ollama_tags(_ollama_host(host))
    return None if tags is None else list(tags)


def _key_variable(provider: str) -> str | None:
    return next((name for name in ENV_VARS.get(provider, ()) if os.environ.get(name)), None)


def default_model_choice() -> tuple[Model, str]:
    """The model to use when none is named, and why, e.g. ``(Model, "ANTHROPIC_API_KEY is set")``.

    In order: the :data:`DEFAULT_MODELS` entry of the first provider whose key is in the environment (an
    empty variable counts as unset, as in Pi); else the first model of an Ollama server answering at
    ``OLLAMA_HOST`` (see :func:`ollama_models`); else the offline local model.
    """
    for provider, model_id in DEFAULT_MODELS.items():
        if get_env_api_key(provider):
            return get_model(f"{provider}/{model_id}"), f"{_key_variable(provider)} is set"
    host = _ollama_host()
    tags = ollama_models()
    if tags:
        return get_model(f"ollama/{tags[0]}"), f"no provider key is set; the Ollama server at {host} lists it first"
    names = [v for p in DEFAULT_MODELS for v in ENV_VARS[p]]
    keys = ", ".join(names[:-1]) + f" or {names[-1]}"
    return get_model(DEFAULT_LOCAL_MODEL), f"no {keys} is set and no Ollama server answers at {host}"


def default_model() -> Model:
    """The model of :func:`default_model_choice`, without the reason."""
    return default_model_choice()[0]
