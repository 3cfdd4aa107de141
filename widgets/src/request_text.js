// The request pane's text: a request body as text (long ones in blocks laid out only on screen), with an optional
// mark, or a preview's body with its changed lines marked against the body it would replace (what-if).
import { diffLines, unified } from "./diff.js";
import { doc, h } from "./dom.js";

const CHUNKED_TEXT = 20000; // characters: a longer request body is laid out in chunks, those on screen only
const CHUNK_LINES = 200;

/**
 * Put `text` in `pre`, with an optional mark over [at, at + length). A long text goes in blocks of CHUNK_LINES
 * lines that the browser lays out only when on screen (content-visibility): a request body of 2,000 messages
 * would take half a second to lay out at each refresh otherwise. The text (textContent) is the same.
 */
export function fillText(pre, text, mark = null) {
  pre.textContent = "";
  const piece = (start, end) => {
    if (!mark || end <= mark.at || start >= mark.at + mark.length) return [text.slice(start, end)];
    const from = Math.max(start, mark.at);
    const to = Math.min(end, mark.at + mark.length);
    const el = h("mark", { class: "pi-request-mark" }, text.slice(from, to));
    mark.el ??= el;
    return [text.slice(start, from), el, text.slice(to, end)];
  };
  if (text.length < CHUNKED_TEXT) {
    pre.append(...piece(0, text.length));
    return;
  }
  const frag = doc().createDocumentFragment();
  let start = 0;
  while (start < text.length) {
    let end = start;
    let lines = 0;
    while (lines < CHUNK_LINES && end < text.length) {
      const nl = text.indexOf("\n", end);
      end = nl < 0 ? text.length : nl + 1;
      lines++;
    }
    const chunk = h("span", { class: "pi-text-chunk" }, ...piece(start, end));
    chunk.style.containIntrinsicSize = `auto ${(lines * 1.45).toFixed(1)}em`;
    frag.appendChild(chunk);
    start = end;
  }
  pre.appendChild(frag);
}

const SAME_CONTEXT = 3; // unchanged lines shown around a change in a diffed pane; the rest folds

/**
 * Put `after` in `pre` with the lines that differ from `before` marked: removed lines (struck, `del.pi-diff-del`),
 * added lines (`ins.pi-diff-add`), both with `pi-diff-change` when the hunk edited lines. Long unchanged runs fold
 * into a `button.pi-diff-fold` that shows them. Returns {added, removed, changed} line counts.
 */
export function fillDiff(pre, before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  const lines = unified(diffLines(a, b), a, b);
  pre.textContent = "";
  const frag = doc().createDocumentFragment();
  const stats = { added: 0, removed: 0, changed: 0 };
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== "same") {
      const { kind, changed, line } = lines[i++];
      if (changed) stats.changed++;
      else if (kind === "add") stats.added++;
      else stats.removed++;
      const cls = ["pi-diff-line", `pi-diff-${kind}`, changed && "pi-diff-change"];
      frag.appendChild(h(kind === "add" ? "ins" : "del", { class: cls }, `${line}\n`));
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end].kind === "same") end++;
    const text = (from, to) => lines.slice(from, to).map((l) => `${l.line}\n`).join("");
    const head = i === 0 ? 0 : SAME_CONTEXT;
    const tail = end === lines.length ? 0 : SAME_CONTEXT;
    if (end - i > head + tail + 2) {
      frag.append(text(i, i + head));
      const hidden = text(i + head, end - tail);
      const fold = h("button", { type: "button", class: "pi-diff-fold" }, `⋯ ${end - i - head - tail} unchanged lines`);
      fold.addEventListener("click", (ev) => {
        ev.stopPropagation();
        fold.replaceWith(hidden);
      });
      frag.append(fold, text(end - tail, end));
    } else frag.append(text(i, end));
    i = end;
  }
  pre.appendChild(frag);
  return stats;
}
