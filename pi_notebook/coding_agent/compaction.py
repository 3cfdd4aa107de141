"""Compaction: when the history gets too long for the context window, summarise its older part.

Pi's rules (``packages/coding-agent/src/core/compaction/compaction.ts``): estimate the context size from the
last assistant usage plus chars/4 for what came after; when it exceeds ``context_window - reserve_tokens``,
keep the newest ``keep_recent_tokens`` verbatim (cutting only where a turn may start, never at a tool result)
and replace everything before with an LLM-written structured summary. A turn cut in two gets a second,
smaller summary of its beginning. Pi works on session entries; these functions work on a list of
AgentMessages, and the caller maps the first kept message back to its entry id.

:class:`Compactor` packages this as a ``transform_context`` for the :class:`~pi_notebook.agent_core.agent.Agent`,
so compaction happens right before the LLM call that needs it (Pi checks after each run instead).

Where we differ from Pi, and why: custom and branch-summary messages count towards the kept budget (Pi
skips them because they are not ``message`` entries); usage reported before the last summary, or a usage of
zero, is not trusted (as newer Pi); a split turn with nothing before it keeps the previous summary (Pi
writes "No prior history." and loses it); an aborted summary call fails like an error; and nothing to
summarise is an error rather than a summary of an empty conversation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent_core import OpaqueMessage, as_agent_message, convert_to_llm, to_pi_json
from ..ai import AssistantMessage, Context, Model, TextContent, Usage, UserMessage, complete
from ..ai.jstext import js_json_stringify, js_length
from .compaction_prompts import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZATION_SYSTEM_PROMPT,
    file_lists,
    format_file_operations,
    serialize_conversation,
    summarization_prompt,
    turn_prefix_prompt,
)
from .digest import digest
from .messages import CompactionSummaryMessage

IMAGE_CHARS = 4800
"""Characters counted for an image in a tool result or custom message (1200 tokens)."""

# Where the kept part may begin: never at a tool result, which must follow its tool call.
_CUT_ROLES = frozenset({"user", "assistant", "custom", "bashExecution", "branchSummary", "compactionSummary"})
# What opens a turn (the user speaking, in one form or another).
_TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary"})


class CompactionError(RuntimeError):
    """A summary could not be written (the LLM call failed) or there is nothing to compact."""


@dataclass(frozen=True)
class CompactionSettings:
    """Pi's ``compaction`` settings."""

    enabled: bool = True
    """Compact automatically when the context passes the threshold."""
    reserve_tokens: int = 16384
    """Room kept free for the reply: compaction starts above ``context_window - reserve_tokens``."""
    keep_recent_tokens: int = 20000
    """How much of the newest history to keep verbatim (estimated tokens)."""


@dataclass(frozen=True)
class CutPoint:
    """Where the kept part of the history begins."""

    first_kept_index: int
    """Index of the first message kept verbatim."""
    turn_start_index: int
    """When the cut splits a turn, the index of the message that opened it; otherwise -1."""
    is_split_turn: bool
    """True when the first kept message is not a user message, so the turn's start is summarised apart."""


@dataclass
class CompactionResult:
    """A summary and what it replaces (Pi's ``CompactionResult``, with an index instead of an entry id)."""

    summary: str
    """The summary text, file lists included."""
    first_kept_index: int
    """Index, in the compacted list, of the first message kept verbatim."""
    tokens_before: int
    """Estimated context tokens before compaction."""
    details: dict[str, Any] = field(default_factory=dict)
    """``{"readFiles": [...], "modifiedFiles": [...]}``, as Pi stores in the compaction entry."""


# --- token estimates -----------------------------------------------------------------------------------


def calculate_context_tokens(usage: Usage) -> int:
    """Context size from a response's usage: ``total_tokens``, or the sum of its parts when that is 0."""
    return int(usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write)


def _content_chars(content: Any, image_chars: int) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content:
        if block.type == "text" and block.text:
            chars += js_length(block.text)
        elif block.type == "image":
            chars += image_chars
    return chars


