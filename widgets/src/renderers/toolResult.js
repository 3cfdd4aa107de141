// toolResult: what the LLM sees (text as monospace output, images), error styling, a link back to the
// call, and `details` (UI-only structured data) behind a toggle. A tool with a view of its own (tool_views.js:
// the notebook's `python` draws its result as a cell's output) fills the body its way, under the same badges.

import { toolView } from "../tool_views.js";
import { hasMasked, maskedBadge } from "./masked.js";

export default function renderToolResult(message, el, x) {
  const id = String(message.toolCallId ?? "");
  const isError = message.isError === true;
  if (isError) {
    x.article.classList.add("pi-is-error");
    x.header.appendChild(x.badge("error", "error", "The tool reported an error (isError)"));
  }
  const texts = Array.isArray(message.content) ? message.content.map((block) => block?.text) : [];
  if (hasMasked(...texts)) x.header.appendChild(maskedBadge(x));
  const view = toolView(message.toolName)?.result;
  if (view) {
    view(message, el, x);
    return;
  }
  const box = x.h(
    "div",
    { class: ["pi-toolresult", isError && "pi-toolresult-error"], id: x.resultAnchor(id), dataset: { toolCallId: id } },
    x.h(
      "div",
      { class: "pi-card-head" },
      x.h("span", { class: "pi-card-kind" }, isError ? "tool error" : "tool result"),
      x.h("code", { class: "pi-tool-name" }, String(message.toolName ?? "?")),
      x.linkToCall(id),
    ),
    x.content(message.content, { asMarkdown: false }),
  );
  if (message.details !== undefined && message.details !== null) {
    box.appendChild(
      x.h(
        "details",
        { class: "pi-details", title: "UI/log data, never sent to the LLM" },
        x.h("summary", null, "details"),
        x.json(message.details),
      ),
    );
  }
  el.appendChild(box);
}
