"""Lesson 11 (``notebooks/11-defining-a-tool.ipynb``): a tool, from its schema to the result the model reads.

The ``check_*`` functions check the lesson's three exercises. :func:`run_scripted` runs an :class:`Agent` on a
scripted model of its own (lessons 12 and 13 use it too), so a checker never touches the notebook's ``faux``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..agent_core import Agent, AgentTool, AgentToolResult
from ..ai import Context, ToolResultMessage, UserMessage, build_request, get_model, register_provider
from ..ai.faux import FauxProvider
from .exercise import expect, report, unanswered

_SCRIPTED = FauxProvider(api="lesson-faux")
register_provider(_SCRIPTED.api, _SCRIPTED.stream)


def run_scripted(
    replies: Sequence[Any],
    prompt: Any = "Go.",
    setup: Callable[[Agent], Any] | None = None,
    **agent_options: Any,
) -> Agent:
    """An :class:`Agent` on a scripted model of the lessons' own, run on ``prompt`` until it stops, with
    ``replies`` as the model's answers (faux steps); ``setup(agent)`` runs first (subscribe, queue messages). Runs
    in a worker thread, so a checker can call it from a cell whose event loop is already running; returns the
    agent (``agent.messages``, ``agent.state``)."""
    agent = Agent(_SCRIPTED.model(), **agent_options)
    if setup is not None:
        setup(agent)

    async def run() -> None:
        _SCRIPTED.reset()
        _SCRIPTED.set_responses(replies)
        await agent.prompt(prompt)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()
    return agent


def scripted_calls() -> list[Context]:
    """The contexts the lessons' scripted model received, one per call (the newest run's)."""
    return _SCRIPTED.calls


# --- exercise 1: write a tool ----------------------------------------------------------------------------

PRICES = {"plum": 95, "pear": 80}
"""Exercise 1's price list, in cents."""


def check_price_tool(answer: Any) -> None:
    """Exercise 1: ``answer`` is an ``AgentTool`` named ``unit_price`` that takes ``item``, tells the model
    ``plum costs 95 cents`` and keeps ``{"item": "plum", "cents": 95}`` in ``details``; an unknown item fails."""
    from ..ai import faux

    name = "Exercise 1 (a tool of your own)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, AgentTool), f"answer with an AgentTool, not {type(answer).__name__}")
    expect(name, answer.name == "unit_price", f"the tool is called {answer.name!r}, not 'unit_price'")
    schema = answer.parameters
    expect(
        name, schema.get("type") == "object" and "item" in schema.get("properties", {}),
        "the parameters are a JSON Schema object with an 'item' property",
        'parameters={"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}',
    )  # fmt: skip
    expect(name, "item" in schema.get("required", []), "'item' is not required: the model could call it without one",
           'add "required": ["item"] to the schema.')  # fmt: skip
    call, unknown = faux.tool_call("unit_price", {"item": "plum"}), faux.tool_call("unit_price", {"item": "kiwi"})
    agent = run_scripted([faux.message([call, unknown]), "Done."], tools=[answer])
    good, bad = (m for m in agent.messages if isinstance(m, ToolResultMessage))
    text = " ".join(b.text for b in good.content if b.type == "text")
    expect(name, not good.is_error, f"the call for plum failed: {text}")
    expect(name, text == "plum costs 95 cents", f"the model reads {text!r}, not 'plum costs 95 cents'",
           "content is what the model reads: AgentToolResult.text('plum costs 95 cents', details=...).")  # fmt: skip
    expect(name, good.details == {"item": "plum", "cents": 95},
           f"details are {good.details!r}, not {{'item': 'plum', 'cents': 95}}")  # fmt: skip
    body = json.dumps(build_request(get_model("anthropic/claude-sonnet-4-5"), scripted_calls()[-1]))
    expect(name, '"cents"' not in body, "the request holds the details: keep them out of content")
    expect(name, bad.is_error, "an unknown item (kiwi) gave a result that is not an error",
           "raise an exception for an item that is not in PRICES: the loop makes it an error result.")  # fmt: skip
    report(name, "the model reads one sentence; the UI keeps the numbers.")


