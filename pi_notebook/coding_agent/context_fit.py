"""One message larger than the window must not make a session unusable (beyond Pi).

Compaction summarises *older* turns; it cannot help when a single message (the output of ``%bash cat big.log``,
a long paste, a tool result) is itself larger than what the model can read: every later call would fail with
the same overflow, after every restart. :class:`ContextFitter` runs before compaction and hands the LLM a copy
of such a message with its middle cut out, marked where and why; the stored message is never changed. The first
time it cuts a message it calls ``on_oversized`` so the app can name that message once, with the fix.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..agent_core import as_agent_message
from ..agent_core.convert import takes_signal
from ..ai import Model, TextContent
from .compaction import estimate_tokens

MESSAGE_SHARE = 0.2
"""The most of the context window one message may take, by the chars/4 estimate (which undercounts numbers and
code by up to ~2.5×: a fifth of the window estimated stays well under the real window)."""


@dataclass(frozen=True)
class Oversized:
    """A message the LLM gets only part of."""

    message: Any
    tokens: int
    """Its estimated size."""
    limit: int
    """What one message may take for this model."""
    context_window: int
    index: int = 0
    """Its position in the list that was fitted."""

    def describe(self, model_name: str) -> str:
        """One line naming the message and the fix."""
        what = _name(self.message)
        return (
            f"{what} is about {self.tokens:,} tokens, more than {model_name}'s {self.context_window:,}-token context "
            f"window allows for one message: the model sees its start and end only. To keep such output out of "
            f"the context use %bash! (shown, never sent), or pick a model with a larger window (--model)."
        )


def _name(message: Any) -> str:
    role = getattr(message, "role", "")
    if role == "bashExecution":
        return f"The output of `{_clip(message.command)}`"
    if role == "toolResult":
        return f"The result of the {message.tool_name} tool"
    if role == "user":
        return "Your prompt"
    if role == "custom":
        return f"The {message.custom_type} message"
    return f"A {role} message"


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def cut_middle(text: str, keep_chars: int, why: str) -> str:
    """``text`` with its middle replaced by a marker, keeping ``keep_chars`` characters (2/3 head, 1/3 tail)."""
    if len(text) <= keep_chars:
        return text
    head, tail = keep_chars * 2 // 3, keep_chars // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n\n[… {cut:,} characters cut here: {why} …]\n\n{text[len(text) - tail :]}"


def _fit_content(content: Any, keep_chars: int, why: str) -> Any:
    if isinstance(content, str):
        return cut_middle(content, keep_chars, why)
    texts = [b for b in content if b.type == "text"]
    share = max(200, keep_chars // max(1, len(texts)))
    return [TextContent(text=cut_middle(b.text, share, why)) if b.type == "text" else b for b in content]


def fit_message(message: Any, limit_tokens: int, why: str) -> Any:
    """A copy of ``message`` cut to about ``limit_tokens`` (by the chars/4 estimate); assistant messages and
    summaries are returned as they are (a model's own reply was within its limits when it wrote it)."""
    keep_chars = limit_tokens * 4
    role = getattr(message, "role", "")
    if role == "bashExecution":
        return message.model_copy(update={"output": cut_middle(message.output, keep_chars, why)})
    if role in ("user", "toolResult", "custom"):
        return message.model_copy(update={"content": _fit_content(message.content, keep_chars, why)})
    return message


def fit_messages(
    messages: Sequence[Any], context_window: int, sizes: dict[int, tuple[Any, int]] | None = None
) -> tuple[list[Any], list[Oversized]]:
    """``messages`` with every message over ``MESSAGE_SHARE`` of the window cut to fit, and which ones were.
    ``sizes`` (``id(message)`` → (message, its estimate)) spares estimating a message seen before: it is updated
    to hold the messages of this call only."""
    limit = max(256, math.floor(context_window * MESSAGE_SHARE))
    why = f"this message is larger than the model's {context_window:,}-token context window allows"
    out, oversized = [], []
    known = dict(sizes) if sizes is not None else {}
    if sizes is not None:
        sizes.clear()
    for index, message in enumerate(messages):
        m = as_agent_message(message)
        hit = known.get(id(m))
        tokens = hit[1] if hit is not None and hit[0] is m else estimate_tokens(m)
        if sizes is not None:
            sizes[id(m)] = (m, tokens)
        if tokens > limit and getattr(m, "role", "") not in ("assistant", "branchSummary", "compactionSummary"):
            oversized.append(Oversized(message, tokens, limit, context_window, index))
            out.append(fit_message(m, limit, why))
        else:
            out.append(message)
    return out, oversized


class ContextFitter:
    """A ``transform_context`` stage: keep :func:`latest_exchange` (with ``latest_only``), cut oversized messages
    for ``model``, then run ``then`` (e.g. the :class:`~pi_notebook.coding_agent.compaction.Compactor`) on the result.
    ``on_oversized(Oversized)`` is called once per message (the first call that cuts it)."""

    def __init__(
        self,
        model: Model,
        then: Callable[..., Any] | None = None,  # (messages) or (messages, signal), as transform_context
        on_oversized: Callable[..., Any] | None = None,
        latest_only: bool = False,
    ):
        self.model = model
        self.latest_only = latest_only
        """First reduce the context to :func:`latest_exchange` (for very small models)."""
        self.then = then
        self.on_oversized = on_oversized
        self._copies: dict[int, tuple[Any, Any]] = {}  # id(original) → (original, its cut copy)
        # id(message) → (message, its size): a message is estimated once, as a stored message does not change
        # (before every call and every preview, the whole history is fitted again).
        self._sizes: dict[int, tuple[Any, int]] = {}

    def original_of(self, message: Any) -> Any:
        """The stored message behind a cut copy this fitter handed out (``message`` itself otherwise)."""
        for original, copy in self._copies.values():
            if copy is message:
                return original
        return message

    def preview(self, messages: Sequence[Any]) -> list[Any]:
        """What a call would return (without ``then``), without acting: no ``on_oversized``, no copy remembered
        (a message already cut gets the copy the calls handed out)."""
        if self.latest_only:
            messages = latest_exchange(messages)
        fitted, oversized = fit_messages(messages, self.model.context_window or 128_000, self._sizes)
        for item in oversized:
            known = self._copies.get(id(item.message))
            if known is not None:
                fitted[item.index] = known[1]
        return fitted

    async def __call__(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        if self.latest_only:
            messages = latest_exchange(messages)
        fitted, oversized = fit_messages(messages, self.model.context_window or 128_000, self._sizes)
        for item in oversized:
            key = id(item.message)
            if key not in self._copies:
                # The same copy every call: later stages (compaction) may remember a message by identity.
                self._copies[key] = (item.message, fitted[item.index])
                if self.on_oversized is not None:
                    self.on_oversized(item)
            fitted[item.index] = self._copies[key][1]
        if self.then is None:
            return fitted
        result = self.then(fitted, signal) if signal is not None and takes_signal(self.then) else self.then(fitted)
        return list(await result if inspect.isawaitable(result) else result)


def latest_exchange(messages: Sequence[Any]) -> list[Any]:
    """A ``transform_context`` for very small models: the context of the notebook (shell commands, custom
    messages, summaries) and the current prompt with its turn, without earlier questions and answers.

    A 135M model copies its own last answer far more readily than it reads a new tool result ("The files in the
    demo folder are: …" again, for a question about a todo list); each question is better answered afresh. The
    stored history is unchanged; larger models keep the whole conversation."""
    roles = [getattr(as_agent_message(m), "role", None) for m in messages]
    last_prompt = max((i for i, role in enumerate(roles) if role == "user"), default=len(roles))
    chat = ("user", "assistant", "toolResult")
    return [m for i, m in enumerate(messages) if i >= last_prompt or roles[i] not in chat]
