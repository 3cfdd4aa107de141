// Content blocks (text / image) and long outputs, shared by the role renderers.
import { ansiToFragment } from "./ansi.js";
import { h, jsonBlock } from "./dom.js";
import { imageBlock } from "./image.js";
import { markdown } from "./markdown.js";
import { normaliseContent } from "./text.js";

export { contentText, normaliseContent } from "./text.js";
export { IMAGE_TYPES, imageBlock } from "./image.js";

/** Outputs longer than this many lines are cut to a head and a tail until the user asks for all. */
export const LONG_OUTPUT_LINES = 200;

/**
 * Render content blocks. `asMarkdown`: text blocks through the markdown renderer (user / custom / summaries);
 * otherwise as plain monospace output (tool results). Unknown block types show as JSON.
 */
export function contentBlocks(content, { asMarkdown = true } = {}) {
  const box = h("div", { class: "pi-content" });
  const images = [];
  for (const block of normaliseContent(content)) {
    if (block?.type === "text") {
      box.appendChild(asMarkdown ? markdown(block.text) : longOutput(block.text));
    } else if (block?.type === "image") {
      images.push(imageBlock(block));
    } else {
      box.appendChild(h("div", { class: "pi-block-unknown" }, h("span", { class: "pi-quiet" }, "content block"), jsonBlock(block)));
    }
  }
  if (images.length) box.appendChild(h("div", { class: "pi-images" }, images));
  return box;
}

function fillPre(pre, text, ansi) {
  if (ansi) pre.appendChild(ansiToFragment(text));
  else pre.appendChild(pre.ownerDocument.createTextNode(text));
}

/**
 * Monospace output that stays cheap when long: over LONG_OUTPUT_LINES lines only the first and last
 * lines are rendered, with a button in between to show the rest. `ansi`: interpret colour codes.
 */
export function longOutput(text, { ansi = false, cls = "pi-output" } = {}) {
  const src = String(text ?? "");
  const pre = h("pre", { class: cls });
  const lines = src.split("\n");
  if (lines.length <= LONG_OUTPUT_LINES) {
    fillPre(pre, src, ansi);
    return pre;
  }
  const keep = LONG_OUTPUT_LINES / 2;
  const hidden = lines.length - 2 * keep;
  pre.dataset.truncatedView = "true";
  fillPre(pre, `${lines.slice(0, keep).join("\n")}\n`, ansi);
  const more = h(
    "button",
    { type: "button", class: "pi-show-more", title: "Render the whole output" },
    `… ${hidden.toLocaleString("en-US")} more lines — show all ${lines.length.toLocaleString("en-US")}`,
  );
  more.addEventListener("click", (ev) => {
    ev.stopPropagation();
    pre.textContent = "";
    delete pre.dataset.truncatedView;
    fillPre(pre, src, ansi);
  });
  pre.appendChild(more);
  fillPre(pre, `\n${lines.slice(-keep).join("\n")}`, ansi);
  return pre;
}
