import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { PNG_1PX, session, usage, VISIBILITY } from "./fixtures.js";
import * as transcript from "../src/transcript.js";

async function show(state = {}) {
  const m = mount(transcript, {
    messages: session(),
    visibility: VISIBILITY,
    streaming: null,
    show_hidden: false,
    title: "demo session",
    renderers: {},
    ...state,
  });
  await ready(m.el);
  return m;
}

describe("transcript: structure", () => {
  test("every message has data-role and data-visibility, in order", async () => {
    const { el } = await show();
    const msgs = messagesOf(el);
    assert.equal(msgs.length, session().length);
    assert.deepEqual(
      msgs.map((m) => m.dataset.role),
      session().map((m) => m.role),
    );
    assert.deepEqual(
      msgs.map((m) => m.dataset.visibility),
      VISIBILITY,
    );
    for (const m of msgs) assert.ok(m.querySelector(".pi-msg-head .pi-role-label").textContent);
  });

  test("visibility defaults from Pi's rules when the list is missing", async () => {
    const { el } = await show({ visibility: [] });
    const byRole = messagesOf(el).map((m) => [m.dataset.role, m.dataset.visibility]);
    assert.deepEqual(byRole[6], ["bashExecution", "ui"]); // excludeFromContext
    assert.deepEqual(byRole[7], ["custom", "llm"]); // display: false
    assert.deepEqual(byRole[1], ["user", "both"]);
  });

  test("title, count and totals in the header", async () => {
    const { el } = await show();
    assert.equal(el.querySelector(".pi-title").textContent, "demo session");
    const count = el.querySelector(".pi-count");
    assert.equal(count.textContent, "13 messages · 1 hidden"); // the display:false custom message
    assert.deepEqual({ ...count.dataset }, { total: "13", hidden: "1", visible: "12" });
    assert.match(el.querySelector(".pi-totals").textContent, /1,310 in · 101 out · \$0\.0123/);
  });

  test("empty transcript says so", async () => {
    const { el } = await show({ messages: [], visibility: [] });
    assert.equal(messagesOf(el).length, 0);
    assert.equal(el.querySelector(".pi-empty").hidden, false);
  });

  test("cleanup removes the view's listeners and the DOM; initialize's cleanup its own", async () => {
    const { el, model, cleanup } = await show();
    assert.ok(model.viewListeners() > 0);
    cleanup();
    assert.equal(model.viewListeners(), 0);
    assert.equal(el.querySelector(".pi-transcript"), null);
    model.dispose();
    assert.equal(model.listenerCount(), 0);
  });
});

