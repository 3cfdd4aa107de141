// Long lists draw only what is near the viewport (virtual.js). jsdom has no layout: the list's position is
// stubbed to scroll, and heights are the estimates (72 px, 0 for a hidden message).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { frame, kernelSends, messagesOf, mount, ready } from "./setup.js";
import { many, usage } from "./fixtures.js";
import * as transcript from "../src/transcript.js";
import * as inspector from "../src/inspector.js";

const indices = (els) => els.map((e) => Number(e.dataset.index));

/** Pretend the page scrolled `y` px into the list. */
async function scrollTo(list, y) {
  list.getBoundingClientRect = () => ({ top: -y, bottom: -y + 1e6, left: 0, right: 800, width: 800, height: 1e6 });
  document.dispatchEvent(new window.Event("scroll"));
  await frame();
  await frame();
}

function show(messages, extra = {}) {
  return mount(transcript, { messages, visibility: [], streaming: null, show_hidden: false, title: "", renderers: {}, ...extra });
}

describe("virtual transcript", () => {
  test("scrolling draws the messages under the viewport, contiguous, with spacers for the rest", async () => {
    const messages = many(2000).map((m, i) => ({ role: "user", content: `message ${i}`, timestamp: i }));
    const { el } = show(messages);
    await ready(el);
    const list = el.querySelector(".pi-list");
    await scrollTo(list, 72 * 1000);
    const drawn = indices(messagesOf(el));
    assert.ok(drawn.includes(1000) && drawn.includes(1010), `drawn: ${drawn[0]}…${drawn.at(-1)}`);
    assert.ok(!drawn.includes(0) && !drawn.includes(1999));
    assert.deepEqual(drawn, drawn.map((_x, i) => drawn[0] + i));
    const [top, bottom] = [...list.querySelectorAll(".pi-vspacer")].map((s) => Number.parseFloat(s.style.height));
    assert.equal(top, drawn[0] * 72);
    assert.equal(top + drawn.length * 72 + bottom, 2000 * 72);
    assert.equal(messagesOf(el)[0].querySelector(".pi-md p").textContent, `message ${drawn[0]}`);
    await scrollTo(list, 0);
    assert.equal(indices(messagesOf(el))[0], 0);
  });

  test("a link to a message not drawn draws it and flashes it", async () => {
    const call = {
      role: "assistant",
      content: [{ type: "toolCall", id: "far", name: "read", arguments: { path: "x" } }],
      usage: usage(1, 1),
      stopReason: "toolUse",
      model: "m",
      timestamp: 0,
    };
    const filler = Array.from({ length: 400 }, (_x, i) => ({ role: "user", content: `filler ${i}`, timestamp: i }));
    const result = { role: "toolResult", toolCallId: "far", toolName: "read", content: [{ type: "text", text: "found" }], isError: false, timestamp: 9 };
    const { el } = show([call, ...filler, result]);
    await ready(el);
    const link = el.querySelector(".pi-toolcall a.pi-link");
    assert.equal(link.textContent, "↓ result"); // known, though not drawn
    assert.equal(el.querySelector(".pi-toolresult"), null);
    link.dispatchEvent(new window.MouseEvent("click", { bubbles: true, cancelable: true }));
    const target = el.querySelector(".pi-toolresult");
    assert.ok(target, "the result was drawn");
    assert.ok(target.classList.contains("pi-flash"));
  });

  test("show hidden: hidden messages take no room until shown", async () => {
    const messages = many(300).map((m, i) =>
      i % 3 === 0 ? { role: "custom", customType: "note", content: `quiet ${i}`, display: false, timestamp: i } : { role: "user", content: `m ${i}`, timestamp: i },
    );
    const { el, model } = show(messages);
    await ready(el);
    const drawnBefore = messagesOf(el);
    assert.ok(drawnBefore.some((m) => m.hidden));
    const visible = drawnBefore.filter((m) => !m.hidden).length;
    model.set("show_hidden", true);
    await frame();
    const after = messagesOf(el);
    assert.ok(after.every((m) => !m.hidden));
    assert.ok(after.length < drawnBefore.length, "hidden ones now take room: fewer fit");
    assert.ok(visible > 0);
    assert.equal(el.querySelector(".pi-count").textContent, "300 messages · 100 hidden (shown)");
  });

  test("a live run appended to a long transcript: deltas draw the new tail only", async () => {
    const messages = many(500).map((m, i) => ({ role: "user", content: `m ${i}`, timestamp: i }));
    const { el, model } = show(messages);
    await ready(el);
    const before = messagesOf(el);
    kernelSends(model, { pi: "delta", ops: [{ op: "messages", at: 500, len: 500, messages: [{ role: "user", content: "new", timestamp: 1 }], visibility: ["both"] }] });
    await ready(el);
    assert.deepEqual(messagesOf(el), before);
    assert.equal(el.querySelector(".pi-count").dataset.total, "501");
    await scrollTo(el.querySelector(".pi-list"), 72 * 495);
    assert.equal(messagesOf(el).at(-1).querySelector(".pi-md p").textContent, "new");
  });
});

describe("virtual inspector", () => {
  const rowsOf = (n) =>
    Array.from({ length: n }, (_x, i) => {
      const role = i % 2 ? "assistant" : "user";
      const agent = { role, content: [{ type: "text", text: `text ${i}` }], timestamp: i };
      return { index: i, role, status: "passed", reason: "", tokens: 3, agent, llm: [agent] };
    });

  function showInspector(rows) {
    return mount(inspector, { rows, requests: { a: { messages: [] } }, provider: "a", context_window: 1000, total_tokens: 5, model_name: "m" });
  }

  test("rows near the viewport, a role filter over all rows, expanding a drawn row", async () => {
    const { el } = showInspector(rowsOf(1000));
    const drawn = () => [...el.querySelectorAll(".pi-insp-row")];
    assert.ok(drawn().length < 60);
    const select = el.querySelector('select[data-control="role"]');
    select.value = "assistant";
    select.dispatchEvent(new window.Event("change"));
    assert.ok(drawn().every((r) => r.dataset.role === "assistant"));
    assert.equal(el.querySelector(".pi-insp-count").textContent, "500 of 1,000 rows");
    await scrollTo(el.querySelector(".pi-insp-rows"), 72 * 400);
    assert.ok(drawn().some((r) => r.dataset.index === "801"), drawn().map((r) => r.dataset.index).join());
    const row = drawn()[3];
    row.dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.equal(row.getAttribute("aria-expanded"), "true");
    assert.ok(row.querySelector(".pi-insp-expanded"));
  });

  test("appended rows keep the drawn ones and the filter", () => {
    const rows = rowsOf(400);
    const { el, model } = showInspector(rows);
    const search = el.querySelector("input.pi-search");
    search.value = "text 1";
    search.dispatchEvent(new window.Event("input"));
    const before = [...el.querySelectorAll(".pi-insp-row")];
    kernelSends(model, { pi: "delta", ops: [{ op: "rows", at: 400, len: 400, rows: rowsOf(402).slice(400) }] });
    assert.deepEqual([...el.querySelectorAll(".pi-insp-row")].slice(0, before.length), before);
    assert.equal(el.querySelector(".pi-insp-count").textContent, "111 of 402 rows");
  });
});
