"""The coding agent's context pipeline: the one ``transform_context`` its runs use, and its preview.

Three stages, in this order, before every LLM call:

1. your own ``transform_context`` (optional; sync or async; Pi's ``(messages, signal)`` form too). Pi's coding
   agent runs its extensions' ``context`` handlers here (``sdk.ts``);
2. the :class:`~pi_notebook.coding_agent.context_fit.ContextFitter`: a small model keeps only the latest exchange,
   and a message too large for the window is cut for the LLM (beyond Pi);
3. the :class:`~pi_notebook.coding_agent.compaction.Compactor`: the current summary stands in for what it replaced,
   and past the threshold the history is compacted first. Pi's coding agent compacts after a turn
   (``_checkCompaction`` in ``agent-session.ts``) and replaces the agent's messages; here it happens right before
   the call that needs it and the agent's history is never rewritten, which the core library allows as well.

:meth:`ContextPipeline.preview` computes the same stages without acting: no compaction, no notice, nothing
remembered. ``Agent.preview`` calls it, so a view of the next request runs exactly this code.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import as_agent_message, convert_to_llm
from ..agent_core.convert import await_stage, takes_signal
from ..agent_core.preview import resolve_awaitable
from ..ai import Model, TextContent, UserMessage
from .compaction import CompactionSettings, Compactor, find_cut_point
from .context_fit import LEFT_OUT, ContextFitter
from .messages import CompactionSummaryMessage

__all__ = [
    "COMPACTION_DUE", "IMAGE_OMITTED", "ContextPipeline", "ImagelessConvert", "PipelinePreview", "compaction_state",
    "convert_for", "overhead_tokens",
]  # fmt: skip

COMPACTION_DUE = "the history passes the compaction threshold: the next LLM call compacts it first"
"""What a preview says when the next call would compact first."""


def _checked(out: Any) -> list[Any]:
    if isinstance(out, (str, bytes, dict)) or not isinstance(out, Sequence):
        raise TypeError(f"your transform_context returned {type(out).__name__}, not a list of messages")
    return [as_agent_message(m) for m in out]


@dataclass
class PipelinePreview:
    """What each stage would hand on at the next call (the last :meth:`ContextPipeline.preview`)."""

    transformed: list[Any]
    """After your ``transform_context`` (the input when there is none)."""
    fitted: list[Any]
    """After the fitter."""
    view: list[Any]
    """After compaction's current view: what ``convert_to_llm`` receives."""
    compaction_due: bool = False
    """The call would compact first (the view is over the threshold, or compaction was forced)."""
    notes: list[str] = field(default_factory=list)


