import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mount } from "./setup.js";
import { session } from "./fixtures.js";
import * as inspector from "../src/inspector.js";

const msgs = session();
const bashText = "Ran `git status`\n```\nOn branch main\nnothing to commit\n```";

function rows() {
  return [
    {
      index: 0,
      role: "compactionSummary",
      status: "summarised",
      reason: "compacted into the summary",
      tokens: 40,
      agent: msgs[0],
      llm: [{ role: "user", content: [{ type: "text", text: "The conversation history before this point..." }], timestamp: 1 }],
      produced_text: "The conversation history before this point...",
    },
    { index: 1, role: "user", status: "passed", reason: "", tokens: 12, agent: msgs[1], llm: [msgs[1]], produced_text: "" },
    { index: 2, role: "assistant", status: "passed", reason: "", tokens: 30, agent: msgs[2], llm: [msgs[2]] },
    {
      index: 5,
      role: "bashExecution",
      status: "translated",
      reason: "bashExecution → user text",
      tokens: 20,
      agent: msgs[5],
      llm: [{ role: "user", content: [{ type: "text", text: bashText }], timestamp: 5 }],
      produced_text: bashText,
    },
    { index: 6, role: "bashExecution", status: "dropped", reason: "excludeFromContext", tokens: 0, agent: msgs[6], llm: [] },
    { index: 9, role: "notification", status: "dropped", reason: "unknown role", tokens: 0, agent: msgs[9], llm: [] },
    {
      index: 10,
      role: "assistant",
      status: "dropped",
      reason: "error/aborted assistant: not replayed to the provider",
      tokens: 0,
      agent: msgs[10],
      llm: [],
    },
    {
      index: null,
      role: "user",
      status: "injected",
      reason: "added by transform_context",
      tokens: 9,
      agent: null,
      llm: [{ role: "user", content: [{ type: "text", text: "Today is Monday." }], timestamp: 9 }],
    },
  ];
}

const requests = {
  anthropic: {
    model: "claude-sonnet-4-20250514",
    system: [{ type: "text", text: "You are helpful." }],
    messages: [
      { role: "user", content: [{ type: "text", text: "List the files, *please*." }] },
      { role: "user", content: [{ type: "text", text: bashText }] },
    ],
    stream: true,
  },
  openai: { model: "gpt-4o-mini", messages: [{ role: "system", content: "You are helpful." }], stream: true },
};

function show(extra = {}) {
  return mount(inspector, {
    rows: rows(),
    requests,
    provider: "anthropic",
    context_window: 200000,
    total_tokens: 111,
    model_name: "claude-sonnet-4-20250514",
    ...extra,
  });
}

const visibleRows = (el) => [...el.querySelectorAll(".pi-insp-row")].filter((r) => !r.hidden);

