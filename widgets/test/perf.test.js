// 2,000 messages: a long transcript or inspector draws only the rows near the viewport (virtual scrolling), at
// once; appending one message draws one message; and the lists stay as tall as all their rows.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { many } from "./fixtures.js";
import * as transcript from "../src/transcript.js";
import * as inspector from "../src/inspector.js";
import { VIRTUAL_MIN } from "../src/virtual.js";

const spacers = (el) => [...el.querySelectorAll(".pi-vspacer")].map((s) => Number.parseFloat(s.style.height) || 0);

describe("large transcripts", () => {
  test("2,000 messages: the first screenful is drawn at once, the rest stands in spacers", async () => {
    const messages = many(2000);
    const t0 = performance.now();
    const { el, model } = mount(transcript, { messages, visibility: [], streaming: null, show_hidden: false, title: "big", renderers: {} });
    const firstMs = performance.now() - t0;
    const drawn = messagesOf(el);
    assert.ok(drawn.length > 5 && drawn.length < 100, `${drawn.length} messages drawn`);
    assert.deepEqual(
      drawn.map((m) => Number(m.dataset.index)),
      drawn.map((_m, i) => i),
    );
    const [top, bottom] = spacers(el);
    assert.equal(top, 0);
    assert.ok(bottom > 1900 * 40, `the bottom spacer stands for the other messages (${bottom} px)`);
    await ready(el);
    assert.equal(el.querySelector(".pi-count").textContent, "2,000 messages · 154 hidden");
    console.log(`# 2000 messages (jsdom): ${drawn.length} drawn in ${firstMs.toFixed(0)} ms`);
    assert.ok(firstMs < 2000, `first draw took ${firstMs.toFixed(0)} ms`);

    // appending one message draws nothing new at the top and keeps the drawn elements
    const before = messagesOf(el);
    const t1 = performance.now();
    model.set("messages", [...messages, { role: "user", content: "one more", timestamp: 1 }]);
    await ready(el);
    const appendMs = performance.now() - t1;
    assert.deepEqual(messagesOf(el), before);
    assert.equal(el.querySelector(".pi-count").dataset.total, "2001");
    console.log(`# append one to 2000: ${appendMs.toFixed(0)} ms`);
    assert.ok(appendMs < 1500, `append took ${appendMs.toFixed(0)} ms`);
  });

  test(`lists shorter than ${VIRTUAL_MIN} are drawn in full, longer ones virtually, switching both ways`, async () => {
    const short = many(VIRTUAL_MIN - 1);
    const { el, model } = mount(transcript, { messages: short, visibility: [], streaming: null, show_hidden: false, title: "", renderers: {} });
    await ready(el);
    assert.equal(messagesOf(el).length, VIRTUAL_MIN - 1);
    assert.equal(el.querySelectorAll(".pi-vspacer").length, 0);
    model.set("messages", many(VIRTUAL_MIN));
    await ready(el);
    assert.ok(messagesOf(el).length < VIRTUAL_MIN);
    assert.equal(el.querySelectorAll(".pi-vspacer").length, 2);
    model.set("messages", short.slice(0, 3));
    await ready(el);
    assert.equal(messagesOf(el).length, 3);
    assert.equal(el.querySelectorAll(".pi-vspacer").length, 0);
  });

  test("an inspector with 2,000 rows draws a screenful and filters over all rows", () => {
    const messages = many(2000);
    const rows = messages.map((m, i) => ({ index: i, role: m.role, status: "passed", reason: "", tokens: 10, agent: m, llm: [m] }));
    const t0 = performance.now();
    const { el } = mount(inspector, { rows, requests: { a: { messages } }, provider: "a", context_window: 1e6, total_tokens: 2e4, model_name: "m" });
    const renderMs = performance.now() - t0;
    const drawn = el.querySelectorAll(".pi-insp-row").length;
    assert.ok(drawn > 5 && drawn < 100, `${drawn} rows drawn`);
    assert.equal(el.querySelector(".pi-insp-count").textContent, "2,000 of 2,000 rows");
    const search = el.querySelector("input.pi-search");
    const t1 = performance.now();
    search.value = "message 1988:";
    search.dispatchEvent(new window.Event("input"));
    const searchMs = performance.now() - t1;
    const visible = [...el.querySelectorAll(".pi-insp-row")].filter((r) => !r.hidden);
    assert.equal(visible.length, 1);
    assert.equal(visible[0].dataset.index, "1988");
    assert.equal(el.querySelector(".pi-insp-count").textContent, "1 of 2,000 rows");
    console.log(`# inspector 2000 rows (jsdom): render ${renderMs.toFixed(0)} ms, first search ${searchMs.toFixed(0)} ms`);
    assert.ok(renderMs < 2000);
  });
});
