"""``%agent_models [FILTER]``, the default-model line of ``%agent_config``, and the note for unknown ids.

``%agent_models`` lists what ``--model`` accepts by name: the catalogue (see :mod:`pi_notebook.ai.catalogue`),
the default local model, and the models of an Ollama server if one answers. Each row shows the context window,
the prices (USD per million tokens, input / output) and whether the provider's key is set — never the key.
"""

from __future__ import annotations

from typing import Any

from ..ai.catalogue import genai_prices_version
from ..ai.keys import ENV_VARS, KEYLESS_PROVIDERS, get_env_api_key
from ..ai.models import (
    DEFAULT_MODELS,
    default_model_choice,
    get_model,
    list_models,
    model_note,
    ollama_base_url,
    ollama_models,
)

_noted: set[str] = set()  # models whose note this kernel has already printed


def default_model_line(configured: str = "") -> str:
    """``default model: anthropic/claude-opus-4-8 (ANTHROPIC_API_KEY is set)`` — the model ``%%agent`` uses
    without ``--model``, and why. Asks an Ollama server at most once per process (see ``ollama_models``)."""
    if configured:
        return f"default model: {configured} (the default_model setting)"
    model, why = default_model_choice()
    return f"default model: {model.provider}/{model.id} ({why})"


def print_model_note(model: Any) -> None:
    """Print :func:`~pi_notebook.ai.model_note` for ``model``, the first time this kernel uses it."""
    note = model_note(model)
    spec = f"{model.provider}/{model.id}"
    if note and spec not in _noted:
        _noted.add(spec)
        print(note)


def _models() -> list[Any]:
    models = list_models()
    for name in ollama_models() or ():
        models.append(get_model(f"ollama/{name}"))
    return models


def _matches(model: Any, words: list[str]) -> bool:
    text = f"{model.provider}/{model.id} {model.name}".lower()
    return all(word in text for word in words)


def _price(value: float) -> str:
    return f"{value:g}"


def _key_state(provider: str) -> str:
    if provider in KEYLESS_PROVIDERS:
        return "not needed"
    return "set" if get_env_api_key(provider) else "not set"


def _default_spec(configured: str) -> str | None:
    try:
        model = get_model(configured) if configured else default_model_choice()[0]
    except ValueError:  # a bad default_model setting: %%agent reports it; nothing is marked here
        return None
    return f"{model.provider}/{model.id}"


def models_table(line: str = "", configured: str = "") -> str:
    """The text ``%agent_models`` prints: models whose ``provider/id`` or name contain every word of ``line``
    (case-insensitive), one per row; ``*`` marks the default model."""
    words = line.lower().split()
    models = [m for m in _models() if _matches(m, words)]
    if not models:
        return f"No model matches {line.strip()!r}; %agent_models without a filter lists them all."
    default_spec = _default_spec(configured)
    rows = [("", "model", "context", "input", "output", "key")]
    for m in models:
        spec = f"{m.provider}/{m.id}"
        mark = "*" if spec == default_spec else ""
        cost = m.cost
        rows.append(
            (mark, spec, f"{m.context_window:,}", _price(cost.input), _price(cost.output), _key_state(m.provider))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    aligns = ("<", "<", ">", ">", ">", "<")
    lines = [
        "  ".join(f"{cell:{a}{w}}" for cell, a, w in zip(row, aligns, widths, strict=True)).rstrip() for row in rows
    ]
    version = genai_prices_version()
    source = f"genai-prices {version}" if version else "Pi's list (genai-prices is not installed)"
    footer = [f"Prices in USD per million tokens (input / output), from {source}. * = the default model."]
    for provider in DEFAULT_MODELS:
        if any(m.provider == provider for m in models) and not get_env_api_key(provider):
            footer.append(f"Set {' or '.join(ENV_VARS[provider])} in the kernel's environment to use {provider}.")
    if ollama_models() is None:
        footer.append(f"No Ollama server answers at {ollama_base_url().removesuffix('/v1')} (OLLAMA_HOST).")
    return "\n".join([*lines, "", *footer])


def models_command(line: str, configured: str = "") -> None:
    """Print :func:`models_table` (what ``%agent_models [FILTER]`` shows)."""
    print(models_table(line, configured))
