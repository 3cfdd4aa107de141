// 2,000 messages: the first screenful is synchronous and small; the rest arrives in frame-sized chunks,
// and appending one message to a long transcript re-renders one message.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { session } from "./fixtures.js";
import * as transcript from "../src/transcript.js";
import * as inspector from "../src/inspector.js";

function many(n) {
  const base = session();
  return Array.from({ length: n }, (_, i) => {
    const m = structuredClone(base[i % base.length]);
    m.timestamp = i;
    if (m.role === "assistant") {
      m.content = m.content.map((b) => (b.type === "toolCall" ? { ...b, id: `call-${i}` } : b));
    }
    if (m.role === "toolResult") m.toolCallId = `call-${i - 1}`;
    if (m.role === "user" && typeof m.content === "string") m.content = `message ${i}: plain prose to read`;
    return m;
  });
}

describe("large transcripts", () => {
  test("2,000 messages render in chunks and stay responsive", async () => {
    const messages = many(2000);
    const t0 = performance.now();
    const { el, model } = mount(transcript, { messages, visibility: [], streaming: null, show_hidden: false, title: "big", renderers: {} });
    const firstChunk = performance.now() - t0;
    const first = messagesOf(el).length;
    assert.ok(first > 0 && first < 2000, `first chunk rendered ${first} messages synchronously`);
    assert.equal(el.firstElementChild.dataset.state, "rendering");
    // the main thread is released between chunks: count the frames we get while rendering
    let frames = 0;
    const count = () => {
      frames++;
      if (el.firstElementChild.dataset.state !== "ready") window.requestAnimationFrame(count);
    };
    window.requestAnimationFrame(count);
    await ready(el, 60000);
    const total = performance.now() - t0;
    assert.equal(messagesOf(el).length, 2000);
    assert.ok(frames >= 5, `yielded to ${frames} frames while rendering`);
    console.log(`# 2000 messages (jsdom): first chunk ${first} msgs in ${firstChunk.toFixed(0)} ms, all in ${total.toFixed(0)} ms over ${frames} frames`);
    assert.ok(firstChunk < 1000, `first chunk took ${firstChunk.toFixed(0)} ms`);
    assert.ok(total < 30000, `all took ${total.toFixed(0)} ms`);

    // links were resolved across chunks
    const linked = el.querySelectorAll('a.pi-link[data-link-state="linked"]').length;
    assert.ok(linked > 300, `${linked} tool links resolved`);

    // appending one message re-renders only that message
    const before = messagesOf(el);
    const t1 = performance.now();
    model.set("messages", [...messages, { role: "user", content: "one more", timestamp: 1 }]);
    await ready(el);
    const append = performance.now() - t1;
    const after = messagesOf(el);
    assert.equal(after.length, 2001);
    assert.equal(after[1999], before[1999]);
    console.log(`# append one to 2000: ${append.toFixed(0)} ms`);
    assert.ok(append < 1500, `append took ${append.toFixed(0)} ms`);
  });

  test("an inspector with 2,000 rows renders and filters quickly", () => {
    const messages = many(2000);
    const rows = messages.map((m, i) => ({ index: i, role: m.role, status: "passed", reason: "", tokens: 10, agent: m, llm: [m] }));
    const t0 = performance.now();
    const { el } = mount(inspector, { rows, requests: { a: { messages } }, provider: "a", context_window: 1e6, total_tokens: 2e4, model_name: "m" });
    const renderMs = performance.now() - t0;
    const search = el.querySelector("input.pi-search");
    const t1 = performance.now();
    search.value = "message 1988:";
    search.dispatchEvent(new window.Event("input"));
    const searchMs = performance.now() - t1;
    const visible = [...el.querySelectorAll(".pi-insp-row")].filter((r) => !r.hidden);
    assert.equal(visible.length, 1);
    console.log(`# inspector 2000 rows (jsdom): render ${renderMs.toFixed(0)} ms, first search ${searchMs.toFixed(0)} ms`);
    assert.ok(renderMs < 15000);
  });
});
