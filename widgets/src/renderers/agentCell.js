// The notebook's tools drawn as cells: a `python` call is a cell the agent ran — its code beside an `[agent]:`
// prompt in the call, what it printed, its pictures and its error under it in the result, with the look of a
// notebookCell (notebookCell.js) — and a `new_cell` call is the unrun cell it put below (`[ ]:`).
// Everything from the message goes into the DOM as text; images only from their base64 data (PNG and JPEG).
import { imageBlock } from "../image.js";
import { registerToolView } from "../tool_views.js";
import { CELL_IMAGE_TYPES } from "./notebookCell.js";

/** The prompt beside code the agent ran (Jupyter's is `[n]:`). */
export const AGENT_PROMPT = "[agent]:";
// IPython's traceback opens with a rule of 75 dashes: the output before it, the traceback from it.
const RULE = "-".repeat(75);

function text(value) {
  return typeof value === "string" ? value : "";
}

function row(x, kind, prompt, body) {
  return x.h(
    "div",
    { class: ["pi-nbcell-row", `pi-nbcell-${kind}`] },
    x.h("span", { class: "pi-nbcell-prompt", "aria-hidden": prompt ? null : "true" }, prompt),
    body,
  );
}

function head(x, kind, name, link, extra = null) {
  return x.h(
    "div",
    { class: "pi-card-head" },
    x.h("span", { class: "pi-card-kind" }, kind),
    x.h("code", { class: "pi-tool-name" }, name),
    extra,
    link,
  );
}

function args(block) {
  const a = block?.arguments;
  return a && typeof a === "object" && !Array.isArray(a) ? a : {};
}

/** A python call: the code as a cell's input, run by the agent. */
function pythonCall(block, x) {
  const id = String(block.id ?? "");
  const a = args(block);
  const limited = Number.isFinite(a.timeout) && a.timeout > 0;
  const timeout = limited ? x.h("span", { class: "pi-quiet" }, `timeout ${a.timeout} s`) : null;
  return x.h(
    "div",
    { class: "pi-toolcall pi-agentcell-call", id: x.callAnchor(id), dataset: { toolCallId: id, tool: "python" } },
    head(x, "ran in the kernel", "python", x.linkToResult(id), timeout),
    x.h(
      "div",
      { class: "pi-nbcell pi-agentcell" },
      row(x, "in", AGENT_PROMPT, x.output(text(a.code), { cls: "pi-output pi-nbcell-source" })),
    ),
  );
}

/** The error part of a failed python result: `{ output, name, value, traceback }` (IPython's traceback after its
 * rule of dashes; else the last paragraph: a timeout, the stop button, a SyntaxError). */
export function splitFailure(all) {
  const at = all.startsWith(RULE) ? 0 : all.indexOf(`\n${RULE}`);
  let output;
  let tail;
  if (at >= 0) {
    output = all.slice(0, at).replace(/\n+$/, "");
    tail = all.slice(at).replace(/^\n/, "");
  } else {
    const cut = all.lastIndexOf("\n\n");
    output = cut >= 0 ? all.slice(0, cut) : "";
    tail = cut >= 0 ? all.slice(cut + 2) : all;
  }
  const lines = tail.replace(/\n+$/, "").split("\n");
  const last = lines.at(-1) ?? "";
  const match = /^([A-Za-z_][\w.]*): ?(.*)$/s.exec(last);
  const isException = match && /(Error|Exception|Interrupt|Interrupted|Exit|Warning|Iteration)$/.test(match[1]);
  return {
    output,
    name: isException ? match[1] : last,
    value: isException ? match[2] : "",
    traceback: lines.length > 1 ? tail : "",
  };
}

function errorBox(x, failure) {
  const box = x.h(
    "div",
    { class: "pi-nbcell-error", role: "group", "aria-label": "error" },
    x.h(
      "div",
      { class: "pi-nbcell-ename" },
      x.h("span", { class: "pi-nbcell-ename-name" }, failure.name || "Error"),
      failure.value ? ": " : null,
      failure.value ? x.h("span", { class: "pi-nbcell-evalue" }, failure.value) : null,
    ),
  );
  if (failure.traceback) {
    const n = failure.traceback.split("\n").length;
    box.appendChild(
      x.h(
        "details",
        { class: "pi-nbcell-traceback" },
        x.h("summary", null, `traceback · ${x.fmtInt(n)} line${n === 1 ? "" : "s"}`),
        x.output(failure.traceback, { ansi: true, cls: "pi-output pi-nbcell-tb" }),
      ),
    );
  }
  return box;
}

/** A python result: the cell's outputs (text, pictures, the error), as a notebookCell draws them. */
function pythonResult(message, el, x) {
  const id = String(message.toolCallId ?? "");
  const isError = message.isError === true;
  const blocks = (Array.isArray(message.content) ? message.content : []).filter((b) => b && typeof b === "object");
  const all = blocks.filter((b) => b.type === "text").map((b) => text(b.text)).join("\n");
  const images = blocks.filter((b) => b.type === "image");
  const outputs = x.h("div", { class: "pi-nbcell-outputs" });
  const failure = isError ? splitFailure(all) : null;
  const shown = failure ? failure.output : all === "(no output)" ? "" : all;
  if (shown) outputs.appendChild(x.output(shown, { ansi: true, cls: "pi-output pi-nbcell-stream" }));
  if (images.length) {
    const pictures = images.map((b) => imageBlock(b, { types: CELL_IMAGE_TYPES, cls: "pi-nbcell-img" }));
    outputs.appendChild(x.h("div", { class: "pi-images pi-nbcell-images" }, pictures));
  }
  if (failure) outputs.appendChild(errorBox(x, failure));
  if (!shown && !images.length && !failure) {
    outputs.appendChild(x.h("div", { class: "pi-quiet pi-nbcell-empty" }, "(no output)"));
  }
  const path = text(message.details?.fullOutputPath);
  if (path) {
    outputs.appendChild(
      x.h(
        "div",
        { class: "pi-nbcell-status" },
        x.badge("truncated", "warn", "The output was cut; the tail is kept"),
        x.h("span", { class: "pi-fullpath" }, "full output: ", x.h("code", null, path)),
      ),
    );
  }
  el.appendChild(
    x.h(
      "div",
      {
        class: ["pi-toolresult", "pi-agentcell-result", isError && "pi-toolresult-error"],
        id: x.resultAnchor(id),
        dataset: { toolCallId: id, tool: "python" },
      },
      head(x, isError ? "failed in the kernel" : "output", "python", x.linkToCall(id)),
      x.h("div", { class: ["pi-nbcell", "pi-agentcell", isError && "pi-nbcell-failed"] }, row(x, "out", "", outputs)),
    ),
  );
  return true;
}

/** A new_cell call: the cell put below for the user, not run. */
function newCellCall(block, x) {
  const id = String(block.id ?? "");
  const a = args(block);
  const markdown = a.kind === "markdown";
  return x.h(
    "div",
    { class: "pi-toolcall pi-agentcell-call", id: x.callAnchor(id), dataset: { toolCallId: id, tool: "new_cell" } },
    head(x, markdown ? "new Markdown cell below, not run" : "new cell below, not run", "new_cell", x.linkToResult(id)),
    x.h(
      "div",
      { class: "pi-nbcell pi-agentcell" },
      row(x, "in", markdown ? "md" : "[ ]:", x.output(text(a.source), { cls: "pi-output pi-nbcell-source" })),
    ),
  );
}

registerToolView("python", { call: pythonCall, result: pythonResult });
registerToolView("new_cell", { call: newCellCall });
