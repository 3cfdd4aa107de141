// The "secrets masked" badge: the kernel replaces a known secret in shell output and tool results with
// `[masked: NAME]` (pi_notebook/coding_agent/secrets.py); a text holding that marker gets the badge.

const MASKED = /\[masked: [A-Za-z_][A-Za-z0-9_]*\]/;

/** Whether any of `texts` holds a `[masked: NAME]` marker. */
export function hasMasked(...texts) {
  return texts.some((t) => typeof t === "string" && MASKED.test(t));
}

/** The badge, built with the renderer's helpers. */
export function maskedBadge(x) {
  return x.badge("secrets masked", "masked", "Known secrets (API keys, tokens) were replaced by [masked: NAME]");
}
