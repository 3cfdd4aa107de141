"""Models by name: a small catalogue with context windows and prices, and Pi's cost calculation.

    get_model("anthropic/claude-sonnet-4-5")          # from the catalogue (models_catalogue.json)
    get_model("openai/gpt-4o-mini", max_tokens=4096)  # overrides are Model fields, in snake_case
    get_model("ollama/qwen3:4b")                      # a local Ollama server (OLLAMA_HOST)
    get_model("openai-compatible/my-model", base_url="http://127.0.0.1:8080/v1")
    get_model("local")                                # in-process SmolLM2-135M-Instruct, the offline default
    get_model("faux/faux-1")                          # the scripted test model

The catalogue's Anthropic and OpenAI entries are copied from Pi's ``models.generated.ts`` (the JSON file
records repository, path and commit). Pi serves OpenAI models through its Responses API; here they use
``openai-completions``, the OpenAI API pi_notebook implements.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from importlib import resources
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

from .keys import get_env_api_key
from .types import Cost, Model, Usage

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "PREFIXES",
    "UnknownModelError",
    "calculate_cost",
    "catalogue_source",
    "default_model",
    "get_model",
    "list_models",
    "ollama_base_url",
]

DEFAULT_ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
"""Used by :func:`default_model` when an Anthropic key is configured."""
DEFAULT_OPENAI_MODEL = "openai/gpt-5-mini"
"""Used by :func:`default_model` when only an OpenAI key is configured."""
DEFAULT_LOCAL_MODEL = "local/smollm2-135m"
"""The offline default: SmolLM2-135M-Instruct, run in-process."""

PREFIXES: dict[str, str] = {
    "anthropic": "Anthropic Messages API, models from the catalogue",
    "openai": "OpenAI Chat Completions API, models from the catalogue",
    "ollama": "a local Ollama server (OLLAMA_HOST, default http://localhost:11434)",
    "openai-compatible": "any OpenAI-compatible server (base_url=... or OPENAI_BASE_URL)",
    "openrouter": "OpenRouter (https://openrouter.ai/api/v1)",
    "groq": "Groq (https://api.groq.com/openai/v1)",
    "local": "an in-process GGUF model (default: SmolLM2-135M-Instruct)",
    "faux": "the scripted faux model, for tests and demos",
}
"""The provider prefixes :func:`get_model` understands, with what each one means."""

_CATALOGUE_PROVIDERS = ("anthropic", "openai")
_PRESET_BASE_URLS = {"openrouter": "https://openrouter.ai/api/v1", "groq": "https://api.groq.com/openai/v1"}

OLLAMA_DEFAULT_HOST = "http://localhost:11434"
# Pi's detectCompat does not recognise Ollama, so these are set explicitly: Ollama ignores `store`, has no
# `developer` role and no `reasoning_effort` (the same three flags Pi sets for its Copilot proxy models).
OLLAMA_COMPAT: dict[str, Any] = {
    "supportsDeveloperRole": False,
    "supportsStore": False,
    "supportsReasoningEffort": False,
}
_DEFAULT_CONTEXT_WINDOW = 128_000

# Local models known by name; anything else after ``local/`` is a model name or a path to a GGUF file.
_LOCAL_DEFAULT = "smollm2-135m"
_LOCAL_MODELS: dict[str, dict[str, Any]] = {
    # 2048 is the context the in-process llama.cpp runtime is started with for this model.
    _LOCAL_DEFAULT: {"name": "SmolLM2-135M-Instruct", "context_window": 2048, "max_tokens": 512},
}
_LOCAL_ALIASES = {"": _LOCAL_DEFAULT, "default": _LOCAL_DEFAULT, "smollm2-135m-instruct": _LOCAL_DEFAULT}


class UnknownModelError(LookupError):
    """A catalogue provider was asked for a model id it does not list."""

    def __init__(self, provider: str, model_id: str, known: list[str]):
        self.provider = provider
        """The provider prefix, e.g. ``"anthropic"``."""
        self.model_id = model_id
        """The id that was not found."""
        self.suggestions = difflib.get_close_matches(model_id, known, n=3, cutoff=0.5)
        """The closest known ids, best first (possibly empty)."""
        super().__init__(_unknown_message(provider, model_id, known, self.suggestions))


def _unknown_message(provider: str, model_id: str, known: list[str], suggestions: list[str]) -> str:
    lines = [f"Unknown model {provider}/{model_id!r}."]
    if suggestions:
        lines.append("Did you mean: " + ", ".join(f"{provider}/{s}" for s in suggestions) + "?")
    else:
        lines.append(f"Known {provider} models: " + ", ".join(known) + ".")
    example = suggestions[0] if suggestions else known[0]
    lines.append(
        "For a model that is not in the catalogue, start from a known one and override its fields, e.g. "
        f"get_model({f'{provider}/{example}'!r}, id={model_id!r}, name=..., context_window=...), "
        "or build one directly: pi_notebook.ai.Model(id=..., name=..., api=..., provider=..., base_url=...)."
    )
    return "\n".join(lines)


# --- the catalogue ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _catalogue() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("models_catalogue.json").read_text(encoding="utf-8")
    return json.loads(text)


def _catalogue_entries(provider: str) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in _catalogue()["models"] if m["provider"] == provider}


def catalogue_source() -> dict[str, Any]:
    """Where the catalogue's data came from: repository, path, commit and notes."""
    return json.loads(json.dumps(_catalogue()["source"]))


