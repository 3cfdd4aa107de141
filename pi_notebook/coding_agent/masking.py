"""The one boundary where known secrets are masked in messages (beyond Pi).

Every message that enters a session passes :func:`mask_message` before it is stored, shown, sent or exported: the
prompt before the agent sends it, each reply as it streams and when it ends (:class:`MaskedReply` wraps the
provider's stream, so an error text is masked too), every message recorded (shell commands, notices, your own) and
every message of a session file as it is loaded. Tool results are masked as the tool returns them
(:func:`~pi_notebook.coding_agent.secrets.mask_tool`, which also masks the full-output file). A secret becomes
``[masked: NAME]``; the views show a "secrets masked" badge on the message, and the session says once per run
what it masked. ``mask_secrets=False`` turns all of it off (for a user who means to send a secret).

What is a secret, and in which forms it is found: :mod:`~pi_notebook.coding_agent.secrets`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..agent_core import from_pi_json, to_pi_json
from ..ai import AssistantMessage
from .secrets import SecretMasker, file_contains

__all__ = [
    "MaskedReply", "SecretsMaskedWarning", "mask_json", "mask_message", "masked_names", "masking_note",
    "secrets_in_file",
]  # fmt: skip

OPAQUE_KEYS = frozenset({"thinkingSignature", "textSignature", "thoughtSignature", "signature"})
"""Keys whose values are opaque tokens a provider checks (encrypted reasoning): never rewritten."""
_NAME = re.compile(r"\[masked: ([A-Za-z_][A-Za-z0-9_]*)\]")


def mask_json(value: Any, masker: SecretMasker | None) -> Any:
    """A JSON value (a message or a session entry as Pi JSON) with every known secret in its strings masked,
    opaque signatures left alone; the value itself when there is nothing to mask."""
    return _mask(value, masker)[0] if masker else value


def _mask(value: Any, masker: SecretMasker) -> tuple[Any, bool]:
    if isinstance(value, str):
        return masker.mask(value)
    if isinstance(value, dict):
        out, hit = {}, False
        for key, item in value.items():
            if key in OPAQUE_KEYS:
                out[key] = item
                continue
            out[key], masked = _mask(item, masker)
            hit |= masked
        return (out, True) if hit else (value, False)
    if isinstance(value, list):
        pairs = [_mask(item, masker) for item in value]
        if any(masked for _, masked in pairs):
            return [item for item, _ in pairs], True
        return value, False
    return value, False


class SecretsMaskedWarning(UserWarning):
    """Known secrets were masked in a message recorded outside a run."""


def masking_note(where: dict[str, set[str]]) -> str:
    """One line saying what was masked where: ``masked OPENAI_API_KEY in the prompt, GH_TOKEN in a reply ...``."""
    parts = [f"{', '.join(sorted(names))} in {place}" for place, names in where.items() if names]
    return (
        f"masked {'; '.join(parts)}: a known secret is never stored, shown or sent "
        "(mask_secrets=False keeps secrets as written)"
    )


def masked_names(before: Any, after: Any) -> list[str]:
    """The secrets' names whose ``[masked: NAME]`` markers ``after`` holds and ``before`` did not."""
    had = set(_NAME.findall(repr(before)))
    return sorted(set(_NAME.findall(repr(after))) - had)


def mask_message(message: Any, masker: SecretMasker | None) -> tuple[Any, list[str]]:
    """``message`` (typed, any role) with every known secret in its text, arguments, details and error replaced
    by ``[masked: NAME]``, and the names masked. The message itself when there is nothing to mask (no copy)."""
    if not masker:
        return message, []
    data = to_pi_json(message)
    masked, hit = _mask(data, masker)
    if not hit:
        return message, []
    return from_pi_json(masked), masked_names(data, masked)


def secrets_in_file(path: str | os.PathLike[str], masker: SecretMasker | None) -> bool:
    """Whether the file holds any form of a known secret (one binary scan: a session file without one is not
    masked message by message when it is loaded)."""
    if not masker:
        return False
    try:
        return file_contains(path, masker.forms())
    except OSError:
        return True  # cannot tell: mask what is loaded


