"""The model catalogue: ids, prices and context windows from ``genai-prices``, with Pi's values on top.

Where each field comes from, for a catalogue provider (``anthropic``, ``openai``):

* **ids, names, prices, context windows**: the data bundled with the installed `genai-prices
  <https://github.com/pydantic/genai-prices>`_ package (kept current by the pydantic team), so
  ``pip install -U genai-prices`` brings new models and prices. Only the bundled data is read: nothing is
  fetched at run time (the package's optional remote refresh is never started). Prices are the ones in
  force today, in USD per million tokens; a tiered price (e.g. above 200k input tokens) counts at its base
  tier, as Pi's ``Model`` has one price per kind. A missing price is 0.
* **the Pi overlay** (``models_catalogue.json``): for the ids Pi's ``models.generated.ts`` listed (the
  repository, path and commit are recorded in the file), Pi's ``name``, ``reasoning``, ``input``,
  ``contextWindow`` and ``maxTokens`` win, so the golden payload fixtures (claude-sonnet-4-20250514,
  gpt-4o-mini, o4-mini, …) keep Pi's values. Their prices still come from genai-prices when it knows them
  (it does not round them as Pi does: 0.075 where Pi wrote 0.08).
* **what genai-prices does not say** (output limit, reasoning, image input) comes from the family rules in
  :data:`FAMILY_RULES`, first match wins, with :data:`PROVIDERS`' defaults after them.

An id that is not a catalogue id but that genai-prices recognises (a dated snapshot such as
``claude-sonnet-4-6-20260217``) gets that model's data under the id as typed. Without genai-prices (it
needs Python 3.11+) the catalogue is the Pi overlay alone.

genai-prices is imported on first use, not when ``pi_notebook`` is imported (its data module takes
~0.2 s to import).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from typing import Any

__all__ = [
    "CATALOGUE_PROVIDERS",
    "FAMILY_RULES",
    "PROVIDERS",
    "ProviderInfo",
    "catalogue_entries",
    "catalogue_source",
    "find_entry",
    "genai_prices_version",
]


@dataclass(frozen=True)
class ProviderInfo:
    """How pi_notebook calls one catalogue provider, and its defaults for what genai-prices omits."""

    api: str
    """Wire protocol (``Model.api``)."""
    base_url: str
    """API base URL."""
    context_window: int
    """Used when genai-prices gives no context window."""
    max_tokens: int
    """Output limit used when no family rule matches."""
    skip: str
    """Regex (searched in the genai-prices id) of entries that are not chat models this API serves."""


PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        api="anthropic-messages",
        base_url="https://api.anthropic.com",
        context_window=200_000,
        max_tokens=64_000,
        skip=r"^claude-(v1|2)$",  # pre-Messages-API models
    ),
    "openai": ProviderInfo(
        api="openai-responses",
        base_url="https://api.openai.com/v1",
        context_window=128_000,
        max_tokens=16_384,
        # Not chat models (embeddings, speech, images, legacy completions), or not served by Chat Completions
        # (pro, codex, deep research, computer use: kept out so that openai-completions/<id> works for every
        # listed model), or not an OpenAI API model (gpt-oss).
        skip=r"^(ada|babbage|curie|davinci|text-|tts-|whisper|moderation|computer-use|codex|gpt-oss)|ft[:-]|embedding"
        r"|transcribe|tts|realtime|audio|image|search|deep-research|-pro$|codex|cyber|rosalind|live|instruct"
        r"|:extended|-0301",
    ),
    "google": ProviderInfo(
        api="google-generative-ai",
        base_url="https://generativelanguage.googleapis.com/v1beta",  # Pi's (the version is part of it)
        context_window=1_048_576,
        max_tokens=65_536,
        # Gemini chat models only: not Claude or Gemma served by Google, embeddings, speech, image or live
        # models, nor the retired 1.x generation.
        skip=r"^(?!gemini-)|^gemini-(1\.|pro$|pro-1|flash-1)|embedding|tts|image|live|robotics|omni|nano-banana"
        r"|native-audio",
    ),
}
"""The providers whose models come from the catalogue, with Pi's ``api`` names: OpenAI models use the
Responses API, as in Pi (``get_model("openai-completions/<id>")`` serves them through Chat Completions)."""

CATALOGUE_PROVIDERS = tuple(PROVIDERS)

_TEXT, _TEXT_IMAGE = ["text"], ["text", "image"]

FAMILY_RULES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # From Anthropic's model overview (max output) and Pi's catalogue for the same families.
    "anthropic": [
        (r"^claude-3-7", {"reasoning": True, "maxTokens": 64_000}),
        (r"^claude-3-5", {"reasoning": False, "maxTokens": 8_192}),
        (r"^claude-3", {"reasoning": False, "maxTokens": 4_096}),
        (r"^claude-opus-4-([01]|2025)", {"reasoning": True, "maxTokens": 32_000}),
        (r"^claude-opus-4-[6-9]", {"reasoning": True, "maxTokens": 128_000}),
        (r"^claude-", {"reasoning": True, "maxTokens": 64_000, "input": _TEXT_IMAGE}),
    ],
    # From OpenAI's model pages and Pi's catalogue for the same families.
    "openai": [
        (r"^o\d-mini", {"reasoning": True, "maxTokens": 100_000, "input": _TEXT}),
        (r"^o\d", {"reasoning": True, "maxTokens": 100_000}),
        (r"^gpt-3\.5", {"reasoning": False, "maxTokens": 4_096, "input": _TEXT}),
        (r"^gpt-4-(turbo|vision)", {"reasoning": False, "maxTokens": 4_096}),
        (r"^gpt-4(-32k)?$", {"reasoning": False, "maxTokens": 4_096, "input": _TEXT}),
        (r"^gpt-4\.1", {"reasoning": False, "maxTokens": 32_768}),
        (r"^(gpt-4o|chatgpt-4o|gpt-4\.5)", {"reasoning": False, "maxTokens": 16_384}),
        (r"^gpt-5-chat", {"reasoning": False, "maxTokens": 16_384}),
        (r"chat", {"reasoning": True, "maxTokens": 16_384}),  # Pi: gpt-5.1/5.2-chat-latest reason
        (r"^gpt-\d", {"reasoning": True, "maxTokens": 128_000}),
    ],
    # From Google's Gemini model pages and Pi's catalogue for the same families.
    "google": [
        (r"^gemini-2\.0", {"reasoning": False, "maxTokens": 8_192}),
        (r"^gemini-", {"reasoning": True, "maxTokens": 65_536}),
    ],
}
"""Per provider, ``(regex on the model id, Pi fields)`` for what genai-prices does not record; the first
matching rule wins. ``input`` defaults to text and image."""

_OVERLAY_FIELDS = ("name", "reasoning", "input", "contextWindow", "maxTokens")


# --- the sources -----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _overlay() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("models_catalogue.json").read_text(encoding="utf-8")
    overlay: dict[str, Any] = json.loads(text)
    return overlay


@functools.lru_cache(maxsize=1)
def _genai_providers() -> dict[str, Any]:
    """genai-prices' bundled providers by id, or ``{}`` when the package is not installed."""
    try:
        from genai_prices.data import providers  # the bundled snapshot; never the remote refresh
    except ImportError:
        return {}
    return {p.id: p for p in providers if p.id in PROVIDERS}


