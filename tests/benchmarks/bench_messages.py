"""P1 and P1b: the message layer's cost, against the least any code must do with the same JSON.

* **P1**: ``convert_to_llm`` + ``to_pi_json`` + ``json.dumps`` of 10,000 typed messages of all seven roles
  (what an agent does before every LLM call), against a hand-written dict → dict function applying the same
  rules (the three LLM roles passed through, the coding agent's four turned into user messages with Pi's
  texts, ``excludeFromContext`` dropped) followed by the same ``json.dumps``.
* **P1b**: the same 10,000 messages as a session file holds them (one entry line each, Pi's JSON) typed
  straight from their bytes, as the session reader types a message when it is first used
  (:func:`~pi_notebook.coding_agent.session_json.message_from_line`: pydantic-core validates the line's JSON
  into the message classes), against ``json.loads`` of the same lines (the least any reader does: dicts).
  Reference rows: ``from_pi_json`` of already-parsed dicts (the API for dicts), and the same messages as one
  JSON array through a ``TypeAdapter(list[...])`` against ``json.loads`` of that array (no per-line call on
  either side, so what is left is building typed objects instead of dicts: pydantic's own floor).

Each is measured twice: with the text lengths of the session benchmark (``bench_session_load``), and with
every text a tenth as long, where the cost per object weighs more than the cost per byte. The old code was at
4.2–4.7× on the first and 5.5–5.9× on the second (the issue's "now": 5.7× and 5.8×).

The messages are Pi's JSON as Pi writes it: camelCase keys, a few explicit ``null`` values and keys no model
declares (both must survive), text, thinking and tool-call blocks, images, usage with cost, tool results with
details, ``!`` and ``!!`` commands, extension messages (string and block content, hidden ones), branch and
compaction summaries. Both sides are checked to produce the same JSON before anything is timed.
"""

from __future__ import annotations

import json
import random
from typing import Any

from pi_notebook.agent_core import convert_to_llm, from_pi_json, to_pi_json
from pi_notebook.coding_agent.json_lines import json_line
from pi_notebook.coding_agent.messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
)
from pi_notebook.coding_agent.session_json import message_from_line

from .harness import Result, compare, measure, ratio_goal
from .plain_models import plain_dump, plain_parse

WORDS = ["the", "agent", "message", "tool", "call", "result", "branch", "summary", "file", "line", "test"]
MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def _words(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _usage(rng: random.Random) -> dict[str, Any]:
    tokens = rng.randint(500, 50_000)
    cost = {"input": tokens * 3e-6, "output": 0.0075, "cacheRead": 0, "cacheWrite": 0, "total": tokens * 3e-6}
    return {"input": tokens, "output": 500, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens, "cost": cost}


def make_messages(count: int, seed: int = 12, scale: float = 1.0) -> list[dict[str, Any]]:
    """``count`` messages of Pi's JSON, every role, in the proportions of a coding session; ``scale``
    multiplies the length of every text (the session benchmark's lengths at 1)."""
    rng = random.Random(seed)

    def _text(rng: random.Random, words: int) -> str:
        return _words(rng, max(1, round(words * scale)))

    out: list[dict[str, Any]] = []
    now = 1_772_370_000_000
    turn = 0
    while len(out) < count:
        turn, now = turn + 1, now + 10_000
        if turn % 5 == 0:
            content: Any = [
                {"type": "text", "text": _text(rng, 20)},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
        else:
            content = _text(rng, 30)
        out.append({"role": "user", "content": content, "timestamp": now})
        for call in range(rng.randint(0, 3)):
            call_id = f"toolu_{turn}_{call}"
            blocks = [
                {"type": "thinking", "thinking": _text(rng, 40), "thinkingSignature": "sig" * 20},
                {"type": "text", "text": _text(rng, 20), "textSignature": None},  # an explicit null, kept
                {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "f.py", "limit": None}},
            ]
            out.append(
                {
                    "role": "assistant",
                    "content": blocks,
                    **MODEL,
                    "usage": _usage(rng),
                    "stopReason": "toolUse",
                    "timestamp": now,
                }
            )
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "content": [{"type": "text", "text": _text(rng, 150)}],
                    "details": {"lines": 150, "truncation": None},
                    "isError": False,
                    "timestamp": now,
                }
            )
        stop = {"stopReason": "error", "errorMessage": "overloaded"} if turn % 17 == 0 else {"stopReason": "stop"}
        final = {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 80)}], **MODEL}
        final |= {"usage": _usage(rng), **stop, "timestamp": now, "responseId": f"msg_{turn}"}  # an unknown key
        out.append(final)
        if turn % 3 == 0:
            bash = {"role": "bashExecution", "command": "make test", "output": _text(rng, 60), "exitCode": turn % 2}
            bash |= {"cancelled": False, "truncated": False, "timestamp": now}
            if turn % 9 == 0:
                bash |= {"exitCode": None, "cancelled": True}  # killed: explicit null
            if turn % 6 == 0:
                bash["excludeFromContext"] = True  # !!cmd: never sent
            out.append(bash)
        if turn % 4 == 0:
            custom = {"role": "custom", "customType": "reminder", "content": _text(rng, 10), "display": turn % 8 == 0}
            if turn % 12 == 0:
                custom["content"] = [{"type": "text", "text": _text(rng, 10)}]
            out.append({**custom, "details": {"n": turn}, "timestamp": now})
        if turn % 7 == 0:
            out.append({"role": "branchSummary", "summary": _text(rng, 50), "fromId": "a1b2c3d4", "timestamp": now})
        if turn % 50 == 0:
            out.append(
                {"role": "compactionSummary", "summary": _text(rng, 200), "tokensBefore": 120_000, "timestamp": now}
            )
    return out[:count]


