"""Lesson 14 (``notebooks/14-usage-cost-and-the-system-prompt.ipynb``): what a reply cost, what the prompt cache
saved, and where the system prompt lives.

The ``check_*`` functions check the lesson's three exercises.
"""

from __future__ import annotations

from typing import Any

from ..agent_core import Agent
from ..ai import AssistantMessage, Context, Tool, Usage, UserMessage, build_request, calculate_cost, get_model
from .exercise import expect, report, unanswered
from .lesson11 import run_scripted, scripted_calls


def cache_marks(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request body carries ``cache_control``: ``system``, ``tools``, ``message N (role)``."""
    marks = []
    if any("cache_control" in block for block in body.get("system") or []):
        marks.append("system")
    if any("cache_control" in tool for tool in body.get("tools") or []):
        marks.append("tools")
    for i, message in enumerate(body["messages"]):
        blocks = message["content"] if isinstance(message["content"], list) else []
        if any("cache_control" in block for block in blocks):
            marks.append(f"message {i} ({message['role']})")
    return marks


# --- exercise 1: what a reply cost -----------------------------------------------------------------------

MODEL = "anthropic/claude-haiku-4-5"
USAGE = Usage(input=2_000, output=500, cache_read=10_000, cache_write=0, total_tokens=12_500)
"""Exercise 1: one reply's usage, from ``MODEL``."""


def check_cost(answer: Any) -> None:
    """Exercise 1: ``answer`` is the cost of :data:`USAGE` on :data:`MODEL`, in US dollars."""
    name = "Exercise 1 (what a reply cost)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (int, float)) and not isinstance(answer, bool), "answer with a number of dollars")
    prices = get_model(MODEL).cost
    cost = calculate_cost(get_model(MODEL), USAGE.model_copy(deep=True))
    if abs(answer - cost.total) > 1e-9:
        without_cache = (USAGE.input + USAGE.cache_read) * prices.input / 1e6 + cost.output
        expect(
            name, abs(answer - without_cache) > 1e-9,
            f"${answer} prices the cached tokens as input; they cost ${prices.cache_read} per million, not "
            f"${prices.input}",
        )  # fmt: skip
        expect(
            name, False, f"the reply cost ${cost.total:.6f}, not ${answer}",
            f"per million tokens: input ${prices.input}, output ${prices.output}, cache read ${prices.cache_read}; "
            "multiply each count by its price and divide by 1,000,000.",
        )  # fmt: skip
    report(name, f"${cost.total:.4f}: input ${cost.input:.4f} + output ${cost.output:.4f} + "
                 f"cache read ${cost.cache_read:.4f}.")  # fmt: skip


# --- exercise 2: where the cache marks go ----------------------------------------------------------------

CONTEXT = Context(
    system_prompt="You answer questions about a fruit shop.",
    messages=[
        UserMessage(content="What do plums cost?", timestamp=0),
        AssistantMessage.model_validate(
            {"role": "assistant", "content": [{"type": "text", "text": "95 cents."}], "api": "anthropic-messages",
             "provider": "anthropic", "model": "claude-haiku-4-5", "stopReason": "stop", "timestamp": 1}
        ),
        UserMessage(content="And pears?", timestamp=2),
    ],
    tools=[Tool(name="check_stock", description="How many of an item are in stock.")],
)  # fmt: skip
"""Exercise 2: a context with a system prompt, a tool and three messages."""

PLACES = ("system", "tools", "message 0 (user)", "message 1 (assistant)", "message 2 (user)")


def marks_for(retention: str) -> set[str]:
    """Where :data:`CONTEXT`'s Anthropic body carries ``cache_control`` with ``cache_retention=retention``."""
    return set(cache_marks(build_request(get_model(MODEL), CONTEXT, cache_retention=retention)))


def check_cache_marks(answer: Any) -> None:
    """Exercise 2: ``answer`` maps ``"short"`` and ``"none"`` to the set of :data:`PLACES` marked for caching."""
    name = "Exercise 2 (where the cache marks go)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == {"short", "none"},
           f'answer with {{"short": {{...}}, "none": {{...}}}}, sets of places from {PLACES}')  # fmt: skip
    for retention in ("short", "none"):
        truth, given = marks_for(retention), set(answer[retention])
        expect(name, given <= set(PLACES), f"{retention}: {sorted(given - set(PLACES))} are not places of {PLACES}")
        expect(
            name, given == truth, f"{retention}: the marks are on {sorted(truth) or 'nothing'}, not "
            f"{sorted(given) or 'nothing'}",
            "one mark ends the system prompt, one ends the conversation so far; retention 'none' asks for no cache.",
        )  # fmt: skip
    report(name, "the system prompt and the newest user message; nothing when the cache is off.")


# --- exercise 3: where the system prompt lives -----------------------------------------------------------

WHERE = ("agent.messages", "agent.state.system_prompt", "the session file", "each request body")

_WHY = {
    "agent.messages": "the history holds user, assistant and tool-result messages: no system role",
    "agent.state.system_prompt": "the agent's state holds it, and set_system_prompt() changes it",
    "the session file": "Pi's session entries have no type for it (session-manager.ts): a reopened session gets "
    "the prompt of the app that opens it",
    "each request body": "each call hands it to the provider, which puts it where its API wants it",
}


def _truth() -> dict[str, bool]:
    def setup(agent: Agent) -> None:
        agent.set_system_prompt("Answer in French.")

    agent = run_scripted(["Bonjour."], "Hello.", setup=setup)
    return {
        "agent.messages": any("Answer in French." in str(m) for m in agent.messages),
        "agent.state.system_prompt": agent.state.system_prompt == "Answer in French.",
        "the session file": False,
        "each request body": scripted_calls()[-1].system_prompt == "Answer in French.",
    }


def check_where(answer: Any) -> None:
    """Exercise 3: ``answer`` maps each of :data:`WHERE` to whether the system prompt is kept there."""
    name = "Exercise 3 (where the system prompt lives)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == set(WHERE),
           f"answer with a dict whose keys are {list(WHERE)} and values True/False")  # fmt: skip
    for place, truth in _truth().items():
        expect(name, answer[place] is truth, f"{place}: {'yes' if truth else 'no'}: {_WHY[place]}.")
    report(name, "in the agent's state and in every request; never in the history or the session file.")