describe("transcript: roles", () => {
  test("user: markdown text and an image thumbnail", async () => {
    const { el } = await show();
    const user = messagesOf(el)[1];
    assert.equal(user.querySelector(".pi-md em").textContent, "please");
    const img = user.querySelector("img.pi-thumb");
    assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG_1PX}`);
    const plain = messagesOf(el)[12];
    assert.equal(plain.querySelector(".pi-md p").textContent, "continue");
  });

  test("user: only png/jpeg/gif/webp images are shown", async () => {
    const msg = {
      role: "user",
      content: [
        { type: "image", data: "PHN2Zz48L3N2Zz4=", mimeType: "image/svg+xml" },
        { type: "image", data: PNG_1PX, mimeType: "image/webp" },
        { type: "image", data: "not base64 \"><script>", mimeType: "image/png" },
      ],
      timestamp: 1,
    };
    const { el } = await show({ messages: [msg], visibility: [] });
    const imgs = el.querySelectorAll("img");
    assert.equal(imgs.length, 1);
    assert.match(imgs[0].getAttribute("src"), /^data:image\/webp;base64,/);
    assert.equal(el.querySelectorAll(".pi-image-note").length, 2);
    assert.match(el.querySelector(".pi-image-note").textContent, /image\/svg\+xml not shown/);
  });

  test("assistant: text, thinking collapsed, redacted reasoning, no signatures", async () => {
    const { el } = await show();
    const a = messagesOf(el)[2];
    const thinking = a.querySelector("details.pi-thinking");
    assert.equal(thinking.open, false);
    assert.equal(thinking.querySelector("summary").textContent, "Thinking");
    assert.match(thinking.textContent, /wants the file list/);
    assert.equal(a.querySelector(".pi-redacted").textContent, "Reasoning redacted");
    assert.doesNotMatch(el.textContent, /SIG-SECRET|ENCRYPTED-PAYLOAD/);
    assert.match(a.querySelector(".pi-msg-body > .pi-md").textContent, /Let me check\./);
  });

  test("assistant: a tool call card with pretty arguments, linked both ways to its result", async () => {
    const { el } = await show();
    const [call] = el.querySelectorAll(".pi-toolcall");
    assert.equal(call.querySelector(".pi-tool-name").textContent, "bash");
    assert.equal(call.dataset.toolCallId, "toolu_01|ABC");
    assert.match(call.querySelector("pre.pi-json").textContent, /"command": "ls -la"/);
    assert.equal(call.querySelector("details.pi-args-box").open, true);
    const toResult = call.querySelector("a.pi-link[data-link=result]");
    const result = el.querySelector(".pi-toolresult");
    assert.equal(toResult.getAttribute("href"), `#${result.id}`);
    assert.equal(toResult.textContent, "↓ result");
    const back = result.querySelector("a.pi-link[data-link=call]");
    assert.equal(back.getAttribute("href"), `#${call.id}`);
    assert.notEqual(call.id, result.id);
    assert.match(call.id, /^[A-Za-z0-9_-]+$/);
    // clicking scrolls inside the widget and flashes the target
    back.dispatchEvent(new window.MouseEvent("click", { bubbles: true, cancelable: true }));
    assert.ok(call.classList.contains("pi-flash"));
  });

  test("assistant: a call without result says so; multi-line string arguments read as text", async () => {
    const msg = {
      role: "assistant",
      content: [{ type: "toolCall", id: "c9", name: "write", arguments: { path: "a.py", content: "x = 1\ny = 2" } }],
      usage: usage(1, 1),
      stopReason: "toolUse",
      model: "m",
      timestamp: 1,
    };
    const { el } = await show({ messages: [msg], visibility: [] });
    const link = el.querySelector("a.pi-link");
    assert.equal(link.hasAttribute("href"), false);
    assert.equal(link.textContent, "no result");
    assert.equal(el.querySelector(".pi-args dt").textContent, "path");
    assert.equal(el.querySelectorAll(".pi-args pre.pi-arg-text")[1].textContent, "x = 1\ny = 2");
  });

  test("assistant: quiet footer with model, stop reason, tokens and cost when non-zero", async () => {
    const { el } = await show();
    const [first, second] = [messagesOf(el)[2], messagesOf(el)[4]];
    const foot = first.querySelector("footer.pi-msg-foot").textContent;
    assert.match(foot, /claude-sonnet-4-20250514 · toolUse · 1,200 in · 80 out · \$0\.0123/);
    const foot2 = second.querySelector("footer.pi-msg-foot").textContent;
    assert.match(foot2, /stop · 100 in · 20 out$/);
    assert.equal(second.querySelector(".pi-cost"), null);
  });

  test("assistant: error and aborted are clearly marked with the message", async () => {
    const { el } = await show();
    const err = messagesOf(el)[10];
    const aborted = messagesOf(el)[11];
    assert.ok(err.classList.contains("pi-is-error"));
    assert.equal(err.querySelector("[data-badge=error]").textContent, "error");
    assert.equal(err.querySelector(".pi-error-box").textContent, "Error: 429 rate limited");
    assert.equal(err.querySelector(".pi-error-box").getAttribute("role"), "alert");
    assert.ok(aborted.classList.contains("pi-is-aborted"));
    assert.equal(aborted.querySelector(".pi-error-box").textContent, "Aborted: Request was aborted");
    assert.equal(aborted.querySelector("[data-badge=warn]").textContent, "aborted");
  });

  test("toolResult: text output, details toggle, error styling", async () => {
    const { el } = await show();
    const r = messagesOf(el)[3];
    assert.equal(r.querySelector("pre.pi-output").textContent, "total 0\ndrwxr-xr-x 2 u u 40 .");
    const details = r.querySelector("details.pi-details");
    assert.equal(details.open, false);
    assert.equal(details.querySelector("summary").textContent, "details");
    assert.match(details.querySelector("pre").textContent, /"truncation": null/);

    const bad = {
      role: "toolResult",
      toolCallId: "x",
      toolName: "read",
      content: [
        { type: "text", text: "ENOENT" },
        { type: "image", data: PNG_1PX, mimeType: "image/gif" },
      ],
      isError: true,
      timestamp: 1,
    };
    const m2 = await show({ messages: [bad], visibility: [] });
    const msg = messagesOf(m2.el)[0];
    assert.ok(msg.classList.contains("pi-is-error"));
    assert.ok(msg.querySelector(".pi-toolresult-error"));
    assert.equal(msg.querySelector(".pi-card-kind").textContent, "tool error");
    assert.equal(msg.querySelector("img.pi-thumb").getAttribute("src").slice(0, 22), "data:image/gif;base64,");
    assert.equal(msg.querySelector("a.pi-link").textContent, "call not in transcript");
  });

  test("long outputs render a head and a tail, and all lines on demand", async () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n");
    const msg = { role: "toolResult", toolCallId: "t", toolName: "read", content: [{ type: "text", text }], isError: false };
    const { el } = await show({ messages: [msg], visibility: [] });
    const pre = el.querySelector("pre.pi-output");
    assert.equal(pre.dataset.truncatedView, "true");
    assert.match(pre.textContent, /line 0\n/);
    assert.match(pre.textContent, /line 999$/);
    assert.doesNotMatch(pre.textContent, /line 500\n/);
    const more = pre.querySelector("button.pi-show-more");
    assert.match(more.textContent, /800 more lines/);
    more.click();
    assert.equal(pre.textContent, text);
  });

  test("compaction and branch summaries are cards with markdown", async () => {
    const { el } = await show();
    const c = messagesOf(el)[0];
    assert.equal(c.querySelector(".pi-summary-title").textContent, "Compaction summary — 50,000 tokens before");
    assert.equal(c.querySelector(".pi-md strong").textContent, "set up");
    const b = messagesOf(el)[8];
    assert.equal(b.querySelector(".pi-summary-title").textContent, "Branch summary — from deadbeef");
    assert.equal(b.querySelector(".pi-md em").textContent, "B");
  });

  test("custom: customType label; display:false only with show_hidden, marked LLM only", async () => {
    const { el, model } = await show();
    const custom = messagesOf(el)[7];
    assert.equal(custom.hidden, true);
    assert.equal(custom.querySelector("[data-badge=type]").textContent, "todo");
    assert.equal(custom.querySelector("[data-badge=llm]").textContent, "LLM only");
    assert.equal(el.querySelector(".pi-hidden-toggle").hidden, false);
    assert.equal(el.querySelector(".pi-hidden-toggle").textContent, "show hidden");

    model.set("show_hidden", true);
    assert.equal(custom.hidden, false);
    assert.equal(el.querySelector(".pi-count").textContent, "13 messages · 1 hidden (shown)");
    assert.equal(el.querySelector(".pi-count").dataset.visible, "13");
    assert.equal(custom.querySelector(".pi-md p").textContent, "TODO list updated");
    model.set("show_hidden", false);
    assert.equal(custom.hidden, true);

    // the checkbox writes back to the model
    const box = el.querySelector(".pi-hidden-checkbox");
    box.checked = true;
    box.dispatchEvent(new window.Event("change"));
    assert.equal(model.get("show_hidden"), true);
    assert.equal(model.saves, 1);
    assert.equal(custom.hidden, false);
  });

  test("custom: a display:false message given visibility 'both' still says LLM only", async () => {
    const msg = { role: "custom", customType: "ctx", content: "x", display: false, timestamp: 1 };
    const { el } = await show({ messages: [msg], visibility: ["both"] });
    assert.equal(el.querySelector("[data-badge=llm]").textContent, "LLM only");
  });

  test("visibility 'none' (hidden and not sent) is hidden unless show_hidden, and says both", async () => {
    const msg = { role: "custom", customType: "note", content: "internal", display: false, timestamp: 1 };
    const { el, model } = await show({ messages: [msg], visibility: ["none"] });
    const m = messagesOf(el)[0];
    assert.equal(m.dataset.visibility, "none");
    assert.equal(m.hidden, true);
    assert.equal(el.querySelector(".pi-count").textContent, "1 message · 1 hidden");
    const badges = [...m.querySelectorAll(".pi-badge")].map((b) => b.textContent);
    assert.deepEqual(badges, ["not sent to the LLM", "hidden", "note"]);
    model.set("show_hidden", true);
    assert.equal(m.hidden, false);
  });

  test("unknown role falls back to labelled raw JSON", async () => {
    const { el } = await show();
    const n = messagesOf(el)[9];
    assert.equal(n.dataset.role, "notification");
    assert.equal(n.querySelector(".pi-role-label").textContent, "notification");
    assert.match(n.querySelector(".pi-unknown-title").textContent, /unknown role notification/);
    assert.match(n.querySelector("pre.pi-json").textContent, /"text": "ignored by convertToLlm"/);
    assert.equal(n.querySelector("[data-badge=warn]").textContent, "unknown role");
  });

  test("malformed messages never break the list", async () => {
    const messages = [null, "just a string", 42, { role: "assistant", content: "not a list" }, { role: "user" }];
    const { el } = await show({ messages, visibility: [] });
    assert.equal(messagesOf(el).length, 5);
    assert.match(messagesOf(el)[0].textContent, /unknown role/);
    assert.match(messagesOf(el)[3].textContent, /not a list/);
  });
});