def estimate_tokens(message: Any) -> int:
    """A message's size in tokens, ceil(chars / 4) with Pi's rules: user text (images not counted); assistant
    text, thinking, tool names and JSON arguments; custom and tool-result text plus 4800 chars per image;
    shell command and output; summaries' text. A role an app registered (a notebook cell) counts as the messages
    its converter makes, images included (Pi knows no such role); a role nobody registered counts 0."""
    m = as_agent_message(message)
    if isinstance(m, OpaqueMessage):
        return 0
    role = getattr(m, "role", None)
    if role == "user":
        chars = _content_chars(m.content, 0)
    elif role == "assistant":
        chars = 0
        for block in m.content:
            if block.type == "text":
                chars += js_length(block.text)
            elif block.type == "thinking":
                chars += js_length(block.thinking)
            elif block.type == "toolCall":
                chars += js_length(block.name) + js_length(js_json_stringify(block.arguments))
    elif role in ("custom", "toolResult"):
        chars = _content_chars(m.content, IMAGE_CHARS)
    elif role == "bashExecution":
        chars = js_length(m.command) + js_length(m.output)
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_length(m.summary)
    else:
        return _app_role_tokens(m)
    return math.ceil(chars / 4)


def _app_role_tokens(message: Any) -> int:
    """What an app's own role weighs: the messages its converter makes (a user message's images counted too)."""
    try:
        converted = convert_to_llm([message])
    except Exception:  # an app's converter failed: it sends nothing, so it weighs nothing
        return 0
    return sum(
        math.ceil(_content_chars(m.content, IMAGE_CHARS) / 4) if m.role == "user" else estimate_tokens(m)
        for m in converted
    )


def _reported_usage(message: Any) -> Usage | None:
    # Failed and aborted responses carry no meaningful usage; neither do responses that report none at all.
    if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
        return None
    return message.usage if calculate_context_tokens(message.usage) > 0 else None


def _estimate(messages: Sequence[Any], usage_after: float | None = None) -> int:
    for i in range(len(messages) - 1, -1, -1):
        usage = _reported_usage(messages[i])
        if usage is not None and (usage_after is None or messages[i].timestamp > usage_after):
            return calculate_context_tokens(usage) + sum(estimate_tokens(m) for m in messages[i + 1 :])
    return sum(estimate_tokens(m) for m in messages)


