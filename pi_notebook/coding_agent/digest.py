"""A conversation listed without a model: one line per prompt, shell command, tool call and answer, clipped.

What a branch summary (:func:`~.branch_summary.describe_branch`) and a compaction
(:func:`~.compaction.compact_digest`) write when no model summarises: offline, in tests, for a small model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..agent_core import to_pi_json

_ITEM_CHARS = 200


def digest(messages: Sequence[Any]) -> str:
    """One line per prompt, shell command, tool call and answer, clipped ("" when there are none)."""
    lines = []
    for message in messages:
        data = to_pi_json(message)
        role = data.get("role")
        if role == "user":
            lines.append(f"- The user asked: {_clip(_text(data.get('content')))}")
        elif role == "bashExecution":
            code = data.get("exitCode")
            status = f" (exit code {code})" if code else ""
            lines.append(f"- The user ran `{_clip(data.get('command', ''))}`{status}")
        elif role == "assistant":
            for block in data.get("content", []):
                if block.get("type") == "toolCall":
                    args = json.dumps(block.get("arguments", {}), ensure_ascii=False)
                    lines.append(f"- The assistant called {block.get('name')}({_clip(args)})")
            answer = _text([b for b in data.get("content", []) if b.get("type") == "text"])
            if answer:
                lines.append(f"- The assistant answered: {_clip(answer)}")
        elif role == "custom":
            lines.append(f"- A {data.get('customType')} message: {_clip(_text(data.get('content')))}")
        elif role in ("branchSummary", "compactionSummary"):
            lines.append(f"- An earlier summary: {_clip(data.get('summary', ''))}")
    return "\n".join(lines)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ITEM_CHARS else text[: _ITEM_CHARS - 1] + "…"
