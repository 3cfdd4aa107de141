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
});
