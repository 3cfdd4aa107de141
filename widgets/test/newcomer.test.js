// What a newcomer meets (issue 24): the inspector's LLM column shows each text exactly as sent, a running cell
// says what it is doing ("running for 3 s"), and a failed reply is not also called "(empty response)".
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mount, ready } from "./setup.js";
import * as inspector from "../src/inspector.js";
import * as transcript from "../src/transcript.js";
import { llmParts, llmText } from "../src/llm_text.js";

const lsText = "Ran `ls demo`\n```\nnotes.md\nprivate.txt\ntodo.txt\n\n```";
const spaced = "two  spaces,\ta tab\n\n  an indented line\n";

function inspectorState(rows) {
  return { rows, requests: {}, provider: "", context_window: 8192, total_tokens: 100, model_name: "local/smollm2-135m" };
}

describe("the inspector's LLM column: each text exactly as sent", () => {
  const rows = [
    {
      index: 0,
      role: "bashExecution",
      status: "translated",
      reason: "bashExecution → user text",
      tokens: 12,
      agent: { role: "bashExecution", command: "ls demo", output: "notes.md\nprivate.txt\ntodo.txt\n", exitCode: 0 },
      llm: [{ role: "user", content: [{ type: "text", text: lsText }], timestamp: 1 }],
      produced_text: lsText,
    },
    {
      index: 1,
      role: "user",
      status: "passed",
      reason: "",
      tokens: 5,
      agent: { role: "user", content: spaced, timestamp: 2 },
      llm: [{ role: "user", content: spaced, timestamp: 2 }],
    },
    {
      index: 2,
      role: "assistant",
      status: "passed",
      reason: "",
      tokens: 9,
      agent: null,
      llm: [
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Look first." },
            { type: "text", text: "I will list it:" },
            { type: "toolCall", id: "c1", name: "ls", arguments: { path: "demo" } },
          ],
        },
      ],
    },
  ];

  test("line breaks, spaces and fences are kept, in the live widget", () => {
    const { el } = mount(inspector, inspectorState(rows));
    const [bash, user, reply] = el.querySelectorAll(".pi-insp-row");
    const bashText = bash.querySelector('[data-pane="llm"] pre.pi-llm-text');
    assert.equal(bashText.textContent, lsText); // not "Ran `ls demo` ``` notes.md …" on one line
    assert.equal(bashText.tagName, "PRE");
    assert.equal(user.querySelector('[data-pane="llm"] pre.pi-llm-text').textContent, spaced);
    const parts = [...reply.querySelectorAll('[data-pane="llm"] pre.pi-llm-text')].map((p) => [p.dataset.part, p.textContent]);
    assert.deepEqual(parts, [
      ["thinking", "Look first."],
      ["text", "I will list it:"],
      ["toolCall", '→ ls({"path":"demo"})'],
    ]);
    // the stored side keeps its one-line summary
    assert.match(bash.querySelector('[data-pane="agent"] .pi-cell-text').textContent, /^\$ ls demo \(exit 0\)$/);
  });

  test("llmParts and llmText: the blocks in order, nothing reflowed", () => {
    assert.deepEqual(llmParts({ role: "user", content: [{ type: "text", text: "" }, { type: "image", mimeType: "image/png" }] }), []);
    assert.equal(llmText({ role: "toolResult", content: [{ type: "text", text: "a\n b" }, { type: "text", text: "c" }] }), "a\n b\n\nc");
    assert.deepEqual(llmParts(null), []);
  });
});

function transcriptState(state) {
  return { messages: [], visibility: [], streaming: null, show_hidden: false, title: "", renderers: {}, status: "", ...state };
}

describe("a running cell says what it is doing", () => {
  test("a %bash command that prints nothing: its card and 'running for N s', not '0 messages'", async () => {
    const running = { role: "bashExecution", command: "sleep 3", output: "", exitCode: null, cancelled: false };
    const m = mount(transcript, transcriptState({ streaming: running, status: "running for {elapsed}" }));
    const root = await ready(m.el);
    const status = root.querySelector(".pi-run-status");
    assert.equal(status.hidden, false);
    assert.equal(status.getAttribute("role"), "status");
    assert.match(status.textContent, /^running for \d+ s$/);
    assert.equal(root.querySelector(".pi-empty").hidden, true); // no "(no messages)"
    assert.equal(root.querySelector(".pi-count").hidden, true); // no "0 messages"
    const card = root.querySelector(".pi-streaming-slot article[data-role=bashExecution]");
    assert.equal(card.querySelector(".pi-cmd").textContent, "sleep 3");
    assert.match(card.textContent, /\(no output yet\)/);
    assert.match(card.textContent, /running/);
    assert.doesNotMatch(card.textContent, /no exit code/);
    // the count goes on without the kernel (one tick later it still reads "running for N s")
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.match(status.textContent, /^running for [1-9]\d* s$/);
    m.model.set("status", "");
    assert.equal(status.hidden, true);
    m.cleanup();
  });

  test("a waiting %%agent says the model is loading, and the seconds restart when the text changes", async () => {
    const prompt = { role: "user", content: "What is in demo?", timestamp: 1 };
    const m = mount(transcript, transcriptState({ messages: [prompt], visibility: ["both"], status: "loading the model ({elapsed})" }));
    const root = await ready(m.el);
    const status = root.querySelector(".pi-run-status");
    assert.equal(status.textContent, "loading the model (0 s)");
    assert.equal(root.querySelector(".pi-count").hidden, false); // one message: counted as usual
    m.model.set("status", "running the tool ls ({elapsed})");
    assert.equal(status.textContent, "running the tool ls (0 s)");
    m.cleanup();
  });

  test("the elapsed time reads as seconds, then minutes", () => {
    assert.equal(transcript.fmtElapsed(3400), "3 s");
    assert.equal(transcript.fmtElapsed(125000), "2 min 5 s");
    assert.equal(transcript.statusText("running for {elapsed}", 0), "running for 0 s");
    assert.equal(transcript.statusText("no count here", 5000), "no count here");
  });

  test("a saved transcript has no status trait: no status line", async () => {
    const m = mount(transcript, { messages: [], visibility: [], streaming: null, show_hidden: false, title: "", renderers: {} });
    const root = await ready(m.el);
    assert.equal(root.querySelector(".pi-run-status").hidden, true);
    assert.equal(root.querySelector(".pi-empty").hidden, false);
    m.cleanup();
  });
});

describe("a failed reply", () => {
  test("says why, without '(empty response)' above it", async () => {
    const failed = {
      role: "assistant",
      content: [],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      stopReason: "error",
      errorMessage: "401 invalid x-api-key",
      timestamp: 2,
    };
    const m = mount(transcript, transcriptState({ messages: [failed], visibility: ["both"] }));
    const root = await ready(m.el);
    const article = root.querySelector("article[data-role=assistant]");
    assert.doesNotMatch(article.textContent, /empty response/);
    assert.match(article.querySelector(".pi-error-box").textContent, /401 invalid x-api-key/);
    m.cleanup();
  });
});
