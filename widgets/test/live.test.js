// Live deltas from the kernel (live.js): the edits of json_patch, the transcript's and the inspector's
// deltas applied to the model in `initialize`, and a delta that does not fit asking for the whole state.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { kernelSends, messagesOf, mount, ready } from "./setup.js";
import { session, usage } from "./fixtures.js";
import { applyPatch, PatchError, spliceList } from "../src/live.js";
import * as transcript from "../src/transcript.js";
import * as inspector from "../src/inspector.js";

describe("applyPatch", () => {
  test("append text, set, cut and delete; the input is left as it was and unchanged parts are shared", () => {
    const shared = { type: "thinking", thinking: "hmm" };
    const root = { role: "assistant", content: [shared, { type: "text", text: "Hel" }], usage: { input: 1 } };
    const out = applyPatch(root, [
      ["a", ["content", 1, "text"], "lo", 3],
      ["s", ["content", 2], { type: "text", text: "new block" }],
      ["s", ["usage", "output"], 5],
      ["d", ["usage", "input"]],
    ]);
    assert.deepEqual(out, {
      role: "assistant",
      content: [shared, { type: "text", text: "Hello" }, { type: "text", text: "new block" }],
      usage: { output: 5 },
    });
    assert.equal(out.content[0], shared);
    assert.equal(root.content[1].text, "Hel");
    assert.equal(root.content.length, 2);
    assert.deepEqual(applyPatch([1, 2, 3], [["t", [], 1]]), [1]);
    assert.deepEqual(applyPatch("ab", [["a", [], "c", 2]]), "abc");
    assert.equal(applyPatch({ a: 1 }, [["s", [], null]]), null);
  });

  test("an edit that does not fit throws PatchError", () => {
    assert.throws(() => applyPatch({ t: "abc" }, [["a", ["t"], "d", 2]]), PatchError); // length differs
    assert.throws(() => applyPatch({ l: [1] }, [["s", ["l", 3], 0]]), PatchError); // past the end
    assert.throws(() => applyPatch({}, [["a", ["x", "y"], "z", 0]]), PatchError); // no such path
    assert.throws(() => applyPatch(null, [["s", ["k"], 1]]), PatchError);
    assert.throws(() => applyPatch({}, [["?", ["k"], 1]]), PatchError);
    assert.throws(() => spliceList([1, 2], 1, 3, []), PatchError);
    assert.deepEqual(spliceList([1, 2, 3], 1, 3, ["x"]), [1, "x"]);
  });
});

const partial = (text) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "faux",
  provider: "faux",
  model: "faux-1",
  usage: usage(0, 0),
  stopReason: "stop",
  timestamp: 1,
});

async function live(state = {}) {
  const m = mount(transcript, { messages: [], visibility: [], streaming: null, show_hidden: false, title: "", renderers: {}, ...state });
  await ready(m.el);
  return m;
}

describe("transcript deltas", () => {
  test("a streaming reply grows by the edits sent; finished messages are spliced in", async () => {
    const { el, model } = await live({ messages: [{ role: "user", content: "hi", timestamp: 0 }], visibility: ["both"] });
    kernelSends(model, { pi: "delta", ops: [{ op: "streaming", value: partial("Hel") }] });
    kernelSends(model, { pi: "delta", ops: [{ op: "streaming", patch: [["a", ["content", 0, "text"], "lo there", 3]] }] });
    await ready(el);
    assert.equal(model.get("streaming").content[0].text, "Hello there");
    assert.equal(el.querySelector(".pi-streaming-slot .pi-md p").textContent, "Hello there");
    const first = messagesOf(el)[0];
    kernelSends(model, {
      pi: "delta",
      ops: [
        { op: "messages", at: 1, len: 1, messages: [partial("Hello there!")], visibility: ["both"] },
        { op: "streaming", value: null },
      ],
    });
    await ready(el);
    assert.equal(model.get("streaming"), null);
    assert.deepEqual(model.get("visibility"), ["both", "both"]);
    assert.equal(messagesOf(el).length, 2);
    assert.equal(messagesOf(el)[0], first); // not drawn again
    assert.equal(messagesOf(el)[1].querySelector(".pi-md p").textContent, "Hello there!");
    assert.deepEqual(model.sent, []);
    assert.equal(model.saves, 0); // set on the model here, never sent back
  });

  test("a delta that does not fit asks for the whole state, skips deltas until it comes, then goes on", async () => {
    const { el, model } = await live();
    kernelSends(model, { pi: "delta", ops: [{ op: "streaming", patch: [["a", ["content", 0, "text"], "x", 10]] }] });
    assert.equal(model.sent.length, 1);
    assert.equal(model.sent[0].pi, "resync");
    kernelSends(model, { pi: "delta", ops: [{ op: "streaming", value: partial("skipped") }] });
    assert.equal(model.get("streaming"), null);
    kernelSends(model, { pi: "state", messages: [], visibility: [], streaming: partial("0123456789") });
    kernelSends(model, { pi: "delta", ops: [{ op: "streaming", patch: [["a", ["content", 0, "text"], "!", 10]] }] });
    await ready(el);
    assert.equal(el.querySelector(".pi-streaming-slot .pi-md p").textContent, "0123456789!");
    assert.equal(model.sent.length, 1);
  });

  test("a messages splice of the wrong length asks for the whole state; unrelated messages are ignored", async () => {
    const { model } = await live({ messages: session(), visibility: [] });
    kernelSends(model, { pi: "delta", ops: [{ op: "messages", at: 2, len: 99, messages: [], visibility: [] }] });
    assert.equal(model.sent.at(-1).pi, "resync");
    assert.equal(model.get("messages").length, session().length);
    kernelSends(model, { kind: "anywidget-command", name: "x" });
    kernelSends(model, "not an object");
    assert.equal(model.sent.length, 1);
  });
});

