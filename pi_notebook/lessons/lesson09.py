"""Lesson 9 (``notebooks/09-your-own-app.ipynb``): a support desk on the same core, with roles of its own.

:class:`RefundRequest` is exercise 1's role; the ``check_*`` functions check the lesson's two exercises.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..agent_core import convert_to_llm, message_type
from ..ai import PiModel, UserMessage, now_ms
from .exercise import expect, expect_indices, report, unanswered


class RefundRequest(PiModel):
    """A customer asked for money back (exercise 1's role)."""

    role: Literal["refundRequest"] = "refundRequest"
    order_id: str
    """The order the refund is for."""
    amount_cents: int
    """How much, in cents."""
    reason: str
    """The customer's words."""
    approved_by: str = ""
    """The staff member who approved it: for the staff's screen only."""
    withdrawn: bool = False
    """The customer took the request back: nothing for the model to act on."""
    timestamp: int = Field(default_factory=now_ms)


_CASES = [
    RefundRequest(order_id="5531", amount_cents=1250, reason="The box was crushed.", approved_by="lead-ana"),
    RefundRequest(order_id="77", amount_cents=999, reason="It came late."),
    RefundRequest(order_id="80", amount_cents=100000, reason="Wrong size."),
]


def _text(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)


def check_refund_converter(converter: Any) -> None:
    """Exercise 1: ``converter`` turns a :class:`RefundRequest` into the one line the exercise asks for."""
    name = "Exercise 1 (write a converter)"
    if unanswered(name, converter):
        return
    expect(name, callable(converter), f"the answer is a {type(converter).__name__}; give the function itself")
    gone = RefundRequest(order_id="5531", amount_cents=1250, reason="Never mind.", withdrawn=True)
    expect(name, converter(gone) is None, "a withdrawn request must give None: there is nothing for the model to do",
           "return None first when message.withdrawn.")  # fmt: skip
    for case in _CASES:
        out = converter(case)
        expect(
            name, isinstance(out, UserMessage), f"for order {case.order_id} it returned {type(out).__name__}",
            "return UserMessage(content=..., timestamp=message.timestamp).",
        )  # fmt: skip
        text = _text(out)
        expect(name, "lead-ana" not in text, "the text names who approved the refund: that is for the staff only",
               "leave approved_by out of the text.")  # fmt: skip
        amount = f"{case.amount_cents // 100}.{case.amount_cents % 100:02d}"
        right = f"[refund for order {case.order_id}] {amount} requested: {case.reason}"
        expect(
            name, text == right, f"for order {case.order_id} the text is {text!r}; expected {right!r}",
            "the amount is in cents: 1250 cents are 12.50 (f'{cents // 100}.{cents % 100:02d}').",
        )  # fmt: skip
        expect(name, out.timestamp == case.timestamp, "keep the request's timestamp", "timestamp=message.timestamp")
    report(name, "one line per request, without the staff's field, and nothing for a withdrawn one.")


def check_dropped(answer: Any, messages: list[Any]) -> None:
    """Exercise 2: ``answer`` is the set of indices of ``messages`` that ``convert_to_llm`` drops."""
    name = "Exercise 2 (which rows are dropped)"
    if unanswered(name, answer):
        return
    expect_indices(name, answer)
    for i in answer:
        expect(name, 0 <= i < len(messages), f"there is no row {i}: the list has rows 0 to {len(messages) - 1}")
    dropped = {i for i, m in enumerate(messages) if not convert_to_llm([m])}
    for i in sorted(set(answer) ^ dropped):
        m = messages[i]
        role = m["role"] if isinstance(m, dict) else m.role
        if i in dropped and message_type(role) is None:
            why = f"no converter is registered for role {role!r}, so nothing is sent"
        elif i in dropped:
            why = "its converter returned nothing for it"
        else:
            why = f"the {role} converter sends it"
        expect(
            name, False, f"row {i} is {'dropped' if i in dropped else 'sent'}: {why}.",
            "read the two converters above: which fields make them return None? and is every role registered?",
        )  # fmt: skip
    report(name, f"rows {sorted(dropped)} are dropped.")