class ContextPipeline:
    """The three stages as one ``transform_context`` for the agent (see the module docstring).

    ``on_compaction(result, summary, first_kept)`` is told each compaction with the *stored* first kept message
    (not the fitter's cut copy of it); ``on_oversized(item)`` each message the fitter cuts, once, and, for a small
    model, the earlier turns it leaves out, once (a :class:`~pi_notebook.coding_agent.context_fit.LeftOut`; both say
    what the model does not see with ``item.describe(model_name)``).
    """

    def __init__(
        self,
        model: Model,
        settings: CompactionSettings,
        *,
        small: bool = False,
        user: Callable[..., Any] | None = None,
        on_compaction: Callable[..., Any] | None = None,
        on_oversized: Callable[..., Any] | None = None,
        previous_details: dict[str, Any] | None = None,
    ):
        self.model = model
        self.settings = settings
        self.small = small
        self.user = user
        """Your ``transform_context``, run first (``None``: none)."""
        self.fitter = ContextFitter(model, on_oversized=on_oversized, latest_only=small)
        # Small models summarise without a model: their own summary would neither fit nor help.
        self.compactor = Compactor(
            model, settings, on_compaction=self._compacted, digest=small, previous_details=previous_details
        )
        self._on_compaction = on_compaction
        self.last_preview: PipelinePreview | None = None

    @property
    def left_out(self) -> str | None:
        """Why a message this pipeline leaves out is not sent, in plain words, for the trace's rows (``None``: the
        trace's own words; so too with your own transform, which may leave messages out for its own reasons)."""
        return LEFT_OUT if self.small and self.user is None else None

    def fits(self, model: Model, settings: CompactionSettings) -> bool:
        """Whether a run with ``model`` and ``settings`` keeps this pipeline (and its compaction state)."""
        return self.model == model and self.settings == settings

    def _compacted(self, result: Any, summary: Any, first_kept: Any) -> Any:
        if self._on_compaction is not None:
            return self._on_compaction(result, summary, self.fitter.original_of(first_kept))
        return None

    async def __call__(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        staged = list(messages)
        if self.user is not None:
            extra = (signal,) if takes_signal(self.user) else ()
            staged = _checked(await await_stage("transform_context", self.user, staged, *extra))
        fitted = await self.fitter(staged)
        return await self.compactor(fitted, signal)

    def preview(self, messages: Sequence[Any]) -> list[Any]:
        """What a call would hand ``convert_to_llm``, computed without acting (your transform does run)."""
        staged = list(messages)
        if self.user is not None:
            out = self.user(staged, None) if takes_signal(self.user) else self.user(staged)
            staged = _checked(resolve_awaitable(out))
        fitted = self.fitter.preview(staged)
        view = self.compactor.preview(fitted)
        due = self.compactor.due(fitted)
        notes = [COMPACTION_DUE] if due else []
        self.last_preview = PipelinePreview(staged, fitted, view, due, notes)
        return view

    def compaction_state(self, history: Sequence[Any]) -> dict[str, Any]:
        """Where the next compaction would cut ``history`` (:func:`compaction_state`)."""
        return compaction_state(history, self.model, self.settings, self.compactor)


def compaction_state(
    history: Sequence[Any], model: Model | None, settings: CompactionSettings, compactor: Compactor | None = None
) -> dict[str, Any]:
    """Where the next compaction would cut ``history``, for a view's gauge: ``threshold`` (tokens above which Pi
    compacts: the window minus ``reserve_tokens``), ``cut`` (index of the first message it would keep, Pi's cut
    point for ``keep_recent_tokens``), ``summarise`` (the indices it would summarise), ``enabled``, and the two
    settings. ``{}`` without a model."""
    if model is None:
        return {}
    messages = [as_agent_message(m) for m in history]
    start = 0
    if compactor is not None and compactor.summary_message is not None:
        start = compactor.index_of_first_kept(messages) or 0
    elif messages and isinstance(messages[0], CompactionSummaryMessage):
        start = 1  # a history rebuilt from a compacted session: its summary is updated, not summarised
    cut = find_cut_point(messages, settings.keep_recent_tokens, start).first_kept_index if messages else 0
    return {
        "threshold": int(model.context_window or 0) - settings.reserve_tokens,
        "cut": cut,
        "summarise": list(range(start, cut)),
        "enabled": settings.enabled,
        "reserve_tokens": settings.reserve_tokens,
        "keep_recent_tokens": settings.keep_recent_tokens,
    }


def overhead_tokens(context: Any) -> tuple[int, int]:
    """The tokens a request spends besides its messages, estimated as compaction estimates messages (chars / 4):
    the system prompt's, and the tool definitions' (their names, descriptions and JSON schemas)."""
    from ..ai.jstext import js_json_stringify, js_length

    system = js_length(context.system_prompt or "")
    tools = sum(
        js_length(tool.name) + js_length(tool.description or "") + js_length(js_json_stringify(tool.parameters or {}))
        for tool in context.tools or ()
    )
    return math.ceil(system / 4), math.ceil(tools / 4)


IMAGE_OMITTED = "(image omitted: model does not support images)"
"""Pi's words for a user image a model cannot see (its ``transformMessages``)."""


class ImagelessConvert:
    """``convert_to_llm`` for a model that reads no images: what ``base`` converts, each user message's images
    replaced by Pi's placeholder (consecutive ones said once), so the model is told an image was there (a
    notebook cell's plot, an image in a prompt) instead of the provider dropping it without a word. Converts
    message by message when ``base`` does."""

    def __init__(self, base: Callable[..., Any]):
        self.base = base
        self.per_message = base is convert_to_llm or getattr(base, "per_message", False) is True

    def __call__(self, messages: list[Any]) -> Any:
        out = self.base(messages)
        if inspect.isawaitable(out):
            return self._after(out)
        return [_imageless(m) for m in out]

    async def _after(self, pending: Any) -> list[Any]:
        return [_imageless(m) for m in await pending]


def _imageless(message: Any) -> Any:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message
    if not any(block.type == "image" for block in message.content):
        return message
    blocks: list[Any] = []
    for block in message.content:
        if block.type != "image":
            blocks.append(block)
        elif not (blocks and blocks[-1].type == "text" and blocks[-1].text == IMAGE_OMITTED):
            blocks.append(TextContent(text=IMAGE_OMITTED))
    return message.model_copy(update={"content": blocks})


def convert_for(model: Model | None, base: Callable[..., Any] = convert_to_llm) -> Callable[..., Any]:
    """The converter a run with ``model`` uses: ``base`` itself for a model that reads images (or none known), an
    :class:`ImagelessConvert` of it for one that does not."""
    if isinstance(base, ImagelessConvert):
        base = base.base
    if model is None or "image" in model.input:
        return base
    return ImagelessConvert(base)