def list_models(provider: str | None = None) -> list[Model]:
    """The catalogue's models (all, or one provider's); ``local`` lists the default local model.

    Providers without a fixed list (``ollama``, ``openai-compatible``, ``openrouter``, ``groq``, ``faux``)
    give an empty list; an unknown provider raises :class:`ValueError`.
    """
    if provider is None:
        return [Model.model_validate(m) for m in _catalogue()["models"]] + [get_model(DEFAULT_LOCAL_MODEL)]
    if provider in _CATALOGUE_PROVIDERS:
        return [Model.model_validate(m) for m in _catalogue_entries(provider).values()]
    if provider == "local":
        return [get_model(DEFAULT_LOCAL_MODEL)]
    if provider in PREFIXES:
        return []
    raise ValueError(f"Unknown provider {provider!r}. {_prefix_help()}")


# --- get_model -------------------------------------------------------------------------------------------


def _prefix_help() -> str:
    return "Known prefixes:\n" + "\n".join(f"  {p}/<id>  — {what}" for p, what in PREFIXES.items())


def _field_names(overrides: dict[str, Any]) -> dict[str, Any]:
    # Overrides are Model fields in snake_case; Pi's camelCase spelling is accepted too.
    fields = Model.model_fields
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

    Prefixes: see :data:`PREFIXES`. ``local`` alone means the default SmolLM2-135M-Instruct. An id the
    catalogue does not list raises :class:`UnknownModelError` naming the closest known ids.
    """
    provider, sep, model_id = spec.partition("/")
    overrides = _field_names(overrides)
    if not sep and provider not in ("local", "faux"):
        raise ValueError(f"Model spec {spec!r} has no provider prefix; write 'provider/id'. {_prefix_help()}")
    if provider in _CATALOGUE_PROVIDERS:
        entries = _catalogue_entries(provider)
        if model_id not in entries:
            raise UnknownModelError(provider, model_id, list(entries))
        return _with_overrides(_pi_to_fields(entries[model_id]), overrides)
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
        from .providers import faux  # lazily: importing it registers the faux provider

        return faux.model(model_id or "faux-1", **overrides)
    raise ValueError(f"Unknown provider prefix {provider!r} in {spec!r}. {_prefix_help()}")


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


def _js_number(value: float) -> int | float:
    # JavaScript has one number type: JSON.stringify(0.0) is "0". Integral results become ints so the
    # usage JSON matches Pi's byte for byte.
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Pi's ``calculateCost``: fill ``usage.cost`` from the model's per-million prices and return it.

    Each part is ``price / 1_000_000 * tokens`` (divide first, as Pi does, for identical floats);
    ``total`` is the sum of the four parts in Pi's order.
    """
    prices, cost = model.cost, usage.cost
    cost.input = _js_number(prices.input / 1_000_000 * usage.input)
    cost.output = _js_number(prices.output / 1_000_000 * usage.output)
    cost.cache_read = _js_number(prices.cache_read / 1_000_000 * usage.cache_read)
    cost.cache_write = _js_number(prices.cache_write / 1_000_000 * usage.cache_write)
    cost.total = _js_number(float(cost.input + cost.output + cost.cache_read + cost.cache_write))
    return cost


# --- default ---------------------------------------------------------------------------------------------


def default_model() -> Model:
    """Anthropic's Sonnet if an Anthropic key is set, else OpenAI's mini model if an OpenAI key is set,
    else the offline local model."""
    if get_env_api_key("anthropic"):
        return get_model(DEFAULT_ANTHROPIC_MODEL)
    if get_env_api_key("openai"):
        return get_model(DEFAULT_OPENAI_MODEL)
    return get_model(DEFAULT_LOCAL_MODEL)
