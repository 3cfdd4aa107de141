// The approval prompt (pi_notebook/notebook/approval_widget.py): what a tool call would do — the command, the
// code, or a unified diff, coloured by line — and Approve, Deny, "Always this session". Everything from the model
// or the file is put in the page as text (dom.js), never as HTML. The page tells the kernel it drew the prompt
// (a ping: a page is there to answer) and what was clicked, with custom messages; it never writes the model.
import { h } from "./dom.js";

/** The CSS class of one line of a unified diff, by its first characters. */
export function diffLineClass(line) {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return "pi-approval-file";
  if (line.startsWith("@@")) return "pi-approval-hunk";
  if (line.startsWith("+")) return "pi-approval-add";
  if (line.startsWith("-")) return "pi-approval-del";
  if (line.startsWith("\\")) return "pi-approval-meta";
  return "pi-approval-ctx";
}

function body(request) {
  const text = typeof request.text === "string" ? request.text : "";
  if (request.kind !== "diff") {
    return h("pre", { class: ["pi-approval-text", `pi-approval-${request.kind || "arguments"}`] }, text);
  }
  if (!text) return h("pre", { class: "pi-approval-text pi-approval-diff" }, "(no change)");
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return h(
    "pre",
    { class: "pi-approval-text pi-approval-diff" },
    lines.map((line) => h("span", { class: diffLineClass(line) }, line + "\n")),
  );
}

const STATES = {
  approved: "Approved.",
  denied: "Denied.",
  stopped: "Stopped while waiting.",
  unanswered: "Not asked: nothing answered in time.",
};

function render({ model, el }) {
  const request = model.get("request") || {};
  const reason = h("input", {
    type: "text",
    class: "pi-approval-reason",
    placeholder: "Why not? (optional: the model reads it)",
    "aria-label": "reason for denying",
  });
  const status = h("span", { class: "pi-approval-status", role: "status" });
  const tool = String(request.tool || "this tool");
  const buttons = [
    ["Approve", "approve", `Run this ${tool} call`],
    ["Deny", "deny", "Do not run it: the model is told you denied it (and why, if you say)"],
    ["Always this session", "always", `Run this and every later ${tool} call until the kernel restarts`],
  ].map(([label, verdict, title]) =>
    h("button", { type: "button", class: "pi-approval-button", dataset: { verdict }, title }, label),
  );
  const root = h(
    "div",
    { class: "pi-approval", dataset: { kind: request.kind || "arguments", state: "asking" } },
    h("div", { class: "pi-approval-title" }, String(request.title || "The agent wants to make a call.")),
    request.note ? h("div", { class: "pi-approval-note" }, String(request.note)) : null,
    body(request),
    h("div", { class: "pi-approval-actions" }, buttons, reason, status),
  );

  const show = (state, text) => {
    root.dataset.state = state;
    for (const b of buttons) b.disabled = state !== "asking";
    reason.disabled = state !== "asking";
    status.textContent = text || "";
  };
  const onClick = (event) => {
    const verdict = event.currentTarget.dataset.verdict;
    const said = verdict === "deny" ? reason.value.trim() : "";
    show(verdict === "deny" ? "denied" : "approved", verdict === "deny" ? "Denied." : "Approved.");
    model.send({ pi: "decide", verdict, reason: said });
  };
  for (const b of buttons) b.addEventListener("click", onClick);
  const onState = () => {
    const state = model.get("state");
    if (state && state !== "asking") show(state, STATES[state] || "");
  };
  model.on("change:state", onState);
  onState();
  el.replaceChildren(root);
  if (root.dataset.state === "asking") model.send({ pi: "ping" }); // a page is here to answer
  return () => {
    model.off("change:state", onState);
    for (const b of buttons) b.removeEventListener("click", onClick);
  };
}

export default { render };