def entry_lines(messages: list[dict[str, Any]]) -> list[bytes]:
    """The messages as a session file holds them: one message entry per line, Pi's JSON."""
    lines, parent = [], None
    for index, message in enumerate(messages):
        entry_id = f"{index:08x}"
        entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-03-01T12:00:00.000Z"}
        lines.append(json_line({**entry, "message": message})[:-1])
        parent = entry_id
    return lines


def _list_adapter() -> Any:
    from typing import Annotated, Union

    from pydantic import Field, TypeAdapter

    from pi_notebook.agent_core import registered_message_types

    classes = tuple(t.model for t in registered_message_types())
    return TypeAdapter(list[Annotated[Union[classes], Field(discriminator="role")]])  # type: ignore[valid-type]  # noqa: UP007


# --- the baseline: the same rules, dict to dict -----------------------------------------------------------


def _user(text: str, timestamp: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def _js_number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _bash_text(m: dict[str, Any]) -> str:
    text = f"Ran `{m['command']}`\n"
    text += f"```\n{m['output']}\n```" if m.get("output") else "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif m.get("exitCode") is not None and m["exitCode"] != 0:
        text += f"\n\nCommand exited with code {_js_number(m['exitCode'])}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m['fullOutputPath']}]"
    return text


def baseline_convert(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pi's ``convertToLlm`` written by hand on dicts: what the typed pipeline is compared with."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m["role"]
        if role in ("user", "assistant", "toolResult"):
            out.append(m)
        elif role == "bashExecution":
            if not m.get("excludeFromContext"):
                out.append(_user(_bash_text(m), m["timestamp"]))
        elif role == "custom":
            content = m["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
            out.append({"role": "user", "content": blocks, "timestamp": m["timestamp"]})
        elif role == "branchSummary":
            out.append(_user(BRANCH_SUMMARY_PREFIX + m["summary"] + BRANCH_SUMMARY_SUFFIX, m["timestamp"]))
        elif role == "compactionSummary":
            out.append(_user(COMPACTION_SUMMARY_PREFIX + m["summary"] + COMPACTION_SUMMARY_SUFFIX, m["timestamp"]))
    return out


def ours_convert(typed: list[Any]) -> str:
    return json.dumps([to_pi_json(m) for m in convert_to_llm(typed)])


def baseline_dump(messages: list[dict[str, Any]]) -> str:
    return json.dumps(baseline_convert(messages))


def _rows(count: int, repeats: int, scale: float, quick: bool) -> list[Result]:
    raw = make_messages(count, scale=scale)
    text = json.dumps(raw)
    typed = [from_pi_json(m) for m in raw]
    assert all(to_pi_json(t) == m for t, m in zip(typed, raw, strict=True)), "Pi's JSON must round-trip"
    assert ours_convert(typed) == baseline_dump(raw), "the typed pipeline and the baseline must agree"
    roles = len({m["role"] for m in raw})
    texts = "" if scale == 1 else f", texts ×{scale:g}"

    base, ours = compare(lambda: baseline_dump(raw), lambda: ours_convert(typed), repeats)
    p1 = Result(
        "P1",
        f"convert_to_llm + to_pi_json + json.dumps, {count:,} messages ({roles} roles{texts})",
        "hand-written dict→dict + json.dumps",
        ours,
        base,
    )
    lines, roles = entry_lines(raw), [m["role"] for m in raw]
    typed_lines = [message_from_line(line, role) for line, role in zip(lines, roles, strict=True)]
    assert [to_pi_json(t) for t in typed_lines] == raw and typed_lines == typed, "bytes → typed must agree"
    base_b, ours_b = compare(
        lambda: [json.loads(line) for line in lines],
        lambda: [message_from_line(line, role) for line, role in zip(lines, roles, strict=True)],
        repeats,
    )
    p1b = Result("P1b", f"session lines → typed messages, {count:,}{texts}", "json.loads per line", ours_b, base_b)
    rows = [ratio_goal(p1, 2, quick), ratio_goal(p1b, 1.2, quick, noise=0.10)]
    base_d, ours_d = compare(lambda: json.loads(text), lambda: [from_pi_json(m) for m in raw], repeats)
    rows.append(
        Result("P1b", f"from_pi_json of parsed dicts, {count:,}{texts}", "json.loads of one array", ours_d, base_d)
    )
    array = text.encode()
    adapter = _list_adapter()
    assert adapter.validate_json(array) == typed
    base_a, ours_a = compare(lambda: json.loads(array), lambda: adapter.validate_json(array), repeats)
    floor = Result("P1b", f"one JSON array → typed, {count:,}{texts}", "json.loads of the array", ours_a, base_a)
    floor.note = "reference: no call per message on either side; typed objects instead of dicts"
    rows.append(floor)
    if scale != 1:
        floor_rows = _floor_rows(raw, typed, count, texts, repeats)
        dump = floor_rows[1]
        # P1's floor: its ratio were our dump as fast as plain pydantic's (the rest is the typed layer's own cost).
        p1.floor, p1.floor_note = (p1.ratio or 0) / (dump.ratio or 1), "our to_pi_json at the plain twins' speed"
        rows += floor_rows
    return rows


def _floor_rows(raw: list[dict[str, Any]], typed: list[Any], count: int, texts: str, repeats: int) -> list[Result]:
    """What pydantic-core itself costs on the same shapes (plain_models: twins of our classes without Pi's
    round-trip rules): the floor of a typed layer, for the rows that miss their goal."""
    plain = plain_parse(raw)
    base, ours = compare(lambda: plain_parse(raw), lambda: [from_pi_json(m) for m in raw], repeats)
    parse = Result("P1b", f"from_pi_json, {count:,} messages{texts}", "plain pydantic twins, parse", ours, base)
    base, ours = compare(lambda: plain_dump(plain), lambda: [to_pi_json(m) for m in typed], repeats)
    dump = Result("P1", f"to_pi_json, {count:,} messages{texts}", "plain pydantic twins, dump", ours, base)
    for row in (parse, dump):
        row.note = "the floor: the same fields as plain pydantic models (no explicit nulls kept)"
    return [parse, dump]


@measure("P1", "convert_to_llm + to_pi_json + json.dumps; from_pi_json (10,000 mixed messages)")
def messages(quick: bool) -> list[Result]:
    """The session benchmark's text lengths, then the same messages with texts a tenth as long: per-object
    costs weigh more there (the issue's "now" ratios, 5.7× and 5.8×, are what the old code does on those)."""
    count, repeats = (1_000, 1) if quick else (10_000, 15)
    return _rows(count, repeats, 1.0, quick) + _rows(count, repeats, 0.1, quick)
