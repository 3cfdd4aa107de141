"""Notebook 09's support desk as a pi_notebook plugin: two roles, what the model reads of each, their transcript
renderers, and a tool.

``ticketEvent``: something happened to a ticket; the UI draws a timeline line with a badge, the model reads one line.
``orderNote``: a note from the order system; the UI shows every field, the warehouse included; the model reads the
status and the note, and nothing of a staff-only note. ``ticket_status``: the model looks a ticket up (read-only).

Installed, the package's entry point (``pi_notebook.plugins``: ``tickets = "pi_notebook_tickets:setup"``) makes
``%load_ext pi_notebook`` register all of it; a notebook then only records messages::

    from pi_notebook_tickets import TicketEvent
    pi_notebook.record(TicketEvent(ticket_id="T-1042", event="opened", detail="Order 5531 arrived damaged."))
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Literal

from pydantic import Field

from pi_notebook.agent_core import AgentTool
from pi_notebook.ai import PiModel, UserMessage, now_ms

__all__ = ["TICKETS", "OrderNote", "TicketEvent", "setup"]
__version__ = "0.1.0"


class TicketEvent(PiModel):
    """Something that happened to a ticket."""

    role: Literal["ticketEvent"] = "ticketEvent"
    ticket_id: str
    """The ticket (``T-1042``)."""
    event: str
    """``opened``, ``customer_replied``, ``escalated``, ``closed``..."""
    detail: str = ""
    """What the customer or the agent said, shortly."""
    timestamp: int = Field(default_factory=now_ms)


class OrderNote(PiModel):
    """A note from the order system."""

    role: Literal["orderNote"] = "orderNote"
    order_id: str
    status: str
    note: str
    warehouse: str = ""
    """For the staff's screen only: never sent to the model."""
    staff_only: bool = False
    """Shown to the staff, never to the model."""
    timestamp: int = Field(default_factory=now_ms)


def ticket_event_to_llm(m: TicketEvent) -> UserMessage:
    """One line: ``[ticket T-1042] customer replied: Photo: the box is crushed.``"""
    what = m.event.replace("_", " ")
    return UserMessage(content=f"[ticket {m.ticket_id}] {what}" + (f": {m.detail}" if m.detail else ""),
                       timestamp=m.timestamp)  # fmt: skip


def order_note_to_llm(m: OrderNote) -> UserMessage | None:
    """The status and the note, without the warehouse; nothing of a staff-only note."""
    if m.staff_only:
        return None
    return UserMessage(content=f"[order {m.order_id}] status {m.status}. {m.note}", timestamp=m.timestamp)


TICKETS: dict[str, dict[str, Any]] = {
    "T-1042": {"status": "open", "order": "5531", "priority": "high", "customer": "R. Lind"},
    "T-1043": {"status": "closed", "order": "5540", "priority": "low", "customer": "M. Okafor"},
}
"""The demo helpdesk the tool reads (a real plugin would ask its helpdesk's API)."""


def ticket_status_tool(cwd: Any) -> AgentTool:
    """``ticket_status``: a ticket's status, order, priority and customer."""

    def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None) -> str:
        ticket = TICKETS.get(params["ticket_id"])
        if ticket is None:
            raise ValueError(f"no ticket {params['ticket_id']!r}; known: {', '.join(TICKETS)}")
        return json.dumps({"ticket_id": params["ticket_id"], **ticket})

    return AgentTool(
        name="ticket_status",
        description="Look up a support ticket: its status, order, priority and customer.",
        parameters={
            "type": "object",
            "properties": {"ticket_id": {"type": "string", "description": "The ticket, e.g. T-1042"}},
            "required": ["ticket_id"],
        },
        execute=execute,
        label="ticket status",
    )


def setup(plugin: Any) -> None:
    """The plugin's entry point: called once by ``%load_ext pi_notebook`` (and by an ``AgentSession``)."""
    plugin.register_message_type(TicketEvent, to_llm=ticket_event_to_llm)
    plugin.register_message_type(OrderNote, to_llm=order_note_to_llm)
    plugin.register_renderer("ticketEvent", files(__name__) / "ticket_event.js")
    plugin.register_renderer("orderNote", files(__name__) / "order_note.js")
    plugin.register_tool("ticket_status", ticket_status_tool, read_only=True)  # named with --tools ticket_status