describe("inspector", () => {
  test("three panes: agent and llm cells per row, one request pane", () => {
    const { el } = show();
    const all = el.querySelectorAll(".pi-insp-row");
    assert.equal(all.length, 8);
    for (const row of all) {
      assert.equal(row.querySelectorAll('[data-pane="agent"]').length, 1);
      assert.equal(row.querySelectorAll('[data-pane="llm"]').length, 1);
    }
    assert.equal(el.querySelectorAll('[data-pane="request"]').length, 1);
    // row-aligned: agent, status, llm are cells of the same grid row
    const first = all[0];
    assert.deepEqual(
      [...first.children].map((c) => c.dataset.pane ?? "status"),
      ["agent", "status", "llm"],
    );
  });

  test("rows carry data-status / data-role and show a status badge, reason and tokens", () => {
    const { el } = show();
    const all = [...el.querySelectorAll(".pi-insp-row")];
    assert.deepEqual(
      all.map((r) => r.dataset.status),
      ["summarised", "passed", "passed", "translated", "dropped", "dropped", "dropped", "injected"],
    );
    assert.deepEqual(
      all.map((r) => r.dataset.role),
      ["compactionSummary", "user", "assistant", "bashExecution", "bashExecution", "notification", "assistant", "user"],
    );
    const bash = all[3];
    assert.equal(bash.querySelector(".pi-badge").textContent, "translated");
    assert.equal(bash.querySelector(".pi-reason").textContent, "bashExecution → user text");
    assert.equal(bash.querySelector(".pi-tokens").textContent, "~20 tok");
    assert.match(bash.querySelector('[data-pane="agent"]').textContent, /^#5bashExecution.*\$ git status \(exit 0\)$/);
    assert.match(bash.querySelector('[data-pane="llm"]').textContent, /^userRan `git status`/);
    assert.equal(all[0].querySelector('[data-pane="llm"]').textContent, "userThe conversation history before this point...");
    const dropped = all[4];
    assert.equal(dropped.querySelector(".pi-reason").textContent, "excludeFromContext");
    assert.equal(dropped.querySelector('[data-pane="llm"]').textContent, "— not sent —");
    const injected = all[7];
    assert.match(injected.querySelector('[data-pane="agent"]').textContent, /not in the agent's messages/);
    assert.match(injected.querySelector('[data-pane="llm"]').textContent, /Today is Monday\./);
    assert.equal(all[6].querySelector(".pi-reason").textContent, "error/aborted assistant: not replayed to the provider");
  });

  test("a row whose converter raised is marked error, with the exception, not passed", () => {
    const failing = { index: 5, role: "bashExecution", status: "error", reason: "ValueError: no output", tokens: 0,
      agent: msgs[5], llm: [] };
    const { el } = show({ rows: [failing] });
    const row = el.querySelector(".pi-insp-row");
    assert.equal(row.dataset.status, "error");
    const badge = row.querySelector(".pi-badge");
    assert.equal(badge.textContent, "error");
    assert.ok(badge.classList.contains("pi-badge-status-error"));
    assert.equal(row.querySelector(".pi-reason").textContent, "ValueError: no output");
  });

  test("gauge: total_tokens against context_window, with levels", () => {
    const { el, model } = show();
    const gauge = el.querySelector(".pi-gauge");
    assert.equal(gauge.dataset.level, "ok");
    assert.equal(gauge.getAttribute("aria-valuenow"), "111");
    assert.equal(gauge.getAttribute("aria-valuemax"), "200000");
    assert.equal(el.querySelector(".pi-gauge-text").textContent, "~111 / 200,000 tokens (0.1%) estimate: messages, chars/4");
    assert.equal(el.querySelector("[data-figure=reported]").hidden, true); // no reply reported usage yet
    model.set("total_tokens", 170000);
    assert.equal(gauge.dataset.level, "warn");
    assert.equal(el.querySelector(".pi-gauge-fill").style.width, "85%");
    model.set("total_tokens", 250000);
    assert.equal(gauge.dataset.level, "over");
    assert.equal(el.querySelector(".pi-gauge-fill").style.width, "100%");
    model.set("context_window", 0);
    assert.equal(gauge.dataset.level, "unknown");
    model.set("model_name", "gpt-4o-mini");
    assert.equal(el.querySelector(".pi-insp-title .pi-model").textContent, "gpt-4o-mini");
  });

  test("gauge: the estimate counts the system prompt and the tools too, and says so", () => {
    const { el, model } = show({ total_tokens: 411, overhead_tokens: { system: 100, tools: 200 } });
    const kind = el.querySelector("[data-figure=estimate] .pi-figure-kind");
    assert.equal(kind.textContent, "estimate: messages + system prompt + tools, chars/4");
    assert.match(kind.title, /system prompt \(~100\) and the tool definitions \(~200\)/);
    assert.match(el.querySelector(".pi-gauge-text").textContent, /^~411 \/ 200,000 tokens/);
    model.set("overhead_tokens", {});
    const redrawn = el.querySelector("[data-figure=estimate] .pi-figure-kind");
    assert.equal(redrawn.textContent, "estimate: messages, chars/4"); // an output saved before they were counted
  });

  test("gauge: the provider-reported usage of the last reply next to the estimate, each labelled", () => {
    const usage = { index: 2, tokens: 1234, input: 34, cacheRead: 1200, cacheWrite: 0, output: 50, model: "x/y" };
    const { el, model } = show({ reported_usage: usage });
    const estimate = el.querySelector("[data-figure=estimate]");
    const reported = el.querySelector("[data-figure=reported]");
    assert.equal(reported.hidden, false);
    assert.match(estimate.textContent, /^~111 \/ 200,000 tokens .*estimate: messages, chars\/4$/);
    assert.equal(reported.textContent, "1,234 tokens (0.6%) reported by the provider for the last reply (#2)");
    assert.equal(reported.title, "input tokens of that request: input 34 + cache read 1,200");
    const mark = el.querySelector(".pi-gauge-mark");
    assert.equal(mark.hidden, false);
    assert.equal(mark.style.left, "0.6%");
    model.set("reported_usage", {});
    assert.equal(reported.hidden, true);
    assert.equal(mark.hidden, true);
  });

  test("reportedFigure: sums input + cache when tokens is missing; null for nothing or junk", () => {
    assert.equal(inspector.reportedFigure({ input: 10, cacheRead: 5, cacheWrite: 1 }).tokens, 16);
    assert.equal(inspector.reportedFigure({ input: 0, cacheRead: 0 }), null);
    assert.equal(inspector.reportedFigure({}), null);
    assert.equal(inspector.reportedFigure(null), null);
    assert.equal(inspector.reportedFigure("1000"), null);
    assert.equal(inspector.reportedFigure({ tokens: -3, input: Number.NaN }), null);
  });

  test("filter by role and search text", () => {
    const { el } = show();
    const select = el.querySelector('select[data-control="role"]');
    assert.deepEqual(
      [...select.options].map((o) => o.value),
      ["", "compactionSummary", "user", "assistant", "bashExecution", "notification"],
    );
    select.value = "bashExecution";
    select.dispatchEvent(new window.Event("change"));
    assert.deepEqual(
      visibleRows(el).map((r) => r.dataset.status),
      ["translated", "dropped"],
    );
    assert.equal(el.querySelector(".pi-insp-count").textContent, "2 of 8 rows");
    const search = el.querySelector('input[data-control="search"]');
    search.value = "NETRC machine"; // nothing
    search.dispatchEvent(new window.Event("input"));
    assert.equal(visibleRows(el).length, 0);
    select.value = "";
    select.dispatchEvent(new window.Event("change"));
    search.value = "Monday";
    search.dispatchEvent(new window.Event("input"));
    assert.deepEqual(
      visibleRows(el).map((r) => r.dataset.status),
      ["injected"],
    );
    search.value = "excludefromcontext"; // reasons are searched, case-insensitive
    search.dispatchEvent(new window.Event("input"));
    assert.equal(visibleRows(el).length, 1);
  });

  test("click a row to expand both JSON forms; highlight it in the request", () => {
    const { el } = show();
    const bash = el.querySelectorAll(".pi-insp-row")[3];
    bash.dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.equal(bash.getAttribute("aria-expanded"), "true");
    const agentJson = bash.querySelector('[data-json="agent"] pre').textContent;
    assert.deepEqual(JSON.parse(agentJson), msgs[5]);
    const llmJson = bash.querySelector('[data-json="llm"] pre').textContent;
    assert.equal(JSON.parse(llmJson)[0].content[0].text, bashText);
    assert.equal(bash.querySelector('[data-json="text"] pre').textContent, bashText);
    const mark = el.querySelector(".pi-request-json mark");
    assert.ok(mark, "the row's text is marked in the request body");
    assert.equal(mark.textContent, JSON.stringify(bashText.slice(0, 60)).slice(1, -1));
    // a click inside the expanded JSON does not collapse; a click on the row again does
    bash.querySelector(".pi-insp-expanded pre").dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.equal(bash.getAttribute("aria-expanded"), "true");
    bash.querySelector(".pi-cell").dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.equal(bash.getAttribute("aria-expanded"), "false");
    assert.equal(bash.querySelector(".pi-insp-expanded"), null);
    assert.equal(el.querySelector(".pi-request-json mark"), null, "collapsing takes the mark away");
    assert.deepEqual(JSON.parse(el.querySelector(".pi-request-json").textContent), requests.anthropic);
    // keyboard
    bash.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    assert.equal(bash.getAttribute("aria-expanded"), "true");
  });

  test("request pane: pretty JSON of the chosen provider; switching writes back to the model", () => {
    const { el, model } = show();
    const pre = el.querySelector('[data-pane="request"] pre');
    assert.deepEqual(JSON.parse(pre.textContent), requests.anthropic);
    assert.equal(pre.textContent, JSON.stringify(requests.anthropic, null, 2));
    const select = el.querySelector('select[data-control="provider"]');
    assert.deepEqual(
      [...select.options].map((o) => o.value),
      ["anthropic", "openai"],
    );
    select.value = "openai";
    select.dispatchEvent(new window.Event("change"));
    assert.equal(model.get("provider"), "openai");
    // told to the kernel as a message (save_changes would send back the rows and requests deltas set too)
    assert.deepEqual(model.sent.at(-1), { pi: "provider", value: "openai" });
    assert.equal(model.saves, 0);
    assert.deepEqual(JSON.parse(pre.textContent), requests.openai);
    // and from Python
    model.set("provider", "anthropic");
    assert.equal(select.value, "anthropic");
    assert.deepEqual(JSON.parse(pre.textContent), requests.anthropic);
    // unknown provider → first one; no requests → a note
    model.set("provider", "nope");
    assert.equal(select.value, "anthropic");
    model.set("requests", {});
    assert.equal(pre.textContent, "(no request built yet)");
  });

  test("copy buttons use navigator.clipboard, with a fallback", async () => {
    const { el } = show();
    const copied = [];
    const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    Object.defineProperty(globalThis, "navigator", {
      value: { clipboard: { writeText: async (t) => copied.push(t) } },
      configurable: true,
    });
    try {
      const btn = el.querySelector('[data-pane="request"] button.pi-copy');
      btn.click();
      await new Promise((r) => setTimeout(r, 0));
      assert.deepEqual(JSON.parse(copied[0]), requests.anthropic);
      assert.equal(btn.textContent, "copied");
      // no clipboard API and no execCommand: the text is selected for Ctrl+C instead
      Object.defineProperty(globalThis, "navigator", { value: {}, configurable: true });
      const btn2 = el.querySelector('[data-pane="request"] button.pi-copy');
      btn2.click();
      await new Promise((r) => setTimeout(r, 0));
      assert.equal(btn2.dataset.copied, "false");
      assert.equal(window.getSelection().toString().length > 0, true);
    } finally {
      if (saved) Object.defineProperty(globalThis, "navigator", saved);
    }
  });

  test("change:rows re-renders without re-display and keeps filter and expanded rows", () => {
    const { el, model } = show();
    const root = el.firstElementChild;
    const select = el.querySelector('select[data-control="role"]');
    select.value = "user";
    select.dispatchEvent(new window.Event("change"));
    el.querySelectorAll(".pi-insp-row")[1].dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    const more = [...rows(), { index: 12, role: "user", status: "passed", reason: "", tokens: 3, agent: msgs[12], llm: [msgs[12]] }];
    model.set("rows", more);
    assert.equal(el.firstElementChild, root);
    assert.equal(el.querySelectorAll(".pi-insp-row").length, 9);
    assert.equal(select.value, "user");
    assert.equal(visibleRows(el).length, 3);
    assert.equal(el.querySelectorAll(".pi-insp-row")[1].getAttribute("aria-expanded"), "true");
    model.set("rows", []);
    assert.match(el.querySelector(".pi-insp-rows").textContent, /no messages in the context/);
  });

  test("notes from Python are listed (as text)", () => {
    const { el, model } = show({ notes: ["compaction is due", "<b>x</b>"] });
    assert.deepEqual(
      [...el.querySelectorAll(".pi-insp-notes li")].map((li) => li.textContent),
      ["compaction is due", "<b>x</b>"],
    );
    assert.equal(el.querySelector(".pi-insp-notes b"), null);
    model.set("notes", []);
    assert.equal(el.querySelector(".pi-insp-notes").hidden, true);
  });

  test("summarised rows say what replaced them", () => {
    const r = rows();
    r[0] = { ...r[0], llm: [], produced_text: "" };
    const { el } = show({ rows: r });
    assert.equal(el.querySelector('.pi-insp-row [data-pane="llm"]').textContent, "— replaced by the summary —");
  });

  test("cleanup removes listeners", () => {
    const { model, cleanup, el } = show();
    cleanup();
    assert.equal(model.viewListeners(), 0);
    model.dispose?.();
    assert.equal(model.listenerCount(), 0);
    assert.equal(el.children.length, 0);
  });
});
