// The transcript's view of an orderNote: every field the staff need, the warehouse and a staff-only mark included
// (the model reads only the status and the note, and nothing of a staff-only note: see order_note_to_llm).
export default function render(message, el, x) {
  if (message.staffOnly) x.header.appendChild(x.badge("staff only", "ui", "Never sent to the model"));
  el.appendChild(
    x.h(
      "div",
      { class: "order-note", dataset: { order: String(message.orderId ?? "") } },
      x.h("b", null, `order ${message.orderId ?? "?"}`),
      ` · ${message.status ?? ""}`,
      message.warehouse ? ` · warehouse ${message.warehouse}` : null,
      x.h("div", null, String(message.note ?? "")),
    ),
  );
}
