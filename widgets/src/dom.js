// Small DOM helpers. Everything that comes from a message is put in the DOM as text
// (textContent / text nodes), never as HTML: the only HTML path is markdown.js, which sanitizes.

/** The document to build nodes in (the browser's, or the test's jsdom). */
export function doc() {
  return globalThis.document;
}

/**
 * Create an element: h("div", {class: "x", dataset: {role: "user"}}, child, "text", [more]).
 * Attribute values are set with setAttribute (never innerHTML); strings among children become text nodes.
 * `on*` keys are refused so that no content can ever become an event handler attribute.
 */
export function h(tag, attrs, ...children) {
  const el = doc().createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (/^on/i.test(key)) throw new Error(`h(): refusing event handler attribute ${key}`);
      if (key === "dataset") {
        for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
      } else if (key === "class") {
        el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : String(value);
      } else if (key === "text") {
        el.textContent = String(value);
      } else if (value === true) {
        el.setAttribute(key, "");
      } else {
        el.setAttribute(key, String(value));
      }
    }
  }
  append(el, children);
  return el;
}

/** Append children (nodes, strings as text, nested arrays; null/false skipped). */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (typeof child === "object" && "nodeType" in child) parent.appendChild(child);
    else parent.appendChild(doc().createTextNode(String(child)));
  }
  return parent;
}

/** Pretty JSON (2-space), tolerant of cycles and BigInt so a bad message never breaks the view. */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2); // JSON from the kernel: fast (no replacer called per value)
  } catch {
    // a cycle or a BigInt: the careful way below
  }
  const seen = new WeakSet();
  try {
    return JSON.stringify(
      value,
      (_k, v) => {
        if (typeof v === "bigint") return v.toString();
        if (v && typeof v === "object") {
          if (seen.has(v)) return "[circular]";
          seen.add(v);
        }
        return v;
      },
      2,
    );
  } catch (err) {
    return `[unserialisable: ${err && err.message}]`;
  }
}

/** A <pre> of pretty JSON, as text. */
export function jsonBlock(value, cls = "pi-json") {
  return h("pre", { class: cls, text: prettyJson(value) ?? "undefined" });
}

/** A small label: badge("error", "error"). Kinds map to colours in the CSS. */
export function badge(text, kind = "neutral", title) {
  return h("span", { class: `pi-badge pi-badge-${kind}`, dataset: { badge: kind }, title }, text);
}

/** 12,345 */
export function fmtInt(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "?";
}

/** $0.0123 (four decimals under a dollar). */
export function fmtCost(usd) {
  if (!Number.isFinite(usd)) return "";
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** Local time of a Unix-ms timestamp, or "" when absent. */
export function fmtTime(ms) {
  if (!Number.isFinite(ms)) return "";
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString();
}

/** A safe fragment for element ids: [A-Za-z0-9_-] kept, anything else as _hex_. Deterministic and injective. */
export function idPart(value) {
  return String(value).replace(/[^A-Za-z0-9-]/g, (c) => `_${c.codePointAt(0).toString(16)}_`);
}

/** requestAnimationFrame, or a timer where there is none. */
export function nextFrame(cb) {
  const raf = globalThis.requestAnimationFrame;
  if (typeof raf === "function") {
    const id = raf(cb);
    return () => globalThis.cancelAnimationFrame?.(id);
  }
  const id = setTimeout(cb, 16);
  return () => clearTimeout(id);
}

/**
 * A copy button: navigator.clipboard when allowed, else a hidden <textarea> + execCommand("copy"),
 * else it selects `fallbackTarget` so the user can press Ctrl+C.
 */
export function copyButton(getText, label = "copy", fallbackTarget = null) {
  const btn = h("button", { type: "button", class: "pi-copy", title: "Copy to the clipboard" }, label);
  btn.addEventListener("click", async (ev) => {
    ev.stopPropagation();
    const text = getText();
    let ok = false;
    try {
      if (globalThis.navigator?.clipboard?.writeText) {
        await globalThis.navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch {
      ok = false; // not a secure context or permission denied: try the textarea route
    }
    if (!ok) ok = execCopy(text);
    if (!ok && fallbackTarget) selectContents(fallbackTarget);
    btn.textContent = ok ? "copied" : "select + Ctrl+C";
    btn.dataset.copied = ok ? "true" : "false";
    setTimeout(() => {
      btn.textContent = label;
      delete btn.dataset.copied;
    }, 1500);
  });
  return btn;
}

function execCopy(text) {
  const d = doc();
  if (typeof d.execCommand !== "function") return false;
  const ta = d.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  d.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = d.execCommand("copy") === true;
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

function selectContents(node) {
  const sel = (doc().defaultView ?? globalThis).getSelection?.();
  if (!sel) return;
  const range = doc().createRange();
  range.selectNodeContents(node);
  sel.removeAllRanges();
  sel.addRange(range);
}
