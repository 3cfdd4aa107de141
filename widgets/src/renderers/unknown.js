// Fallback for a role with no renderer: the role name and the message as pretty JSON, clearly labelled.

export default function renderUnknown(message, el, x) {
  const role = message && typeof message === "object" ? message.role : undefined;
  x.header.appendChild(x.badge("unknown role", "warn", "No renderer is registered for this role"));
  el.appendChild(
    x.h(
      "div",
      { class: "pi-unknown" },
      x.h("div", { class: "pi-unknown-title" }, "unknown role ", x.h("code", null, String(role ?? "(none)"))),
      x.json(message),
    ),
  );
}
