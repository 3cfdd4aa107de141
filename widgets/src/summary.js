// One-line text of a Pi-JSON message (inspector panes, search). Plain strings only; callers put them
// in the DOM with textContent.
import { contentText } from "./text.js";

function clip(text, max) {
  const s = String(text ?? "").replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A short human text for an AgentMessage or a Message. */
export function shortText(message, max = 280) {
  if (!message || typeof message !== "object") return clip(JSON.stringify(message), max);
  switch (message.role) {
    case "user":
    case "custom":
      return clip(
        `${message.role === "custom" && message.customType ? `[${message.customType}] ` : ""}${contentText(message.content)}`,
        max,
      );
    case "assistant": {
      const parts = [];
      for (const b of Array.isArray(message.content) ? message.content : []) {
        if (b?.type === "text") parts.push(b.text);
        else if (b?.type === "thinking") parts.push(b.redacted ? "[reasoning redacted]" : "[thinking]");
        else if (b?.type === "toolCall") parts.push(`→ ${b.name}(${clip(JSON.stringify(b.arguments ?? {}), 80)})`);
      }
      if (message.stopReason === "error" || message.stopReason === "aborted") {
        parts.push(`[${message.stopReason}${message.errorMessage ? `: ${message.errorMessage}` : ""}]`);
      }
      return clip(parts.join(" "), max);
    }
    case "toolResult":
      return clip(`${message.toolName ?? "?"}${message.isError ? " (error)" : ""}: ${contentText(message.content)}`, max);
    case "bashExecution":
      return clip(
        `$ ${message.command ?? ""}${Number.isFinite(message.exitCode) ? ` (exit ${message.exitCode})` : ""}`,
        max,
      );
    case "notebookCell": {
      const count = Number.isSafeInteger(message.executionCount) ? `[${message.executionCount}] ` : "";
      const error = message.error && typeof message.error === "object" ? message.error : null;
      const failed = error ? ` → ${error.name ?? "error"}${error.value ? `: ${error.value}` : ""}` : "";
      const n = Array.isArray(message.images) ? message.images.length : 0;
      const images = n ? ` [${n} image${n === 1 ? "" : "s"}]` : "";
      return clip(`${count}${message.source ?? ""}${failed}${images}${message.cancelled ? " (cancelled)" : ""}`, max);
    }
    case "compactionSummary":
    case "branchSummary":
      return clip(message.summary, max);
    default:
      return clip(JSON.stringify(message), max);
  }
}