def genai_prices_version() -> str | None:
    """The installed genai-prices version, or ``None`` without it."""
    from importlib import metadata  # email, zipfile, csv: imported when asked, not with the catalogue

    try:
        return metadata.version("genai-prices")
    except metadata.PackageNotFoundError:
        return None


def catalogue_source() -> dict[str, Any]:
    """Where the catalogue's data came from: the genai-prices version (``None`` if not installed) and the
    Pi overlay's repository, path, commit and notes."""
    return {"genai_prices": genai_prices_version(), "pi_overlay": json.loads(json.dumps(_overlay()["source"]))}


# --- building entries ------------------------------------------------------------------------------------


def _number(value: Any) -> int | float:
    if value is None:
        return 0
    base = getattr(value, "base", value)  # TieredPrices: the base tier
    from decimal import Decimal

    number = float(Decimal(base))
    return int(number) if number.is_integer() else number


def _prices(info: Any) -> dict[str, int | float] | None:
    prices = info.get_prices(datetime.now(timezone.utc))
    if prices.input_mtok is None or prices.output_mtok is None:
        return None  # not priced per token (speech, free tiers, …)
    return {
        "input": _number(prices.input_mtok),
        "output": _number(prices.output_mtok),
        "cacheRead": _number(prices.cache_read_mtok),
        "cacheWrite": _number(prices.cache_write_mtok),
    }


