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
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..agent_core import as_agent_message
from ..agent_core.convert import takes_signal
from ..ai import Model, TextContent
from .compaction import estimate_tokens
from .messages import CustomMessage
from .truncate import cut_middle

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


@dataclass(frozen=True)
class LeftOut:
    """Earlier turns a very small model is not sent (:func:`latest_exchange`): handed to ``on_oversized`` once, so
    the app says it in plain words, as it names a message the model gets only part of."""

    count: int
    """How many stored messages were left out of the call that first left some out."""

    def describe(self, model_name: str) -> str:
        """One line saying what the model does not see, and the fix."""
        return (
            f"{model_name} sees only the current exchange and the notebook's commands and cells, and your "
            f"previous prompt when the new one says I, my or earlier: its earlier answers and tool calls are not "
            f"sent to it. A larger model (--model) gets the whole conversation."
        )


LEFT_OUT = (
    "not sent: the offline model sees only the current exchange (and your previous prompt if the new one says I, my…)"
)
"""What the inspector says of a message :func:`latest_exchange` leaves out (the pipeline's ``left_out``)."""


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
    """A ``transform_context`` stage: keep :func:`latest_exchange` (with ``latest_only``; a note after each hidden
    message, :func:`hidden_note`), cut oversized messages
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
        # id(message) → (message, what stands for it): an earlier prompt's copy, the note after a hidden message
        self._notes: dict[int, tuple[Any, Any]] = {}
        self._said_left_out = False
        # id(message) → (message, its size): a message is estimated once, as a stored message does not change
        # (before every call and every preview, the whole history is fitted again).
        self._sizes: dict[int, tuple[Any, int]] = {}

    def original_of(self, message: Any) -> Any:
        """The stored message behind a cut copy this fitter handed out (``message`` itself otherwise)."""
        for original, copy in (*self._copies.values(), *self._notes.values()):
            if copy is message:
                return original
        return message

    def _latest(self, messages: Sequence[Any], *, remember: bool) -> list[Any]:
        """:func:`latest_exchange`, the prompt before the current one as its :func:`earlier_copy` and each hidden
        message followed by its :func:`hidden_note` (the same object every call, once remembered). The first call
        that leaves something out tells ``on_oversized`` (:class:`LeftOut`)."""
        kept = latest_exchange(messages)
        if remember and len(kept) < len(messages) and not self._said_left_out:
            self._said_left_out = True
            if self.on_oversized is not None:
                self.on_oversized(LeftOut(len(messages) - len(kept)))
        prompts = [m for m in kept if getattr(as_agent_message(m), "role", None) == "user"]
        earlier = prompts[0] if len(prompts) > 1 else None
        out: list[Any] = []
        for message in kept:
            make = earlier_copy if message is earlier else hidden_note
            known = self._notes.get(id(message))
            note = known[1] if known is not None and known[0] is message else make(message)
            if note is not None and remember:
                self._notes[id(message)] = (message, note)
            if message is not earlier:
                out.append(message)
            if note is not None:
                out.append(note)
        return out

    def preview(self, messages: Sequence[Any]) -> list[Any]:
        """What a call would return (without ``then``), without acting: no ``on_oversized``, no copy remembered
        (a message already cut gets the copy the calls handed out)."""
        if self.latest_only:
            messages = self._latest(messages, remember=False)
        fitted, oversized = fit_messages(messages, self.model.context_window or 128_000, self._sizes)
        for item in oversized:
            known = self._copies.get(id(item.message))
            if known is not None:
                fitted[item.index] = known[1]
        return fitted

    async def __call__(self, messages: Sequence[Any], signal: Any = None) -> list[Any]:
        if self.latest_only:
            messages = self._latest(messages, remember=True)
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


REFERS_BACK = re.compile(
    r"(?<![\w'])(i|i'm|i've|my|me|mine|myself|earlier|before|previous|previously|said|told|again|remember)(?![\w'])",
    re.IGNORECASE,
)
"""Words of a prompt that may refer to what the user said before ("What is my name?", "what did I say earlier?"):
only then is the prompt before it sent to a very small model (see :func:`latest_exchange`)."""


def refers_back(text: str) -> bool:
    """Whether a prompt may refer to what the user said before (:data:`REFERS_BACK`)."""
    return REFERS_BACK.search(text) is not None


def latest_exchange(messages: Sequence[Any]) -> list[Any]:
    """A ``transform_context`` for very small models: the context of the notebook (shell commands, cells, custom
    messages, summaries) and the current prompt with its turn, and the prompt before it when the current one may
    refer back to it (:func:`refers_back`); earlier answers, tool calls and prompts are left out, and so are the
    session's notices to the user.

    A 135M model copies its own earlier answers far more readily than it reads a new tool result ("The files in
    the demo folder are: …" again, for a question about a todo list), and often answers a statement with junk
    that it then repeats; what the user said before is what it needs ("My name is Ada." → "What is my name?").
    That prompt alone confuses it on a question about something else ("What is 2 + 2?" → "You said: …"), so it
    is sent only to a prompt that speaks of the user or of earlier. The local provider shows it as a note, not as
    a chat turn to go on from (:mod:`~pi_notebook.ai.providers.local_prompt`). The stored history is unchanged;
    larger models keep the whole conversation."""
    typed = [as_agent_message(m) for m in messages]
    roles = [getattr(m, "role", None) for m in typed]
    prompts = [i for i, role in enumerate(roles) if role == "user"]
    last_prompt = prompts[-1] if prompts else len(roles)
    earlier = prompts[-2] if len(prompts) > 1 and refers_back(_plain_text(typed[last_prompt])) else None
    chat = ("user", "assistant", "toolResult")
    return [
        m for i, m in enumerate(messages)
        if i >= last_prompt or i == earlier or (roles[i] not in chat and not _notice(typed[i]))
    ]  # fmt: skip


def _plain_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return " ".join(block.text for block in content if block.type == "text")


NOTICE_TYPE = "pi_notebook.notice"
"""The ``customType`` of the session's notices to the user (``agent_session.NOTICE``): a very small model is not
sent them (they say what it does not see, or that a message was cut: the cut message says so itself)."""


def _notice(message: Any) -> bool:
    return getattr(message, "role", None) == "custom" and getattr(message, "custom_type", None) == NOTICE_TYPE


HIDDEN_NOTE = "Ran a hidden command (%bash!): its output is not shown to you, so you cannot know what it printed."
"""What a very small model is told in place of a ``%bash!`` command (the command itself stays unsent)."""
PRIVATE_NOTE = "Ran a private cell (%agent_private): it is not shown to you."
"""... and in place of a cell kept out with ``%agent_private``."""


def hidden_note(message: Any) -> CustomMessage | None:
    """The note that stands for a message kept out of the context (``%bash!``, ``%agent_private``), else None."""
    m = as_agent_message(message)
    if not getattr(m, "exclude_from_context", False):
        return None
    text = HIDDEN_NOTE if getattr(m, "role", None) == "bashExecution" else PRIVATE_NOTE
    return CustomMessage(custom_type=HIDDEN_TYPE, content=text, display=False, timestamp=m.timestamp)


EARLIER = "Earlier I said: "
"""How the prompt before the current one reaches a very small model (:func:`earlier_copy`)."""


def earlier_copy(message: Any) -> Any:
    """The prompt before the current one as a very small model gets it: its text after :data:`EARLIER` (a note
    about what the user said, not a turn for the model to go on from), its images left as they are."""
    m = as_agent_message(message)
    content = m.content
    if isinstance(content, str):
        return m.model_copy(update={"content": EARLIER + content})
    texts = [i for i, block in enumerate(content) if block.type == "text"]
    if not texts:
        return m.model_copy(update={"content": [TextContent(text=EARLIER.rstrip()), *content]})
    first = texts[0]
    blocks = [*content[:first], TextContent(text=EARLIER + content[first].text), *content[first + 1 :]]
    return m.model_copy(update={"content": blocks})


HIDDEN_TYPE = "pi_notebook.hidden"
"""The ``customType`` of :func:`hidden_note`'s messages (made by the pipeline for the LLM, never stored)."""
