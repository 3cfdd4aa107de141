// The saved form of a view: the MIME types a notebook output holds for a transcript or an inspector, the state
// they carry (the widget's synced traits as plain JSON, nothing else), and how a live view tells the output
// around it that its state changed, so a notebook saved later holds the latest state without the kernel
// sending the whole history again (pi_notebook/notebook/saved.py writes the same shapes).

import { savedRenderers } from "./plugins.js";

export const SAVED_VERSION = 1;

export const KINDS = {
  transcript: {
    mime: "application/vnd.pi-notebook.transcript+json",
    keys: ["messages", "visibility", "title", "show_hidden"],
    defaults: { messages: [], visibility: [], title: "", show_hidden: false, streaming: null, renderers: {} },
  },
  inspector: {
    mime: "application/vnd.pi-notebook.inspector+json",
    keys: [
      "rows", "requests", "provider", "context_window", "total_tokens", "overhead_tokens", "reported_usage",
      "model_name", "notes", "compaction",
    ],
    defaults: {
      rows: [], requests: {}, provider: "", context_window: 0, total_tokens: 0, overhead_tokens: {},
      reported_usage: {}, model_name: "", notes: [], busy: false, compaction: {},
    },
  },
};

/** The event a live view fires (bubbling) on its element when its state changed: `detail.snapshot()`. */
export const STATE_EVENT = "pi-notebook-state";
/** The event a saved output sends to the live views inside it (marked `data-pi-state`): "this page keeps your
 * latest state in my saved form when the notebook is saved". The view tells its kernel, which then need not
 * send the whole history again as a display update to keep the saved form complete. */
export const KEPT_EVENT = "pi-notebook-kept";
const QUIET_MS = 800;

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The model state a view needs, from a saved output's data. Only the known keys are taken, with defaults for
 * what is missing or malformed; nothing the data holds becomes code, except, with `trusted` (JupyterLab trusts the
 * output), a transcript's saved plugin renderers (plugins.js).
 */
export function savedState(kind, data, { trusted = false } = {}) {
  const spec = KINDS[kind];
  const state = { ...spec.defaults };
  if (!isObject(data)) return state;
  if (kind === "transcript") data = unpackTranscript(data);
  for (const key of spec.keys) {
    const value = data[key];
    const fallback = spec.defaults[key];
    const ok = Array.isArray(fallback) ? Array.isArray(value)
      : isObject(fallback) ? isObject(value)
      : typeof value === typeof fallback;
    if (ok) state[key] = value;
  }
  if (kind === "transcript" && trusted) state.renderers = savedRenderers(data);
  return state;
}

/**
 * A saved transcript as the view's state. Python writes each message as its Pi JSON on one line (a string) and
 * `visibility` as {index: level} for the messages not "both" (saved.py says why); objects and a full list are
 * read too.
 */
function unpackTranscript(data) {
  const messages = Array.isArray(data.messages)
    ? data.messages.map((m) => {
        if (typeof m !== "string") return m;
        try {
          return JSON.parse(m);
        } catch {
          return { role: "?", content: m };
        }
      })
    : data.messages;
  let visibility = data.visibility;
  if (isObject(visibility) && Array.isArray(messages)) {
    visibility = messages.map((_, i) => (typeof visibility[i] === "string" ? visibility[i] : "both"));
  }
  return { ...data, messages, visibility };
}

/** The saved form of a model's current state (as Python writes it: see unpackTranscript), a copy. */
export function snapshot(kind, model) {
  const out = { version: SAVED_VERSION };
  for (const key of KINDS[kind].keys) {
    const value = model.get(key);
    if (value !== undefined) out[key] = value;
  }
  if (kind === "transcript") {
    const levels = Array.isArray(out.visibility) ? out.visibility : [];
    out.messages = (Array.isArray(out.messages) ? out.messages : []).map((m) => JSON.stringify(m));
    out.visibility = Object.fromEntries(levels.map((v, i) => [String(i), v]).filter(([, v]) => v !== "both"));
    return out;
  }
  return JSON.parse(JSON.stringify(out));
}

/**
 * Fire STATE_EVENT on `el` once the model has been quiet for a moment after a change (not while a reply streams
 * or the inspector still computes). The snapshot is made only if someone asks for it. On KEPT_EVENT, tell the
 * kernel (once) that the page keeps the saved form. Returns the function that stops.
 */
export function announceState(el, kind, model) {
  let timer = null;
  const fire = () => {
    timer = null;
    if (model.get("streaming") || model.get("busy") === true) return;
    const detail = { kind, mime: KINDS[kind].mime, snapshot: () => snapshot(kind, model) };
    const Event = el.ownerDocument?.defaultView?.CustomEvent ?? CustomEvent; // the element's own window's
    el.dispatchEvent(new Event(STATE_EVENT, { bubbles: true, detail }));
  };
  const onChange = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(fire, QUIET_MS);
  };
  const events = [...KINDS[kind].keys, "streaming", "busy"].map((key) => `change:${key}`).join(" ");
  model.on(events, onChange);
  el.dataset.piState = kind;
  const onKept = () => model.send({ pi: "page_keeps_state" });
  el.addEventListener(KEPT_EVENT, onKept, { once: true });
  return () => {
    if (timer !== null) clearTimeout(timer);
    model.off(events, onChange);
    el.removeEventListener(KEPT_EVENT, onKept);
  };
}
