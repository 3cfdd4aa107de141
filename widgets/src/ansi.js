// ANSI SGR (colours, bold, …) → <span>s. Text always goes in as text nodes, so shell output can never
// become markup; colours are classes (16-colour palette, themed in CSS) or rgb() built from integers.
// Every other escape sequence (cursor moves, OSC titles and hyperlinks, …) is dropped.
//
// Hand-written on purpose. The rules for what is a terminal code are those of the Python side
// (pi_notebook/coding_agent/tools/shell_output.py, the one place they are written there); test/ansi-rules.test.js
// and tests/coding_agent/tools/test_ansi_rules.py hold both to the same cases (test/ansi_cases.json). The
// libraries looked at were not as good: ansi_up returns an HTML string (it would have to go through innerHTML);
// anser (2.3) leaves OSC titles and hyperlinks in the text, shows part of a malformed truecolor code, knows no
// 8-bit CSI, and neither resolves a progress bar's \r.
import { doc } from "./dom.js";

// CSI … final byte | 8-bit CSI | OSC … BEL/ST (an open one runs to the next ESC) | DCS/SOS/PM/APC strings |
// charset selection | other two-byte ESC sequences.
const ESCAPES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[()*+#%][0-9A-Za-z@]|\x1b[@-Z\\^_=>78cDEHMNO]/g;
const SGR_ONLY = /\x1b\[[0-9;:]*m/g;
// C0 controls but \t and \n (a lone ESC included; \r is resolved first), DEL, C1 controls, U+FFF9–FFFB.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]/g;

/** Text without any escape sequence or control character (tabs and newlines kept). */
export function stripAnsi(text) {
  return resolveCarriageReturns(String(text ?? "")).replace(ESCAPES, "").replace(CONTROL, "");
}

/** A terminal overwrites a line on a bare \r: keep the last segment, and the colour codes that came before. */
export function resolveCarriageReturns(text) {
  if (!text.includes("\r")) return text;
  return text
    .replace(/\r+\n/g, "\n")
    .split("\n")
    .map((line) => {
      if (!line.includes("\r")) return line;
      const parts = line.split("\r");
      const last = parts.pop();
      const carried = parts.map((p) => (p.match(SGR_ONLY) || []).join("")).join("");
      return carried + last;
    })
    .join("\n");
}

function cubeColour(n) {
  if (n < 232) {
    const i = n - 16;
    const level = (v) => (v === 0 ? 0 : 55 + v * 40);
    return [level(Math.floor(i / 36)), level(Math.floor(i / 6) % 6), level(i % 6)];
  }
  const g = 8 + (n - 232) * 10;
  return [g, g, g];
}

function byte(v) {
  const n = Number.parseInt(v, 10);
  return Number.isFinite(n) ? Math.max(0, Math.min(255, n)) : 0;
}

/** Apply one SGR parameter list to the state; returns the new state. */
function applySgr(state, paramText) {
  const params = paramText === "" ? [0] : paramText.split(/[;:]/).map((p) => (p === "" ? 0 : Number(p)));
  const s = { ...state };
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p === 0) Object.assign(s, { bold: false, dim: false, italic: false, underline: false, fg: null, bg: null });
    else if (p === 1) s.bold = true;
    else if (p === 2) s.dim = true;
    else if (p === 3) s.italic = true;
    else if (p === 4) s.underline = true;
    else if (p === 22) s.bold = s.dim = false;
    else if (p === 23) s.italic = false;
    else if (p === 24) s.underline = false;
    else if (p >= 30 && p <= 37) s.fg = { idx: p - 30 };
    else if (p >= 90 && p <= 97) s.fg = { idx: p - 90 + 8 };
    else if (p === 39) s.fg = null;
    else if (p >= 40 && p <= 47) s.bg = { idx: p - 40 };
    else if (p >= 100 && p <= 107) s.bg = { idx: p - 100 + 8 };
    else if (p === 49) s.bg = null;
    else if (p === 38 || p === 48) {
      const key = p === 38 ? "fg" : "bg";
      if (params[i + 1] === 5) {
        const n = byte(params[i + 2]);
        s[key] = n < 16 ? { idx: n } : { rgb: cubeColour(n) };
        i += 2;
      } else if (params[i + 1] === 2) {
        s[key] = { rgb: [byte(params[i + 2]), byte(params[i + 3]), byte(params[i + 4])] };
        i += 4;
      }
    }
  }
  return s;
}

const PLAIN = { bold: false, dim: false, italic: false, underline: false, fg: null, bg: null };

function isPlain(s) {
  return !s.bold && !s.dim && !s.italic && !s.underline && !s.fg && !s.bg;
}

function styledNode(text, s) {
  const d = doc();
  if (isPlain(s)) return d.createTextNode(text);
  const span = d.createElement("span");
  const cls = [];
  if (s.bold) cls.push("pi-ansi-bold");
  if (s.dim) cls.push("pi-ansi-dim");
  if (s.italic) cls.push("pi-ansi-italic");
  if (s.underline) cls.push("pi-ansi-underline");
  if (s.fg?.idx !== undefined) cls.push(`pi-ansi-fg-${s.fg.idx}`);
  if (s.bg?.idx !== undefined) cls.push(`pi-ansi-bg-${s.bg.idx}`);
  if (cls.length) span.className = cls.join(" ");
  // Integers only (clamped 0–255): nothing from the text reaches the style.
  if (s.fg?.rgb) span.style.color = `rgb(${s.fg.rgb.join(", ")})`;
  if (s.bg?.rgb) span.style.backgroundColor = `rgb(${s.bg.rgb.join(", ")})`;
  span.textContent = text;
  return span;
}

/** Convert terminal output with ANSI colour codes into a DocumentFragment of text nodes and spans. */
export function ansiToFragment(text) {
  const frag = doc().createDocumentFragment();
  const src = resolveCarriageReturns(String(text ?? ""));
  let state = PLAIN;
  let last = 0;
  const emit = (chunk) => {
    const clean = chunk.replace(CONTROL, "");
    if (clean) frag.appendChild(styledNode(clean, state));
  };
  ESCAPES.lastIndex = 0;
  for (let m = ESCAPES.exec(src); m; m = ESCAPES.exec(src)) {
    emit(src.slice(last, m.index));
    last = ESCAPES.lastIndex;
    const seq = m[0];
    if (seq.startsWith("\x1b[") && seq.endsWith("m") && /^\x1b\[[0-9;:]*m$/.test(seq)) {
      state = applySgr(state, seq.slice(2, -1));
    }
  }
  emit(src.slice(last));
  return frag;
}
