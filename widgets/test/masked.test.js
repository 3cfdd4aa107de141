import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import * as transcript from "../src/transcript.js";

async function show(messages) {
  const visibility = messages.map(() => "both");
  const m = mount(transcript, { messages, visibility, streaming: null, show_hidden: false, title: "", renderers: {} });
  await ready(m.el);
  return messagesOf(m.el);
}

describe("secrets masked badge", () => {
  test("shell output and tool results holding [masked: NAME] are badged; others are not", async () => {
    const bash = (output) => ({ role: "bashExecution", command: "env", output, exitCode: 0, cancelled: false, truncated: false, timestamp: 1 });
    const result = (text) => ({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "read",
      content: [{ type: "text", text }],
      isError: false,
      timestamp: 2,
    });
    const [masked, plain, maskedResult, plainResult] = await show([
      bash("OPENAI_API_KEY=[masked: OPENAI_API_KEY]\n"),
      bash("HOME=/root\n"),
      result("KEY=[masked: MY_SERVICE_TOKEN]"),
      result("[masked]"),
    ]);
    assert.equal(masked.querySelector(".pi-term-status [data-badge=masked]").textContent, "secrets masked");
    assert.equal(plain.querySelector("[data-badge=masked]"), null);
    assert.equal(maskedResult.querySelector("[data-badge=masked]").textContent, "secrets masked");
    assert.equal(plainResult.querySelector("[data-badge=masked]"), null);
  });

  test("every role holding [masked: NAME] is badged once: a prompt, a reply, an error, a custom message", async () => {
    const reply = (content, extra = {}) => ({
      role: "assistant", content, api: "faux", provider: "faux", model: "m", stopReason: "stop", timestamp: 3,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0 } }, ...extra,
    });
    const [prompt, answer, failed, custom, shell, clean] = await show([
      { role: "user", content: [{ type: "text", text: "Use [masked: GH_TOKEN] for it." }], timestamp: 1 },
      reply([{ type: "text", text: "Your token is [masked: GH_TOKEN]." }]),
      reply([], { stopReason: "error", errorMessage: "401: bad token [masked: GH_TOKEN]" }),
      { role: "custom", customType: "note", content: "token=[masked: GH_TOKEN]", display: true, timestamp: 4 },
      { role: "bashExecution", command: "env", output: "T=[masked: GH_TOKEN]", exitCode: 0, cancelled: false,
        truncated: false, timestamp: 5 },
      { role: "user", content: [{ type: "text", text: "no secret here" }], timestamp: 6 },
    ]);
    for (const el of [prompt, answer, failed, custom, shell]) {
      assert.equal(el.querySelectorAll("[data-badge=masked]").length, 1, el.dataset.role);
    }
    assert.equal(clean.querySelector("[data-badge=masked]"), null);
  });
});