def estimate_context_tokens(messages: Sequence[Any]) -> int:
    """The context size of ``messages``: the usage of the last successful assistant response plus estimates
    of the messages after it; every message estimated when no response reported usage."""
    return _estimate([as_agent_message(m) for m in messages])


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """Pi's trigger: enabled and ``context_tokens > context_window - reserve_tokens``."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens


# --- the cut -------------------------------------------------------------------------------------------


def find_cut_point(messages: Sequence[Any], keep_recent_tokens: int, start: int = 0) -> CutPoint:
    """Where to cut ``messages[start:]`` so that about ``keep_recent_tokens`` of the newest history is kept.

    Walk back from the newest message adding estimates until the budget is reached, then cut at the first
    valid cut point at or after that message (user, assistant, custom, bashExecution, branchSummary or
    compactionSummary — never a tool result). With no such point the whole range is kept.
    """
    roles = [getattr(as_agent_message(m), "role", None) for m in messages]
    cuts = [i for i in range(start, len(messages)) if roles[i] in _CUT_ROLES]
    if not cuts:
        return CutPoint(start, -1, False)
    cut = cuts[0]
    total = 0
    for i in range(len(messages) - 1, start - 1, -1):
        total += estimate_tokens(messages[i])
        if total >= keep_recent_tokens:
            cut = next((c for c in cuts if c >= i), cut)
            break
    if roles[cut] == "user":
        return CutPoint(cut, -1, False)
    turn_start = next((i for i in range(cut, start - 1, -1) if roles[i] in _TURN_START_ROLES), -1)
    return CutPoint(cut, turn_start, turn_start != -1)


def _spans(messages: list[Any], start: int, cut: CutPoint) -> tuple[list[Any], list[Any]]:
    """``(history, turn_prefix)``: what is summarised, and the start of a split turn summarised apart."""
    if cut.is_split_turn:
        return messages[start : cut.turn_start_index], messages[cut.turn_start_index : cut.first_kept_index]
    return messages[start : cut.first_kept_index], []


# --- summaries -----------------------------------------------------------------------------------------


async def _summarize(model: Model, prompt: str, options: dict[str, Any], failure: str) -> str:
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=prompt)])]
    )
    try:
        response = await complete(model, context, options)
    except Exception as e:  # e.g. no provider for the model's api: still a failed summary, never a crash
        raise CompactionError(f"{failure}: {e}") from e
    # Pi checks only "error", but an aborted call has no usable text: an empty summary loses history.
    if response.stop_reason in ("error", "aborted"):
        raise CompactionError(f"{failure}: {response.error_message or 'Unknown error'}")
    return "\n".join(block.text for block in response.content if block.type == "text")


async def generate_summary(
    messages: Sequence[Any],
    model: Model,
    reserve_tokens: int,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    **stream_options: Any,
) -> str:
    """Ask ``model`` for a structured summary of ``messages`` (folded into ``previous_summary`` if given).

    One ``complete`` call with Pi's system prompt, ``max_tokens = floor(0.8 × reserve_tokens)`` and
    ``reasoning="high"`` when the model reasons; ``stream_options`` (e.g. ``api_key``) are passed on. A
    failed call raises :class:`CompactionError` (``Summarization failed: ...``).
    """
    conversation = serialize_conversation(convert_to_llm(messages))
    prompt = summarization_prompt(conversation, previous_summary, custom_instructions)
    options = {**stream_options, "max_tokens": math.floor(0.8 * reserve_tokens)}
    if model.reasoning:
        options["reasoning"] = "high"
    return await _summarize(model, prompt, options, "Summarization failed")


async def generate_turn_prefix_summary(
    messages: Sequence[Any], model: Model, reserve_tokens: int, **stream_options: Any
) -> str:
    """Summarise the start of a turn whose end is kept (``max_tokens = floor(0.5 × reserve_tokens)``). A
    failed call raises :class:`CompactionError` (``Turn prefix summarization failed: ...``)."""
    prompt = turn_prefix_prompt(serialize_conversation(convert_to_llm(messages)))
    options = {**stream_options, "max_tokens": math.floor(0.5 * reserve_tokens)}
    return await _summarize(model, prompt, options, "Turn prefix summarization failed")


async def _both(first: Awaitable[str], second: Awaitable[str]) -> tuple[str, str]:
    # Both calls run at once, as in Pi; wait for both so no failure is left unobserved, then report the first.
    first_result, second_result = await asyncio.gather(first, second, return_exceptions=True)
    if isinstance(first_result, BaseException):
        raise first_result
    if isinstance(second_result, BaseException):
        raise second_result
    return first_result, second_result


async def compact(
    messages: Sequence[Any],
    model: Model,
    settings: CompactionSettings = CompactionSettings(),
    *,
    previous_summary: str | None = None,
    previous_details: dict[str, Any] | None = None,
    custom_instructions: str | None = None,
    **stream_options: Any,
) -> CompactionResult:
    """Summarise the older part of ``messages``; keep the newest ``settings.keep_recent_tokens`` verbatim.

    A list that starts with a :class:`CompactionSummaryMessage` (a history rebuilt from a compacted session)
    was compacted before: that summary is the previous one (unless ``previous_summary`` is given) and is
    updated with Pi's update prompt. A split turn's start is summarised in parallel and appended under
    ``**Turn Context (split turn):**``. The read/modified file lists (merged with ``previous_details``) are
    appended to the summary and returned as ``details``. Raises :class:`CompactionError` when a summary call
    fails or nothing precedes the cut.
    """
    messages = [as_agent_message(m) for m in messages]
    start = 1 if messages and isinstance(messages[0], CompactionSummaryMessage) else 0
    if start and previous_summary is None:
        previous_summary = messages[0].summary
    cut = find_cut_point(messages, settings.keep_recent_tokens, start)
    history, prefix = _spans(messages, start, cut)
    if not history and not prefix:
        raise CompactionError("Nothing to compact (session too small)")
    reserve = settings.reserve_tokens

    def history_summary() -> Awaitable[str]:
        return generate_summary(
            history, model, reserve, previous_summary=previous_summary,
            custom_instructions=custom_instructions, **stream_options,
        )  # fmt: skip

    if prefix:
        # With nothing before the split turn Pi writes "No prior history." even after an earlier compaction,
        # dropping that summary; we keep the previous summary instead.
        earlier = history_summary() if history else _ready(previous_summary or NO_PRIOR_HISTORY)
        turn_prefix = generate_turn_prefix_summary(prefix, model, reserve, **stream_options)
        before, turn = await _both(earlier, turn_prefix)
        summary = f"{before}{SPLIT_TURN_SEPARATOR}{turn}"
    else:
        summary = await history_summary()
    return _result(messages, cut, summary, [*history, *prefix], previous_details)


def _result(
    messages: list[Any], cut: CutPoint, summary: str, summarised: list[Any], previous_details: dict[str, Any] | None
) -> CompactionResult:
    # The file lists of what was summarised (merged with the previous ones) follow the summary, as in Pi.
    read_files, modified_files = file_lists(summarised, previous_details)
    return CompactionResult(
        summary=summary + format_file_operations(read_files, modified_files),
        first_kept_index=cut.first_kept_index,
        tokens_before=estimate_context_tokens(messages),
        details={"readFiles": read_files, "modifiedFiles": modified_files},
    )


DIGEST_HEADING = "Earlier in this conversation (listed without a model):\n"


def compact_digest(
    messages: Sequence[Any], settings: CompactionSettings, *, previous_details: dict[str, Any] | None = None
) -> CompactionResult:
    """:func:`compact` without a model: the summary lists the prompts, commands, tool calls and answers of the
    older part (the previous summary, if any, comes first)."""
    messages = [as_agent_message(m) for m in messages]
    start = 1 if messages and isinstance(messages[0], CompactionSummaryMessage) else 0
    cut = find_cut_point(messages, settings.keep_recent_tokens, start)
    history, prefix = _spans(messages, start, cut)
    if not history and not prefix:
        raise CompactionError("Nothing to compact (session too small)")
    lines = digest([*history, *prefix]) or "- (nothing but context)"
    summary = (f"{messages[0].summary}\n\n" if start else "") + DIGEST_HEADING + lines
    return _result(messages, cut, summary, [*history, *prefix], previous_details)


async def _ready(value: str) -> str:
    return value


# --- compaction as transform_context -------------------------------------------------------------------

OnCompaction = Callable[[CompactionResult, CompactionSummaryMessage, Any], "Awaitable[None] | None"]


class Compactor:
    """Compaction as a ``transform_context``: ``Agent(model, transform_context=Compactor(model))``.

    Before every LLM call it receives the agent's full history and returns what the LLM should see. Once it
    has compacted, it remembers the summary and the first kept message, so later calls return
    ``[summary, first kept message, ...everything after]`` without summarising again; when that view passes
    Pi's threshold again it compacts again, updating the previous summary. The agent's history itself is
    never changed: a failed summary raises :class:`CompactionError` (the loop turns it into an error
    message) and loses nothing.

    ``on_compaction(result, summary_message, first_kept_message)`` (sync or async) is called after each
    compaction, e.g. to append a ``compaction`` entry to the session file with the entry id of
    ``first_kept_message``. ``summary_model`` writes the summaries (default: ``model``); ``stream_options``
    (e.g. ``api_key``) go to its calls::

        def store(result, summary, first_kept):
            session.append_compaction(result.summary, entry_id_of[id(first_kept)], result.tokens_before,
                                      result.details)
    """

    def __init__(
        self,
        model: Model,
        settings: CompactionSettings = CompactionSettings(),
        *,
        summary_model: Model | None = None,
        on_compaction: OnCompaction | None = None,
        digest: bool = False,
        previous_details: dict[str, Any] | None = None,
        **stream_options: Any,
    ):
        self.model = model
        self.digest = digest
        """Write summaries without a model (a list of what was asked, run and answered). For small models,
        whose own summary would neither fit their window nor be worth reading."""
        self.settings = settings
        self.summary_model = summary_model or model
        self.on_compaction = on_compaction
        self.stream_options = stream_options
        self._summary: CompactionSummaryMessage | None = None
        self._first_kept: Any = None
        self._first_kept_json: dict[str, Any] | None = None
        # The file lists of the compaction a reloaded history starts with (Pi reads them back from the last
        # compaction entry's details), merged into the next summary's lists.
        self._details: dict[str, Any] | None = previous_details
        self._forced = False

    @property
    def summary_message(self) -> CompactionSummaryMessage | None:
        """The summary now standing in for the compacted history, if any."""
        return self._summary

    @property
    def first_kept_message(self) -> Any:
        """The first history message kept verbatim after the summary, if any."""
        return self._first_kept

    def force(self) -> None:
        """Compact on the next call whatever the context size, even with ``settings.enabled`` off (overflow
        recovery, a manual ``/compact``)."""
        self._forced = True

    def preview(self, messages: Sequence[Any]) -> list[Any]:
        """The view a call would start from (the current summary and what it keeps, or the history), without
        compacting and without forgetting a summary whose kept part is gone (a call would)."""
        messages = list(messages)
        at = None if self._summary is None else self.index_of_first_kept(messages)
        return messages if at is None else [self._summary, *messages[at:]]

    def due(self, messages: Sequence[Any]) -> bool:
        """Whether a call with ``messages`` would compact first (forced, or its view over the threshold)."""
        view = self.preview(messages)
        stale_until = view[0].timestamp if view and isinstance(view[0], CompactionSummaryMessage) else None
        return self._forced or should_compact(_estimate(view, stale_until), self.model.context_window, self.settings)

    async def __call__(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        """The context for the next LLM call (see the class docstring). ``signal`` aborts a summary call: the
        compaction then fails and nothing of it is kept or recorded."""
        view = self._view(list(messages))
        # Usage reported before the last compaction measured the history before it was summarised.
        stale_until = view[0].timestamp if view and isinstance(view[0], CompactionSummaryMessage) else None
        tokens = _estimate(view, stale_until)
        if not self._forced and not should_compact(tokens, self.model.context_window, self.settings):
            return view
        return await self._compact(view, tokens, signal)

    def _view(self, messages: list[Any]) -> list[Any]:
        if self._summary is None:
            return messages
        at = self.index_of_first_kept(messages)
        if at is None:
            # The kept part is gone (history reset, replaced, or another branch): start afresh.
            self._summary = self._first_kept = self._first_kept_json = self._details = None
            return messages
        return [self._summary, *messages[at:]]

    def index_of_first_kept(self, messages: list[Any]) -> int | None:
        """Where the first kept message is in ``messages`` (itself, else an equal copy); ``None``: not there."""
        # The Agent passes the same message objects every turn; a history reloaded from a session file
        # holds equal copies instead.
        for i, m in enumerate(messages):
            if m is self._first_kept:
                return i
        for i, m in enumerate(messages):
            if to_pi_json(m) == self._first_kept_json:
                return i
        return None

    async def _compact(self, view: list[Any], tokens: int, signal: Any = None) -> list[Any]:
        start = 1 if view and isinstance(view[0], CompactionSummaryMessage) else 0
        history, prefix = _spans(view, start, find_cut_point(view, self.settings.keep_recent_tokens, start))
        if not history and not prefix:
            self._forced = False  # nothing before the kept part: summarising would not make it smaller
            return view
        if self.digest:
            result = compact_digest(view, self.settings, previous_details=self._details)
        else:
            options = {**self.stream_options, **({"signal": signal} if signal is not None else {})}
            result = await compact(view, self.summary_model, self.settings, previous_details=self._details, **options)
        result = dataclasses.replace(result, tokens_before=tokens)
        summary = CompactionSummaryMessage(summary=result.summary, tokens_before=result.tokens_before)
        first_kept = view[result.first_kept_index]
        if self.on_compaction is not None:
            done = self.on_compaction(result, summary, first_kept)
            if inspect.isawaitable(done):
                await done
        # Adopted only now, so a failing callback leaves no compaction the session file does not know of.
        self._summary, self._first_kept, self._details = summary, first_kept, result.details
        self._first_kept_json = to_pi_json(first_kept)
        self._forced = False
        return [summary, *view[result.first_kept_index :]]