def _family(provider: str, model_id: str) -> dict[str, Any]:
    info = PROVIDERS[provider]
    fields: dict[str, Any] = {"reasoning": False, "input": _TEXT_IMAGE, "maxTokens": info.max_tokens}
    for pattern, values in FAMILY_RULES[provider]:
        if re.search(pattern, model_id):
            return {**fields, **values}
    return fields


def _from_genai(provider: str, model_id: str, info: Any) -> dict[str, Any] | None:
    cost = _prices(info)
    if cost is None:
        return None
    defaults = PROVIDERS[provider]
    entry = {
        "id": model_id,
        "name": info.name or model_id,
        "api": defaults.api,
        "provider": provider,
        "baseUrl": defaults.base_url,
        **_family(provider, model_id),
        "cost": cost,
        "contextWindow": info.context_window or defaults.context_window,
    }
    entry["maxTokens"] = min(entry["maxTokens"], entry["contextWindow"])
    return entry


def _with_overlay(entry: dict[str, Any] | None, pi: dict[str, Any]) -> dict[str, Any]:
    if entry is None:
        return dict(pi)
    return {**entry, **{k: pi[k] for k in _OVERLAY_FIELDS}}


def _genai_match(provider: str, model_id: str) -> Any:
    genai = _genai_providers().get(provider)
    return genai.find_model(model_id) if genai is not None else None


@functools.lru_cache(maxsize=len(PROVIDERS))
def _entries(provider: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    genai = _genai_providers().get(provider)
    skip = re.compile(PROVIDERS[provider].skip)
    for info in genai.models if genai is not None else ():
        if not skip.search(info.id) and (entry := _from_genai(provider, info.id, info)) is not None:
            out[info.id] = entry
    for pi in _overlay()["models"]:
        if pi["provider"] == provider:
            match = _genai_match(provider, pi["id"])
            out[pi["id"]] = _with_overlay(match and _from_genai(provider, pi["id"], match), pi)
    return dict(sorted(out.items()))


def catalogue_entries(provider: str) -> dict[str, dict[str, Any]]:
    """A catalogue provider's models as Pi JSON, by id (sorted; fresh copies)."""
    entries: dict[str, dict[str, Any]] = json.loads(json.dumps(_entries(provider)))
    return entries


def find_entry(provider: str, model_id: str) -> dict[str, Any] | None:
    """The Pi JSON of ``provider/model_id``: a catalogue id, or an id genai-prices recognises (a dated
    snapshot, an alias) under the id as typed; ``None`` if neither knows it."""
    entries = _entries(provider)
    if model_id in entries:
        entry: dict[str, Any] = json.loads(json.dumps(entries[model_id]))
        return entry
    match = _genai_match(provider, model_id)
    if match is not None:
        return _from_genai(provider, model_id, match)
    if provider not in _genai_providers() and not entries:
        return _from_rules(provider, model_id)  # no genai-prices and no Pi overlay (google): the family rules
    return None


def _from_rules(provider: str, model_id: str) -> dict[str, Any]:
    """An entry from the family rules and the provider's defaults alone, with no prices (costs show as 0)."""
    defaults = PROVIDERS[provider]
    entry = {
        "id": model_id,
        "name": model_id,
        "api": defaults.api,
        "provider": provider,
        "baseUrl": defaults.base_url,
        **_family(provider, model_id),
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": defaults.context_window,
    }
    entry["maxTokens"] = min(entry["maxTokens"], entry["contextWindow"])
    return entry
