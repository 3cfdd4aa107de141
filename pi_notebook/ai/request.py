"""``build_request()``: the exact body a provider would send for a model and a context (what Pi's
``onPayload`` hook sees), as a pure function: no network, no key needed. The inspector shows it."""

from __future__ import annotations

from typing import Any

from .api_registry import request_builder_for
from .options import StreamOptions
from .types import Context, Model


def build_request(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """The request body for ``model``'s API, from the builder registered for it. For an API without a builder
    (e.g. the faux provider, which receives the context itself) this is the context as Pi's JSON."""
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options, **kw)
    builder = request_builder_for(model.api)
    if builder is None:
        return ctx.to_pi_json()
    return builder(model, ctx, opts)
