// The notebook's tools in the transcript: a python call and its result drawn as a cell the agent ran (its code beside
// [agent]:, its output, pictures and error under it, with a notebookCell's look), a new_cell call as the unrun cell
// it put below; other tools keep the generic cards.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { PNG_1PX } from "./fixtures.js";
import { AGENT_PROMPT, splitFailure } from "../src/renderers/agentCell.js";
import { registerToolView, toolView } from "../src/tool_views.js";
import * as transcript from "../src/transcript.js";

const TRACEBACK =
  "-".repeat(75) +
  "\nKeyError                                  Traceback (most recent call last)\nFile <agent python 2>:2\n" +
  "      1 d = {}\n----> 2 d['b']\nKeyError: 'b'";

const STOPPED = "Interrupted: the user pressed the stop button; the run stops here.";

function call(id, name, args) {
  return {
    role: "assistant",
    content: [{ type: "toolCall", id, name, arguments: args }],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    stopReason: "toolUse",
    timestamp: 1,
  };
}

function result(id, name, content, isError = false, details = undefined) {
  return { role: "toolResult", toolCallId: id, toolName: name, content, isError, details, timestamp: 2 };
}

async function show(messages) {
  const state = { messages, visibility: [], streaming: null, show_hidden: false, title: "", renderers: {} };
  const m = mount(transcript, state);
  await ready(m.el);
  return messagesOf(m.el);
}

