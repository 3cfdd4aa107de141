// The transcript's view of a ticketEvent: a timeline line, a badge for the event, the ticket and the detail.
// `x` holds the transcript's safe builders: every value of the message goes in as text (x.h, x.text, x.badge).
export default function render(message, el, x) {
  const event = String(message.event ?? "");
  const kind = event === "escalated" ? "error" : event === "opened" ? "warn" : event === "closed" ? "ok" : "neutral";
  el.appendChild(
    x.h(
      "div",
      { class: "ticket-event", dataset: { ticket: String(message.ticketId ?? ""), event } },
      x.badge(event.replaceAll("_", " ") || "event", kind),
      x.h("b", null, ` ${message.ticketId ?? "?"} `),
      x.text(message.detail ?? ""),
    ),
  );
}