# --- exercise 2: who answered each call ------------------------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("check_stock", {"item": "plum"}),
    ("check_stock", {"item": "kiwi"}),
    ("check_stock", {}),
    ("check_stocks", {"item": "plum"}),
    ("check_stock", {"item": 42}),
]
"""Exercise 2: five tool calls one reply makes, as (name, arguments)."""

WHO = ("tool", "raised", "schema", "unknown")

_STOCK = {"plum": 3, "pear": 0}


def _check_stock(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    if params["item"] not in _STOCK:
        raise ValueError(f"no item called {params['item']!r}")
    return AgentToolResult.text(f"{_STOCK[params['item']]} in stock", details={"item": params["item"]})


STOCK_TOOL = AgentTool(
    name="check_stock",
    description="How many of an item are in stock.",
    parameters={"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
    execute=_check_stock,
)
"""The lesson's ``check_stock`` tool, as exercise 2 runs it."""


def _who(result: ToolResultMessage) -> str:
    text = " ".join(b.text for b in result.content if b.type == "text")
    if not result.is_error:
        return "tool"
    if text.endswith("not found"):
        return "unknown"
    return "schema" if text.startswith("Validation failed") else "raised"


def answered_by() -> list[str]:
    """Who answered each of :data:`CALLS` when the loop runs them (the checker's truth)."""
    from ..ai import faux

    reply = faux.message([faux.tool_call(n, a, id=f"call_{i}") for i, (n, a) in enumerate(CALLS)])
    agent = run_scripted([reply, "Done."], tools=[STOCK_TOOL])
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    return [_who(results[f"call_{i}"]) for i in range(len(CALLS))]


_WHY = {
    "tool": "the tool ran and returned",
    "raised": "the arguments were valid, the tool ran and raised: its message became the result",
    "schema": "the arguments did not match the schema: the loop answered before the tool ran",
    "unknown": "no tool has that name: the loop answered 'Tool ... not found'",
}


def check_who_answered(answer: Any) -> None:
    """Exercise 2: ``answer`` says, for each of :data:`CALLS`, who wrote its result (one of :data:`WHO`)."""
    name = "Exercise 2 (who answered each call)"
    if unanswered(name, answer, *(answer if isinstance(answer, (list, tuple)) else ())):
        return
    expect(name, isinstance(answer, (list, tuple)) and len(answer) == len(CALLS),
           f"answer with a list of {len(CALLS)} words, one per call, from {WHO}")  # fmt: skip
    for i, (given, truth) in enumerate(zip(answer, answered_by(), strict=True)):
        expect(name, given in WHO, f"call {i}: {given!r} is not one of {WHO}")
        hint = "42 is not a string, but the schema check converts what it can (as Pi's AJV does)." if i == 4 else ""
        expect(name, given == truth, f"call {i} {CALLS[i]}: {truth!r}, not {given!r}: {_WHY[truth]}.", hint)
    report(name, f"{list(answer)}.")


# --- exercise 3: what the model sees ---------------------------------------------------------------------

PARTS = ("name", "description", "parameters", "label", "execute", "content", "details")
"""Exercise 3: the parts of a tool and of its result."""

_SEEN = {"name": True, "description": True, "parameters": True, "label": False, "execute": False,
         "content": True, "details": False}  # fmt: skip


def check_seen_by_model(answer: Any) -> None:
    """Exercise 3: ``answer`` maps each of :data:`PARTS` to whether the model ever reads it."""
    name = "Exercise 3 (what the model reads)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == set(PARTS),
           f"answer with a dict whose keys are {list(PARTS)} and values True/False")  # fmt: skip
    tool_body = build_request(
        get_model("anthropic/claude-sonnet-4-5"),
        Context(messages=[UserMessage(content="Hi.", timestamp=0)], tools=[STOCK_TOOL.to_tool()]),
    )["tools"][0]
    for part in PARTS:
        where = "tool definition in the request" if part in ("name", "description", "parameters") else "result"
        expect(
            name, answer[part] == _SEEN[part],
            f"{part}: the model {'reads' if _SEEN[part] else 'never reads'} it"
            + (f" (the request's tool: {sorted(tool_body)})" if where.startswith("tool") else ""),
            "to_tool() is what the model gets of the tool; content is what it gets of the result.",
        )  # fmt: skip
    report(name, "name, description, parameters and content go to the model; label, execute and details stay.")