describe("python tool: a cell the agent ran", () => {
  test("the call is the cell's input, the result its output and picture, linked both ways", async () => {
    const code = "print(df.shape)\nplt.plot(df.price)";
    const [asked, answered] = await show([
      call("c1", "python", { code }),
      result("c1", "python", [
        { type: "text", text: "(4, 2)\n[<matplotlib.lines.Line2D at 0x7f>]\n\n[1 image attached]" },
        { type: "image", data: PNG_1PX, mimeType: "image/png" },
      ]),
    ]);
    const input = asked.querySelector(".pi-agentcell-call .pi-nbcell-in");
    assert.equal(input.querySelector(".pi-nbcell-prompt").textContent, AGENT_PROMPT);
    assert.equal(input.querySelector("pre.pi-nbcell-source").textContent, code);
    assert.equal(asked.querySelector(".pi-args-box"), null, "no JSON arguments box: the code is the cell");
    assert.equal(asked.querySelector(".pi-tool-name").textContent, "python");

    const out = answered.querySelector(".pi-agentcell-result .pi-nbcell-out");
    assert.match(out.querySelector("pre.pi-nbcell-stream").textContent, /^\(4, 2\)\n\[<matplotlib/);
    const img = out.querySelector(".pi-nbcell-images img.pi-nbcell-img");
    assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG_1PX}`);
    assert.equal(answered.querySelector(".pi-nbcell-error"), null);
    assert.ok(!answered.classList.contains("pi-is-error"));
    // the links between call and result still work
    assert.equal(asked.querySelector('a.pi-link[data-link="result"]').dataset.linkState, "linked");
    assert.equal(answered.querySelector('a.pi-link[data-link="call"]').dataset.linkState, "linked");
  });

  test("a traceback: the output before it, the error's line, the traceback folded; the card failed", async () => {
    const [, failed] = await show([
      call("c2", "python", { code: "print('before')\nd = {}\nd['b']" }),
      result("c2", "python", [{ type: "text", text: `before\n\n${TRACEBACK}` }], true),
    ]);
    assert.ok(failed.classList.contains("pi-is-error"));
    assert.equal(failed.querySelector('.pi-msg-head [data-badge="error"]').textContent, "error");
    assert.equal(failed.querySelector("pre.pi-nbcell-stream").textContent, "before");
    const error = failed.querySelector(".pi-nbcell-error");
    assert.equal(error.querySelector(".pi-nbcell-ename").textContent, "KeyError: 'b'");
    const details = error.querySelector("details.pi-nbcell-traceback");
    assert.equal(details.open, false);
    assert.match(details.querySelector("pre").textContent, /----> 2 d\['b'\]/);
  });

  test("a timeout or the stop button: the output so far, then the reason as the error's line", async () => {
    const [, stopped] = await show([
      call("c3", "python", { code: "import time\nprint('started')\ntime.sleep(60)", timeout: 5 }),
      result("c3", "python", [{ type: "text", text: `started\n\n${STOPPED}` }], true),
    ]);
    assert.match(stopped.querySelector(".pi-card-head").textContent, /failed in the kernel/);
    assert.equal(stopped.querySelector("pre.pi-nbcell-stream").textContent, "started");
    assert.equal(stopped.querySelector(".pi-nbcell-ename-name").textContent, "Interrupted");
    assert.equal(stopped.querySelector(".pi-nbcell-traceback"), null);
    assert.deepEqual(splitFailure("Timed out after 5 seconds: the code was interrupted"), {
      output: "",
      name: "Timed out after 5 seconds: the code was interrupted",
      value: "",
      traceback: "",
    });
  });

  test("a cut output says so and names the file that holds all of it", async () => {
    const [, cut] = await show([
      call("c5", "python", { code: "for i in range(10**6): print(i)" }),
      result("c5", "python", [{ type: "text", text: "999999\n\n[Output truncated: this is its end.]" }], false, {
        fullOutputPath: "/tmp/pi-bash-0123.log",
      }),
    ]);
    assert.equal(cut.querySelector(".pi-nbcell-status .pi-badge").textContent, "truncated");
    assert.equal(cut.querySelector(".pi-fullpath code").textContent, "/tmp/pi-bash-0123.log");
  });

  test("no output says so; the code and output are text, never markup", async () => {
    const [asked, quiet] = await show([
      call("c4", "python", { code: "<img src=x onerror=alert(1)>" }),
      result("c4", "python", [{ type: "text", text: "(no output)" }]),
    ]);
    assert.equal(quiet.querySelector(".pi-nbcell-empty").textContent, "(no output)");
    assert.equal(asked.querySelector("img"), null);
    assert.equal(asked.querySelector("pre.pi-nbcell-source").textContent, "<img src=x onerror=alert(1)>");
  });
});

describe("new_cell and other tools", () => {
  test("new_cell: the cell put below, not run ([ ]:), Markdown marked as such", async () => {
    const [code, , markdown] = await show([
      call("n1", "new_cell", { source: "df = df[df.price >= 0]" }),
      result("n1", "new_cell", [{ type: "text", text: "A new cell is below the running cell, not run: a code cell." }]),
      call("n2", "new_cell", { source: "# Cleaning", kind: "markdown" }),
    ]);
    assert.equal(code.querySelector(".pi-nbcell-prompt").textContent, "[ ]:");
    assert.equal(code.querySelector("pre.pi-nbcell-source").textContent, "df = df[df.price >= 0]");
    assert.match(code.querySelector(".pi-card-head").textContent, /new cell below, not run/);
    assert.match(markdown.querySelector(".pi-card-head").textContent, /new Markdown cell below/);
  });

  test("vars and Pi's tools keep the generic cards; a view can be registered and removed", async () => {
    const [asked, answered] = await show([
      call("v1", "vars", {}),
      result("v1", "vars", [{ type: "text", text: "Variables (1):\nx: int = 1" }]),
    ]);
    assert.ok(asked.querySelector(".pi-args-box"));
    assert.equal(answered.querySelector(".pi-toolresult .pi-card-kind").textContent, "tool result");
    assert.equal(toolView("vars"), undefined);
    const mine = (m, el, x) => el.appendChild(x.h("p", { class: "mine" }, "custom"));
    const restore = registerToolView("vars", { result: mine });
    const [, custom] = await show([call("v2", "vars", {}), result("v2", "vars", [{ type: "text", text: "x" }])]);
    assert.equal(custom.querySelector("p.mine").textContent, "custom");
    restore();
    assert.equal(toolView("vars"), undefined);
    assert.throws(() => registerToolView("", {}), TypeError);
    assert.throws(() => registerToolView("x", { call: "no" }), TypeError);
  });
});