class MaskedReply:
    """A provider's stream with every known secret masked in what it hands on: each partial reply (a trailing
    piece that may begin a secret is held back until the next event shows whether it does), each event's text,
    and the final message. ``on_masked(names)`` is told the names masked in the final message."""

    def __init__(self, stream: Any, masker: SecretMasker, on_masked: Callable[[list[str]], Any] | None = None):
        self._stream = stream
        self._events: AsyncIterator[Any] = stream.__aiter__()
        self._masker = masker
        self._on_masked = on_masked
        self._dirty = False  # some block needed masking: every later partial is a masked copy
        self._shown: dict[int, str] = {}  # content index → its text as last shown
        self._finals: dict[int, AssistantMessage] = {}

    def __aiter__(self) -> MaskedReply:
        return self

    async def __anext__(self) -> Any:
        return self._event(await self._events.__anext__())

    async def result(self) -> AssistantMessage:
        return self._final(await self._stream.result())

    def _final(self, message: AssistantMessage) -> AssistantMessage:
        known = self._finals.get(id(message))
        if known is None:
            known, names = mask_message(message, self._masker)
            self._finals[id(message)] = known
            if names and self._on_masked is not None:
                self._on_masked(names)
        return known

    def _event(self, event: Any) -> Any:
        kind = event.type
        if kind == "done":
            return dataclasses.replace(event, message=self._final(event.message))
        if kind == "error":
            return dataclasses.replace(event, error=self._final(event.error))
        partial = getattr(event, "partial", None)
        index = getattr(event, "content_index", None)
        if partial is None:
            return event
        ending = kind.endswith("_end")
        if not self._dirty and index is not None and self._block_needs(partial, index, ending):
            self._dirty = True
        if not self._dirty:
            self._remember(partial, index)
            return event
        shown = self._masked_partial(partial, index, ending)
        changes: dict[str, Any] = {"partial": shown}
        if index is None:
            pass  # (start: no block yet)
        elif kind in ("text_delta", "thinking_delta"):
            text = _block_text(shown.content[index])
            before = self._shown.get(index, "")
            changes["delta"] = text[len(before) :] if text.startswith(before) else ""
        elif kind in ("text_end", "thinking_end"):
            changes["content"] = self._masker.mask(event.content)[0]
        elif kind == "toolcall_end":
            changes["tool_call"] = shown.content[index]
        elif kind == "toolcall_delta":
            changes["delta"] = ""  # raw JSON pieces cannot be masked one by one; the partial holds the arguments
        self._remember(shown, index)
        return dataclasses.replace(event, **changes)

    def _remember(self, partial: AssistantMessage, index: int | None) -> None:
        if index is not None and index < len(partial.content):
            self._shown[index] = _block_text(partial.content[index])

    def _block_needs(self, partial: AssistantMessage, index: int, ending: bool) -> bool:
        if index >= len(partial.content):
            return False
        block = partial.content[index]
        if block.type == "toolCall":
            return _mask(block.arguments, self._masker)[1]
        text = _block_text(block)
        return (self._masker.mask(text)[1]) if ending else self._masker.mask_live(text) != text

    def _masked_partial(self, partial: AssistantMessage, index: int | None, ending: bool) -> AssistantMessage:
        blocks = []
        last = len(partial.content) - 1
        for at, block in enumerate(partial.content):
            live = at == index and at == last and not ending
            if block.type == "text":
                text = self._masker.mask_live(block.text) if live else self._masker.mask(block.text)[0]
                block = block.model_copy(update={"text": text})
            elif block.type == "thinking":
                text = self._masker.mask_live(block.thinking) if live else self._masker.mask(block.thinking)[0]
                block = block.model_copy(update={"thinking": text})
            elif block.type == "toolCall":
                block = block.model_copy(update={"arguments": _mask(block.arguments, self._masker)[0]})
            blocks.append(block)
        return partial.model_copy(update={"content": blocks})


def _block_text(block: Any) -> str:
    if block.type == "text":
        return str(block.text)
    if block.type == "thinking":
        return str(block.thinking)
    return ""