describe("inspector deltas", () => {
  test("rows are appended without redrawing the others; request bodies are edited", () => {
    const row = (i) => ({ index: i, role: "user", status: "passed", reason: "", tokens: 1, agent: { role: "user", content: `m${i}` }, llm: [] });
    const { el, model } = mount(inspector, {
      rows: [row(0), row(1)],
      requests: { a: { messages: [{ role: "user", content: "m0" }] } },
      provider: "a",
      context_window: 100,
      total_tokens: 2,
      model_name: "m",
    });
    const [first, second] = el.querySelectorAll(".pi-insp-row");
    kernelSends(model, {
      pi: "delta",
      ops: [
        { op: "rows", at: 2, len: 2, rows: [row(2)] },
        { op: "requests", patch: [["s", ["a", "messages", 1], { role: "user", content: "m2" }]] },
      ],
    });
    const rows = el.querySelectorAll(".pi-insp-row");
    assert.equal(rows.length, 3);
    assert.equal(rows[0], first);
    assert.equal(rows[1], second);
    assert.equal(el.querySelector(".pi-insp-count").textContent, "3 of 3 rows");
    assert.deepEqual(JSON.parse(el.querySelector(".pi-request-json").textContent).messages.at(-1), { role: "user", content: "m2" });
    kernelSends(model, { pi: "delta", ops: [{ op: "rows", at: 0, len: 7, rows: [] }] });
    assert.equal(model.sent.at(-1).pi, "resync");
  });

  test("an edit of a body the pane does not show leaves the pane as drawn; an edit of the shown one redraws it", () => {
    const body = (text) => ({ messages: [{ role: "user", content: text }] });
    const { el, model } = mount(inspector, {
      rows: [], requests: { a: body("shown"), b: body("other") }, provider: "a", context_window: 100, total_tokens: 0,
      model_name: "m",
    });
    const pre = el.querySelector(".pi-request-json");
    const drawn = pre.firstChild;
    kernelSends(model, { pi: "delta", ops: [{ op: "requests", patch: [["s", ["b", "messages", 1], { role: "user", content: "x" }]] }] });
    assert.equal(pre.firstChild, drawn, "the shown body did not change: not laid out again");
    assert.equal(model.get("requests").b.messages.length, 2);
    kernelSends(model, { pi: "delta", ops: [{ op: "requests", patch: [["s", ["a", "messages", 1], { role: "user", content: "y" }]] }] });
    assert.notEqual(pre.firstChild, drawn);
    assert.deepEqual(JSON.parse(pre.textContent).messages.at(-1), { role: "user", content: "y" });
  });

  test("busy: the count says loading and the root is rendering until the kernel is done", () => {
    const { el, model } = mount(inspector, { rows: [], requests: {}, provider: "", context_window: 0, total_tokens: 0, model_name: "", busy: true });
    assert.equal(el.firstElementChild.dataset.state, "rendering");
    assert.match(el.querySelector(".pi-insp-count").textContent, /loading/);
    model.set("busy", false);
    assert.equal(el.firstElementChild.dataset.state, "ready");
    assert.equal(el.querySelector(".pi-insp-count").textContent, "0 of 0 rows");
  });
});
