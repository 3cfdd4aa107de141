// notebookCell: a code cell the user ran, drawn as Jupyter draws one — `[n]:` beside the source, then what it
// printed, the pictures it drew and its error (the traceback folded), with a line for what was cut or left out.
// The output and the traceback fold when long (x.output) and scroll inside a bounded box: a cell that printed
// 10,000 lines stays a card of the usual size. Images are drawn from their base64 data only (PNG and JPEG, the
// types a cell keeps); the message's text is put in the DOM as text.
import { imageBlock } from "../image.js";

/** The image types a notebook cell keeps (pi_notebook/notebook/cell_message.py); others are named, not drawn. */
export const CELL_IMAGE_TYPES = new Set(["image/png", "image/jpeg"]);
const NAME_IN_BADGE = 40; // characters of an exception's name in the header badge

function text(value) {
  return typeof value === "string" ? value : "";
}

function clip(value, max) {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/** Jupyter's prompt beside a cell: `[5]:`, or `[ ]:` for a cell without an execution count. */
export function promptText(count) {
  return `[${Number.isSafeInteger(count) ? count : " "}]:`;
}

function row(x, kind, prompt, body) {
  return x.h(
    "div",
    { class: ["pi-nbcell-row", `pi-nbcell-${kind}`] },
    x.h("span", { class: "pi-nbcell-prompt", "aria-hidden": prompt ? null : "true" }, prompt),
    body,
  );
}

function errorBox(x, error) {
  const name = text(error.name) || "Error";
  const value = text(error.value);
  const traceback = text(error.traceback).replace(/\n+$/, "");
  const box = x.h(
    "div",
    { class: "pi-nbcell-error", role: "group", "aria-label": "error" },
    x.h(
      "div",
      { class: "pi-nbcell-ename" },
      x.h("span", { class: "pi-nbcell-ename-name" }, name),
      value ? ": " : null,
      value ? x.h("span", { class: "pi-nbcell-evalue" }, value) : null,
    ),
  );
  if (traceback) {
    const lines = traceback.split("\n").length;
    box.appendChild(
      x.h(
        "details",
        { class: "pi-nbcell-traceback" },
        x.h("summary", null, `traceback · ${x.fmtInt(lines)} line${lines === 1 ? "" : "s"}`),
        x.output(traceback, { ansi: true, cls: "pi-output pi-nbcell-tb" }),
      ),
    );
  }
  return box;
}

function notes(x, message) {
  const status = x.h("div", { class: "pi-nbcell-status" });
  if (message.cancelled === true) {
    status.appendChild(x.badge("cancelled", "warn", "The stop button interrupted the cell"));
  }
  if (message.truncated === true) {
    status.appendChild(x.badge("truncated", "warn", "The output was cut; the tail is kept"));
    if (text(message.fullOutputPath)) {
      status.appendChild(
        x.h("span", { class: "pi-fullpath" }, "full output: ", x.h("code", null, text(message.fullOutputPath))),
      );
    }
  }
  if (message.excludeFromContext === true && x.visibility !== "ui" && x.visibility !== "none") {
    // the transcript badges a message its visibility says is not sent; this one says so whatever that says
    status.appendChild(x.badge("not sent to the LLM", "ui", "A private cell (%agent_private): shown and stored, never sent"));
  }
  const omitted = Array.isArray(message.omitted) ? message.omitted.map(text).filter(Boolean) : [];
  const list = omitted.length
    ? x.h("ul", { class: "pi-nbcell-omitted", "aria-label": "left out" }, omitted.map((line) => x.h("li", null, line)))
    : null;
  return [status.childNodes.length ? status : null, list];
}

export default function renderNotebookCell(message, el, x) {
  const count = message.executionCount;
  const error = message.error && typeof message.error === "object" && !Array.isArray(message.error) ? message.error : null;
  const cell = x.h("div", {
    class: ["pi-nbcell", error && "pi-nbcell-failed"],
    dataset: { executionCount: Number.isSafeInteger(count) ? String(count) : "" },
  });
  cell.appendChild(row(x, "in", promptText(count), x.output(text(message.source), { cls: "pi-output pi-nbcell-source" })));

  const outputs = x.h("div", { class: "pi-nbcell-outputs" });
  const output = text(message.output);
  if (output) outputs.appendChild(x.output(output, { ansi: true, cls: "pi-output pi-nbcell-stream" }));
  const images = (Array.isArray(message.images) ? message.images : []).filter((b) => b && typeof b === "object");
  if (images.length) {
    const pictures = images.map((b) => imageBlock(b, { types: CELL_IMAGE_TYPES, cls: "pi-nbcell-img" }));
    outputs.appendChild(x.h("div", { class: "pi-images pi-nbcell-images" }, pictures));
  }
  if (error) {
    outputs.appendChild(errorBox(x, error));
    x.article.classList.add("pi-is-error");
    const name = text(error.name) || "error";
    x.header.appendChild(x.badge(clip(name, NAME_IN_BADGE), "error", `The cell raised ${clip(name, 200)}`));
  }
  if (!output && !images.length && !error) {
    outputs.appendChild(x.h("div", { class: "pi-quiet pi-nbcell-empty" }, "(no output)"));
  }
  outputs.append(...notes(x, message).filter(Boolean));
  cell.appendChild(row(x, "out", "", outputs));
  if (message.excludeFromContext === true) x.article.classList.add("pi-excluded");
  el.appendChild(cell);
}
