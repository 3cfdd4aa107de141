// Plain-text views of Pi content (no DOM, no markdown): cheap enough for the inspector and search.

/** Pi content: a string or a list of blocks → a list of blocks. */
export function normaliseContent(content) {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (Array.isArray(content)) return content;
  return [content];
}

/** Plain text of a content value (for summaries and search). */
export function contentText(content) {
  return normaliseContent(content)
    .map((b) => (b?.type === "text" ? b.text : b?.type === "image" ? `[image ${b.mimeType ?? ""}]` : ""))
    .filter(Boolean)
    .join("\n");
}
