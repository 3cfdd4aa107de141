// The approval prompt (approval.js) as a user sees it: what the call would do, as text (a diff coloured by line),
// three buttons whose clicks reach the kernel, and a prompt that stops once answered. Scripts are enabled in this
// jsdom window: a payload drawn as markup would run and set the canary.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mount, win } from "./setup.js";
import * as approval from "../src/approval.js";

const CANARY = "window.__piApprovalPwned=1";
const PAYLOADS = [
  `<img src=x onerror="${CANARY}">`,
  `<script>${CANARY}</script>`,
  `<svg onload="${CANARY}"></svg>`,
  `<a href="javascript:${CANARY}">link</a>`,
];

function prompt(request, state = "asking") {
  return mount(approval, { request, state });
}

const command = { tool: "bash", kind: "command", text: "rm -rf build", title: "The agent wants to run this command (bash)." };
const diff = [
  "--- a/notes.txt",
  "+++ b/notes.txt",
  "@@ -1,3 +1,3 @@",
  " apples: 3",
  "-pears: 5",
  "+pears: 6",
  " plums: 7",
  "\\ No newline at end of file",
].join("\n");

describe("approval prompt", () => {
  test("shows the command and says a page is here to answer", () => {
    const { root, model } = prompt(command);
    assert.equal(root.querySelector(".pi-approval-title").textContent, "The agent wants to run this command (bash).");
    assert.equal(root.querySelector("pre.pi-approval-command").textContent, "rm -rf build");
    assert.deepEqual(
      [...root.querySelectorAll("button")].map((b) => b.textContent),
      ["Approve", "Deny", "Always this session"],
    );
    assert.deepEqual(model.sent, [{ pi: "ping" }]);
  });

  test("colours a diff by line, and every line is still text", () => {
    const { root } = prompt({ tool: "edit", kind: "diff", text: diff + "\n", path: "notes.txt", note: "" });
    const lines = [...root.querySelectorAll("pre.pi-approval-diff > span")];
    assert.deepEqual(
      lines.map((l) => [l.className, l.textContent.trimEnd()]),
      [
        ["pi-approval-file", "--- a/notes.txt"],
        ["pi-approval-file", "+++ b/notes.txt"],
        ["pi-approval-hunk", "@@ -1,3 +1,3 @@"],
        ["pi-approval-ctx", " apples: 3"],
        ["pi-approval-del", "-pears: 5"],
        ["pi-approval-add", "+pears: 6"],
        ["pi-approval-ctx", " plums: 7"],
        ["pi-approval-meta", "\\ No newline at end of file"],
      ],
    );
    assert.equal(root.querySelector("pre.pi-approval-diff").textContent, diff + "\n");
  });

  test("a note says what the diff does not (the edit would fail)", () => {
    const note = "the text to replace is not in notes.txt: the edit would fail";
    const { root } = prompt({ tool: "edit", kind: "diff", text: diff, path: "notes.txt", note });
    assert.equal(root.querySelector(".pi-approval-note").textContent, note);
  });

  test("Approve, Deny with a reason and Always this session reach the kernel, once", () => {
    for (const [label, expected] of [
      ["Approve", { pi: "decide", verdict: "approve", reason: "" }],
      ["Deny", { pi: "decide", verdict: "deny", reason: "not on main" }],
      ["Always this session", { pi: "decide", verdict: "always", reason: "" }],
    ]) {
      const { root, model } = prompt(command);
      root.querySelector(".pi-approval-reason").value = "  not on main ";
      const button = [...root.querySelectorAll("button")].find((b) => b.textContent === label);
      button.click();
      button.click(); // a second click does nothing: the buttons are off
      assert.deepEqual(model.sent, [{ pi: "ping" }, expected]);
      assert.ok([...root.querySelectorAll("button")].every((b) => b.disabled));
      assert.equal(root.dataset.state, label === "Deny" ? "denied" : "approved");
    }
  });

  test("the kernel ending the question (stopped, no page in time) turns the buttons off", () => {
    const { root, model } = prompt(command);
    model.set("state", "stopped");
    assert.ok([...root.querySelectorAll("button")].every((b) => b.disabled));
    assert.equal(root.querySelector(".pi-approval-status").textContent, "Stopped while waiting.");
    const late = prompt(command, "approved");
    assert.deepEqual(late.model.sent, []); // drawn after the answer: nothing to say
    assert.ok([...late.root.querySelectorAll("button")].every((b) => b.disabled));
  });

  test("a command, code, path, note or diff holding markup is drawn as text", () => {
    win.__piApprovalPwned = 0;
    for (const payload of PAYLOADS) {
      for (const kind of ["command", "code", "diff", "arguments"]) {
        const { root, el } = prompt({
          tool: payload, kind, text: `+${payload}\n-${payload}\n${payload}`, path: payload, note: payload,
          title: payload,
        });
        assert.ok(root.textContent.includes(payload));
        assert.equal(el.querySelectorAll("img, script, svg, a, iframe").length, 0);
        assert.ok([...root.querySelectorAll("*")].every((node) => ![...node.attributes].some((a) => /^on/i.test(a.name))));
      }
    }
    assert.equal(win.__piApprovalPwned, 0);
  });

  test("cleanup removes the view's listeners", () => {
    const { model, cleanup } = prompt(command);
    assert.equal(model.viewListeners(), 1);
    cleanup();
    assert.equal(model.viewListeners(), 0);
  });
});