describe("transcript: live updates", () => {
  test("change:messages appends only the new tail", async () => {
    const { el, model } = await show();
    const before = messagesOf(el);
    model.set("messages", [...session(), { role: "user", content: "one more", timestamp: 5 }]);
    await ready(el);
    const after = messagesOf(el);
    assert.equal(after.length, before.length + 1);
    assert.equal(after[0], before[0]); // same element: not re-rendered
    assert.equal(after[12], before[12]);
    assert.equal(after.at(-1).querySelector(".pi-md p").textContent, "one more");
    assert.equal(el.querySelector(".pi-count").textContent, "14 messages · 1 hidden");
  });

  test("change:messages re-renders an edited message and drops removed ones", async () => {
    const { el, model } = await show();
    const msgs = session();
    msgs[4] = { ...msgs[4], content: [{ type: "text", text: "edited" }] };
    model.set("messages", msgs.slice(0, 6));
    await ready(el);
    const after = messagesOf(el);
    assert.equal(after.length, 6);
    assert.match(after[4].textContent, /edited/);
  });

  test("change:visibility re-renders the message", async () => {
    const { el, model } = await show();
    const vis = [...VISIBILITY];
    vis[12] = "ui";
    model.set("visibility", vis);
    await ready(el);
    const last = messagesOf(el)[12];
    assert.equal(last.dataset.visibility, "ui");
    assert.equal(last.querySelector("[data-badge=ui]").textContent, "not sent to the LLM");
  });

  test("change:streaming shows the partial last, then clears; tool calls say running", async () => {
    const { el, model } = await show({ messages: [], visibility: [] });
    const partial = {
      role: "assistant",
      content: [
        { type: "text", text: "Working on it" },
        { type: "toolCall", id: "s1", name: "read", arguments: { path: "REA" } },
      ],
      api: "faux",
      provider: "faux",
      model: "faux-1",
      usage: usage(0, 0),
      stopReason: "stop",
      timestamp: 1,
    };
    model.set("streaming", partial);
    assert.equal(el.firstElementChild.dataset.state, "rendering");
    await ready(el);
    const s = el.querySelector(".pi-streaming-slot article");
    assert.equal(s.dataset.streaming, "true");
    assert.equal(s.dataset.role, "assistant");
    assert.match(s.querySelector(".pi-streaming-indicator").textContent, /streaming/);
    assert.equal(s.querySelector("a.pi-link").textContent, "running…");
    assert.equal(el.querySelector(".pi-empty").hidden, true);

    // many deltas in one frame render once, with the latest text
    for (let i = 0; i < 50; i++) {
      model.set("streaming", { ...partial, content: [{ type: "text", text: `Working on it ${i}` }] });
    }
    await ready(el);
    assert.equal(el.querySelector(".pi-streaming-slot .pi-md p").textContent, "Working on it 49");

    model.set("messages", [{ ...partial, content: [{ type: "text", text: "Done" }] }]);
    model.set("streaming", null);
    await ready(el);
    assert.equal(el.querySelector(".pi-streaming-slot").children.length, 0);
    assert.equal(messagesOf(el)[0].querySelector(".pi-md p").textContent, "Done");
  });

  test("a tool result arriving later links the earlier call", async () => {
    const msgs = session().slice(0, 3);
    const { el, model } = await show({ messages: msgs, visibility: [] });
    assert.equal(el.querySelector(".pi-toolcall a.pi-link").textContent, "no result");
    model.set("messages", session().slice(0, 4));
    await ready(el);
    assert.equal(el.querySelector(".pi-toolcall a.pi-link").textContent, "↓ result");
  });

  test("change:title updates the header", async () => {
    const { el, model } = await show();
    model.set("title", "renamed");
    assert.equal(el.querySelector(".pi-title").textContent, "renamed");
  });

  test("two views of one model are independent (distinct anchors)", async () => {
    const a = await show();
    const b = await show();
    const idA = a.el.querySelector(".pi-toolcall").id;
    const idB = b.el.querySelector(".pi-toolcall").id;
    assert.notEqual(idA, idB);
  });
});
