// The "secrets masked" badge: the kernel replaces a known secret with `[masked: NAME]` in every message before
// it is stored, shown or sent (pi_notebook/coding_agent/masking.py); a message holding that marker anywhere
// (a prompt, a reply, shell output, a tool result, details) gets the badge, whatever its role.

const MASKED = /\[masked: [A-Za-z_][A-Za-z0-9_]*\]/;

/** Whether any of `texts` holds a `[masked: NAME]` marker. */
export function hasMasked(...texts) {
  return texts.some((t) => typeof t === "string" && MASKED.test(t));
}

/** Whether any string inside `value` (a message: nested objects and arrays) holds a `[masked: NAME]` marker. */
export function maskedIn(value, depth = 0) {
  if (typeof value === "string") return MASKED.test(value);
  if (depth > 8 || value === null || typeof value !== "object") return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  return items.some((item) => maskedIn(item, depth + 1));
}

/** The badge, built with the renderer's helpers. */
export function maskedBadge(x) {
  return x.badge("secrets masked", "masked", "Known secrets (API keys, tokens) were replaced by [masked: NAME]");
}
