// Markdown → sanitized DOM. The only place where content becomes HTML: marked renders, DOMPurify
// cleans (returning a DOM fragment, so the cleaned tree is never re-serialised and re-parsed), then a
// last pass enforces the URL policy. Model, tool and shell output is untrusted.
import createDOMPurify from "dompurify";
import { Marked } from "marked";
import { doc, h } from "./dom.js";

const marked = new Marked({
  async: false,
  gfm: true,
  breaks: false,
  renderer: {
    // GFM task lists: a glyph instead of an <input> (no form controls in rendered content).
    checkbox({ checked }) {
      return checked ? "☑ " : "☐ ";
    },
  },
});

/** Tags never allowed, on top of DOMPurify's HTML-only profile (which already drops SVG and MathML). */
export const FORBID_TAGS = [
  "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "input", "button",
  "textarea", "select", "option", "meta", "link", "base", "svg", "math", "template", "noscript", "video",
  "audio", "source", "track", "picture", "portal", "dialog",
];
/** Attributes never allowed: inline CSS, ids/classes (no clobbering, no spoofing our own UI), URL carriers. */
export const FORBID_ATTR = [
  "style", "class", "id", "name", "srcset", "action", "formaction", "background", "ping", "poster", "xlink:href",
  "target", "form", "autofocus", "tabindex",
];

const SAFE_LINK = /^(?:https?|mailto):$/i;
/** The only images shown inline: base64 PNG/JPEG/GIF/WebP. */
export const SAFE_IMAGE_DATA = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$/i;

const purifiers = new WeakMap();

function purifierFor(win) {
  let p = purifiers.get(win);
  if (!p) {
    p = createDOMPurify(win);
    p.addHook("uponSanitizeAttribute", (_node, data) => {
      // Belt and braces: DOMPurify already drops on* attributes; never keep one.
      if (/^on/i.test(data.attrName)) data.keepAttr = false;
    });
    purifiers.set(win, p);
  }
  return p;
}

const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS,
  FORBID_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

/** Protocol of an absolute URL ("https:"), or null when it does not parse as one. */
function protocolOf(url) {
  try {
    return new URL(url).protocol;
  } catch {
    return null;
  }
}

/** Enforce the URL policy on a sanitized fragment (links: http/https/mailto; images: data:image only). */
export function enforceUrlPolicy(root) {
  for (const el of root.querySelectorAll("[href], [src], [action], [formaction], [xlink\\:href], [srcdoc]")) {
    const tag = el.tagName.toLowerCase();
    for (const attr of ["action", "formaction", "xlink:href", "srcdoc"]) el.removeAttribute(attr);
    if (el.hasAttribute("href")) {
      const ok = tag === "a" && SAFE_LINK.test(protocolOf(el.getAttribute("href")) || "");
      if (ok) {
        el.setAttribute("target", "_blank");
        el.setAttribute("rel", "noopener noreferrer");
      } else {
        el.removeAttribute("href");
      }
    }
    if (el.hasAttribute("src")) {
      const src = el.getAttribute("src");
      if (tag === "img" && SAFE_IMAGE_DATA.test(src)) continue;
      if (tag === "img" && /^https?:$/i.test(protocolOf(src) || "")) {
        // A remote image would be fetched without a click, which lets content leak data through the
        // URL; show it as a link instead.
        const a = h("a", { href: src, target: "_blank", rel: "noopener noreferrer", class: "pi-blocked-img" });
        a.textContent = `[image: ${el.getAttribute("alt") || src}]`;
        el.replaceWith(a);
      } else {
        el.removeAttribute("src");
      }
    }
  }
  for (const a of root.querySelectorAll("a")) {
    if (!a.hasAttribute("href")) a.removeAttribute("target");
  }
  return root;
}

// Text with none of these can be rendered as plain paragraphs without running marked + DOMPurify:
// much faster for long transcripts of ordinary prose.
const NEEDS_MARKDOWN =
  /[<>&*_`#[\]!|~\\@]|:\/\/|www\.|^ {0,3}(?:[-+*>]|\d{1,9}[.)])(?:\s|$)|^(?: {4}|\t)|^ {0,3}(?:=+|-+)\s*$/m;

/** Render markdown text into a sanitized <div class="pi-md">. */
export function markdown(text) {
  const box = h("div", { class: "pi-md" });
  const src = typeof text === "string" ? text : String(text ?? "");
  if (!NEEDS_MARKDOWN.test(src)) {
    for (const para of src.split(/\n[ \t]*\n/)) {
      if (para.trim()) box.appendChild(h("p", null, para.trim()));
    }
    return box;
  }
  const win = doc().defaultView;
  const purifier = win ? purifierFor(win) : null;
  if (!purifier || !purifier.isSupported) {
    // No DOM to sanitize with: show the source as text rather than risk unsanitized HTML.
    box.appendChild(h("pre", { class: "pi-md-raw" }, src));
    return box;
  }
  let html;
  try {
    html = marked.parse(src);
  } catch (err) {
    box.appendChild(h("pre", { class: "pi-md-raw" }, src));
    box.dataset.markdownError = String(err && err.message);
    return box;
  }
  const frag = purifier.sanitize(html, CONFIG);
  enforceUrlPolicy(frag);
  box.appendChild(frag); // adopted into the page's document if needed
  return box;
}
