// assistant: markdown text, collapsed thinking, one card per tool call (linked to its result),
// error/aborted marks and a quiet usage footer. Signatures (thinking/text/thought) are never shown.

import { toolView } from "../tool_views.js";

const ARGS_OPEN_LINES = 12;

function thinkingBlock(block, x) {
  if (block.redacted) {
    return x.h("div", { class: "pi-thinking pi-redacted", dataset: { thinking: "redacted" } }, "Reasoning redacted");
  }
  return x.h(
    "details",
    { class: "pi-thinking", dataset: { thinking: "visible" } },
    x.h("summary", null, "Thinking"),
    x.markdown(block.thinking ?? ""),
  );
}

/** Arguments: pretty JSON; string values with newlines (file contents, scripts) as readable text blocks. */
function argumentsView(args, x) {
  const multiline =
    args && typeof args === "object" && !Array.isArray(args)
      ? Object.values(args).some((v) => typeof v === "string" && v.includes("\n"))
      : false;
  if (!multiline) return x.json(args ?? {});
  const list = x.h("dl", { class: "pi-args" });
  for (const [key, value] of Object.entries(args)) {
    list.appendChild(x.h("dt", null, key));
    list.appendChild(
      x.h("dd", null, typeof value === "string" ? x.output(value, { cls: "pi-output pi-arg-text" }) : x.json(value)),
    );
  }
  return list;
}

export function toolCallCard(block, x) {
  const view = toolView(block.name)?.call; // a tool drawn its own way (tool_views.js): the notebook's python
  if (view) return view(block, x);
  const id = String(block.id ?? "");
  const pretty = x.prettyJson(block.arguments ?? {}) ?? "";
  const lines = pretty.split("\n").length;
  const compact = JSON.stringify(block.arguments ?? {}) ?? "";
  const details = x.h(
    "details",
    { class: "pi-args-box", open: lines <= ARGS_OPEN_LINES },
    x.h("summary", null, "arguments ", x.h("span", { class: "pi-quiet pi-preview" }, compact.slice(0, 100))),
    argumentsView(block.arguments, x),
  );
  return x.h(
    "div",
    { class: "pi-toolcall", id: x.callAnchor(id), dataset: { toolCallId: id } },
    x.h(
      "div",
      { class: "pi-card-head" },
      x.h("span", { class: "pi-card-kind" }, "tool call"),
      x.h("code", { class: "pi-tool-name" }, String(block.name ?? "?")),
      x.linkToResult(id),
    ),
    details,
  );
}

function usageFooter(message, x) {
  const parts = [];
  if (message.model) parts.push(x.h("span", { class: "pi-model" }, String(message.model)));
  // A partial message's stopReason is a placeholder until the stream ends.
  if (message.stopReason && !x.streaming) parts.push(x.h("span", { class: "pi-stop" }, String(message.stopReason)));
  const u = message.usage;
  if (u && typeof u === "object") {
    if (Number.isFinite(u.input)) parts.push(x.h("span", { class: "pi-tokens-in" }, `${x.fmtInt(u.input)} in`));
    if (Number.isFinite(u.output)) parts.push(x.h("span", { class: "pi-tokens-out" }, `${x.fmtInt(u.output)} out`));
    if (u.cacheRead > 0) parts.push(x.h("span", { class: "pi-tokens-cache" }, `${x.fmtInt(u.cacheRead)} cached`));
    const cost = u.cost?.total;
    if (Number.isFinite(cost) && cost > 0) parts.push(x.h("span", { class: "pi-cost" }, x.fmtCost(cost)));
  }
  if (!parts.length) return null;
  const foot = x.h("footer", { class: "pi-msg-foot" });
  parts.forEach((p, i) => {
    if (i) foot.appendChild(x.text(" · "));
    foot.appendChild(p);
  });
  return foot;
}

export default function renderAssistant(message, el, x) {
  const content = Array.isArray(message.content) ? message.content : x.normaliseContent(message.content);
  for (const block of content) {
    if (block?.type === "text") el.appendChild(x.markdown(block.text ?? ""));
    else if (block?.type === "thinking") el.appendChild(thinkingBlock(block, x));
    else if (block?.type === "toolCall") el.appendChild(toolCallCard(block, x));
    else el.appendChild(x.json(block));
  }
  const stop = message.stopReason;
  // A failed reply says why below; "(empty response)" above that would read as a second, separate problem.
  const failed = stop === "error" || stop === "aborted";
  if (!content.length && !x.streaming && !failed) el.appendChild(x.h("div", { class: "pi-quiet" }, "(empty response)"));
  if (stop === "error" || stop === "aborted") {
    x.article.classList.add(stop === "error" ? "pi-is-error" : "pi-is-aborted");
    x.header.appendChild(x.badge(stop, stop === "error" ? "error" : "warn"));
    el.appendChild(
      x.h(
        "div",
        { class: `pi-error-box pi-${stop}`, role: "alert", dataset: { stopReason: stop } },
        x.h("strong", null, stop === "error" ? "Error" : "Aborted"),
        message.errorMessage ? `: ${message.errorMessage}` : "",
      ),
    );
  }
  const foot = usageFooter(message, x);
  if (foot) el.appendChild(foot);
}
