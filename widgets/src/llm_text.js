// What the LLM gets, exactly: the inspector's LLM column shows each text block of a message as it is sent, its
// line breaks, spaces and code fences kept (no reflowing into one line), a tool call as its name and the JSON of
// its arguments, thinking as thinking. Images are drawn as thumbnails by the caller. Plain strings only: the
// caller puts them in the DOM with textContent.
import { normaliseContent } from "./text.js";

/**
 * The parts of an LLM message (Pi JSON), in order: `{kind: "text" | "thinking" | "toolCall", text}`. Text blocks
 * are kept exactly; empty ones are dropped (nothing of them reaches the model to see).
 */
export function llmParts(message) {
  if (!message || typeof message !== "object") return [];
  const parts = [];
  for (const block of normaliseContent(message.content)) {
    if (block?.type === "text" && typeof block.text === "string" && block.text) {
      parts.push({ kind: "text", text: block.text });
    } else if (block?.type === "thinking") {
      parts.push({ kind: "thinking", text: block.redacted ? "[reasoning redacted]" : String(block.thinking ?? "") });
    } else if (block?.type === "toolCall") {
      let args;
      try {
        args = JSON.stringify(block.arguments ?? {});
      } catch {
        args = "{…}";
      }
      parts.push({ kind: "toolCall", text: `→ ${block.name ?? "?"}(${args})` });
    }
  }
  return parts;
}

/** All of a message's parts as one text (search, copy), blocks one blank line apart. */
export function llmText(message) {
  return llmParts(message)
    .map((p) => p.text)
    .join("\n\n");
}
