"""Lesson 7 (``notebooks/07-journey-of-a-bash-command.ipynb``): one ``%bash`` from creation to the request.

The ``check_*`` functions check the lesson's three exercises.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..ai import Context, UserMessage, build_request, get_model
from .exercise import expect, report, unanswered

STEPS = {1: "created", 2: "recorded", 3: "next turn", 4: "stage 1", 5: "stage 2", 6: "provider", 7: "the reply"}

ARTEFACTS = {
    "A": 'a user message whose text is "Ran `ls demo`\\n```\\nprivate.txt …"',
    "B": '{"type": "message", "id": "71014bc1", "parentId": null, "message": {"role": "bashExecution", …}}',
    "C": '{"system": [{"type": "text", "text": "You are …"}], "messages": [{"role": "user", …}], "max_tokens": 1024}',
    "D": 'BashExecutionMessage(command="ls demo", output="private.txt\\n…", exit_code=0)',
}
"""Exercise 1: four things seen on the journey."""

_MADE_BY = {
    "A": (5, "convert_to_llm turns the bashExecution into a user message with Pi's text"),
    "B": (2, "a session file entry, with an id and a parent: the message being recorded"),
    "C": (6, "a top-level system list and max_tokens: the Anthropic provider's request body"),
    "D": (1, "the typed message the magic builds from what the command did"),
}


def check_steps(answer: Any) -> None:
    """Exercise 1: ``answer`` maps each of :data:`ARTEFACTS` to the step (1–7) that produced it."""
    name = "Exercise 1 (which step made it)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(name, isinstance(answer, dict) and set(answer) == set(ARTEFACTS), 'answer with {"A": step, "B": ..., …}')
    for key, (step, why) in _MADE_BY.items():
        given = answer[key]
        expect(name, given in STEPS, f"{key}: {given!r} is not a step number 1–7")
        expect(
            name, given == step, f"{key} comes from step [{step}] ({STEPS[step]}), not [{given}]: {why}.",
            "follow the diagram at the top: the message, the file, the two stages, the provider.",
        )  # fmt: skip
    report(name, "the journey, in order: D, B, A, C.")


APIS = {
    "anthropic-messages": "anthropic/claude-sonnet-4-5",
    "openai-responses": "openai/gpt-4.1-mini",
    "openai-completions": "openai-completions/gpt-4.1-mini",
    "google-generative-ai": "google/gemini-2.5-flash",
}
"""Exercise 2's four APIs and the model each request is built for."""

_PROMPT = "You answer in one line."


def _holder(body: dict[str, Any]) -> str | None:
    """The top-level key of ``body`` whose value holds the system prompt."""
    return next((key for key, value in body.items() if _PROMPT in json.dumps(value)), None)


def check_system_keys(answer: Any) -> None:
    """Exercise 2: ``answer`` maps each API to the top-level key of its body that holds the system prompt."""
    name = "Exercise 2 (where the system prompt goes)"
    if unanswered(name, answer, *(answer.values() if isinstance(answer, dict) else ())):
        return
    expect(
        name, isinstance(answer, dict) and set(answer) == set(APIS), f"answer with a dict whose keys are {list(APIS)}"
    )
    context = Context(system_prompt=_PROMPT, messages=[UserMessage(content="Hi.", timestamp=0)])
    for api, model in APIS.items():
        key = _holder(build_request(get_model(model), context, max_tokens=256))
        expect(
            name, answer[api] == key, f"{api}: the system prompt is under {key!r}, not {answer[api]!r}",
            "look at the four columns of the table cell above, or build a body with build_request and print it.",
        )  # fmt: skip
    report(name, "four APIs, four places, one Context.")


def check_leaves_at(answer: Any) -> None:
    """Exercise 3: ``answer`` is the step at which a ``%bash!`` command stops travelling."""
    name = "Exercise 3 (where %bash! stops)"
    if unanswered(name, answer):
        return
    expect(name, answer in STEPS, f"{answer!r} is not a step number 1–7")
    expect(
        name,
        answer >= 4,
        f"it gets past step [{answer}]: a %bash! command is created, recorded in the history "
        "and the session file, and reaches stage 1 like any other message",
        "nothing deletes it before the boundary.",
    )
    expect(name, answer <= 5, f"it never reaches step [{answer}]: convert_to_llm already returned nothing for it",
           "which function reads exclude_from_context?")  # fmt: skip
    expect(name, answer == 5, "stage 1 passes it on unless your own transform leaves it out; it is dropped at "
           "stage 2, where its converter returns nothing for exclude_from_context")  # fmt: skip
    report(name, "stored and shown, dropped at the boundary by convert_to_llm.")


def side_by_side(payloads: dict[str, Any]) -> Any:
    """The request bodies as one HTML table, a column per API (what the lesson's table cell shows)."""
    from IPython.display import HTML

    def column(title: str, body: Any) -> str:
        text = html.escape(json.dumps(body, indent=2, ensure_ascii=False))
        return (
            f'<td style="vertical-align: top; text-align: left"><b>{html.escape(title)}</b>'
            f'<pre style="white-space: pre-wrap; font-size: 85%">{text}</pre></td>'
        )

    return HTML("<table><tr>" + "".join(column(api, body) for api, body in payloads.items()) + "</tr></table>")
