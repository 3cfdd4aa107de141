import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { session, VISIBILITY } from "./fixtures.js";
import { ansiToFragment, stripAnsi } from "../src/ansi.js";
import * as transcript from "../src/transcript.js";

function html(text) {
  const div = document.createElement("div");
  div.appendChild(ansiToFragment(text));
  return div;
}

describe("ANSI SGR → spans", () => {
  test("16 colours, bright colours, bold, reset", () => {
    const d = html("a\x1b[31mred\x1b[0m b\x1b[1;92mbright\x1b[22m plain-green\x1b[39m end");
    assert.equal(d.textContent, "ared bbright plain-green end");
    const spans = [...d.querySelectorAll("span")];
    assert.deepEqual(
      spans.map((s) => [s.textContent, s.className]),
      [
        ["red", "pi-ansi-fg-1"],
        ["bright", "pi-ansi-bold pi-ansi-fg-10"],
        [" plain-green", "pi-ansi-fg-10"],
      ],
    );
  });

  test("256-colour and truecolour become rgb() from integers only", () => {
    const d = html("\x1b[38;5;196mA\x1b[48;2;1;2;3mB\x1b[38;5;4mC\x1b[0m");
    const [a, b, c] = d.querySelectorAll("span");
    assert.equal(a.style.color, "rgb(255, 0, 0)");
    assert.equal(b.style.backgroundColor, "rgb(1, 2, 3)");
    assert.equal(c.className, "pi-ansi-fg-4");
    const clamped = html("\x1b[38;2;999;0;300mX");
    assert.equal(clamped.querySelector("span").style.color, "rgb(255, 0, 255)");
    const malformed = html("\x1b[38;2;1;url(javascript:x)mY");
    for (const span of malformed.querySelectorAll("span")) assert.doesNotMatch(span.getAttribute("style") ?? "", /url|javascript/);
  });

  test("other escapes (cursor, OSC title and hyperlinks) are dropped, never links", () => {
    const d = html("\x1b]0;title\x07\x1b[2K\x1b]8;;javascript:alert(1)\x1b\\click\x1b]8;;\x1b\\ done\x1b[?25l");
    assert.equal(d.textContent, "click done");
    assert.equal(d.querySelector("a"), null);
  });

  test("output is text, never markup", () => {
    const d = html("\x1b[31m<img src=x onerror=alert(1)>\x1b[0m<b>bold?</b>");
    assert.equal(d.querySelector("img"), null);
    assert.equal(d.querySelector("b"), null);
    assert.equal(d.textContent, "<img src=x onerror=alert(1)><b>bold?</b>");
  });

  test("carriage returns overwrite the line (progress bars), keeping colour", () => {
    const d = html("\x1b[32m 10%\r 50%\r100%\x1b[0m\r\nnext");
    assert.equal(d.textContent, "100%\nnext");
    assert.equal(d.querySelector("span").className, "pi-ansi-fg-2");
    assert.equal(stripAnsi("\x1b[1mhi\x1b[0m\x07\x00"), "hi");
  });
});

describe("bashExecution renderer", () => {
  async function show(messages, visibility = []) {
    const m = mount(transcript, { messages, visibility, streaming: null, show_hidden: false, title: "", renderers: {} });
    await ready(m.el);
    return messagesOf(m.el);
  }

  test("terminal block: $ command, coloured output, green exit 0", async () => {
    const [, , , , , ok] = await show(session(), VISIBILITY);
    assert.equal(ok.querySelector(".pi-term-cmd").textContent, "$ git status");
    assert.equal(ok.querySelector(".pi-prompt").textContent, "$ ");
    assert.equal(ok.querySelector(".pi-cmd").textContent, "git status");
    const out = ok.querySelector("pre.pi-term-out");
    assert.equal(out.textContent, "On branch main\nnothing to commit");
    assert.equal(out.querySelector("span.pi-ansi-fg-2").textContent, "nothing to commit");
    const exit = ok.querySelector("[data-exit-code]");
    assert.equal(exit.textContent, "exit 0");
    assert.equal(exit.dataset.badge, "ok");
  });

  test("non-zero exit is red; truncated shows the full output path; excluded says not sent", async () => {
    const msgs = await show(session(), VISIBILITY);
    const bad = msgs[6];
    const exit = bad.querySelector("[data-exit-code]");
    assert.equal(exit.textContent, "exit 2");
    assert.equal(exit.dataset.badge, "error");
    assert.equal(bad.querySelector(".pi-term-out .pi-ansi-bold.pi-ansi-fg-1").textContent, "error:");
    const badges = [...bad.querySelectorAll(".pi-badge")].map((b) => b.textContent);
    assert.ok(badges.includes("truncated"));
    assert.ok(badges.includes("not sent to the LLM"));
    assert.equal(bad.dataset.visibility, "ui");
    assert.ok(bad.classList.contains("pi-excluded"));
    assert.equal(bad.querySelector(".pi-fullpath code").textContent, "/tmp/pi-bash-0123456789abcdef.log");
  });

  test("cancelled, no exit code, empty output; excluded but visibility 'both' still badged", async () => {
    const [a, b] = await show(
      [
        { role: "bashExecution", command: "sleep 100", output: "", cancelled: true, truncated: false, timestamp: 1 },
        {
          role: "bashExecution",
          command: "env",
          output: "",
          exitCode: null,
          cancelled: false,
          truncated: false,
          excludeFromContext: true,
          timestamp: 2,
        },
      ],
      ["both", "both"],
    );
    assert.equal(a.querySelector(".pi-term-empty").textContent, "(no output)");
    assert.equal(a.querySelector("[data-badge=warn]").textContent, "cancelled");
    assert.equal(a.querySelector("[data-exit-code]"), null);
    assert.equal(b.querySelector(".pi-term-status [data-badge=neutral]").textContent, "no exit code");
    assert.equal(b.querySelector("[data-badge=ui]").textContent, "not sent to the LLM");
  });

  test("long shell output keeps a head and a tail with colours", async () => {
    const output = Array.from({ length: 5000 }, (_, i) => `\x1b[33m${i}\x1b[0m`).join("\n");
    const [m] = await show([
      { role: "bashExecution", command: "seq", output, exitCode: 0, cancelled: false, truncated: false, timestamp: 1 },
    ]);
    const pre = m.querySelector("pre.pi-term-out");
    assert.equal(pre.querySelectorAll("span.pi-ansi-fg-3").length, 200);
    pre.querySelector("button.pi-show-more").click();
    assert.equal(pre.querySelectorAll("span.pi-ansi-fg-3").length, 5000);
  });
});
