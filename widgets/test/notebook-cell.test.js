// notebookCell (the notebook app's role): drawn as a Jupyter cell in the transcript, and with its pictures (not
// their base64) in the inspector's panes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import { notebookCells, PNG_1PX } from "./fixtures.js";
import * as inspector from "../src/inspector.js";
import { getRenderer } from "../src/registry.js";
import { promptText } from "../src/renderers/notebookCell.js";
import { shortText } from "../src/summary.js";
import * as transcript from "../src/transcript.js";

async function show(messages, visibility = [], extra = {}) {
  const m = mount(transcript, { messages, visibility, streaming: null, show_hidden: false, title: "", renderers: {}, ...extra });
  await ready(m.el);
  return messagesOf(m.el);
}

const cell = (fields) => ({ role: "notebookCell", source: "1 + 1", executionCount: 1, timestamp: 1, ...fields });

describe("notebookCell renderer", () => {
  test("is registered for its role like the built-ins, and labelled", async () => {
    assert.equal(typeof getRenderer("notebookCell"), "function");
    const [failed] = await show(notebookCells());
    assert.equal(failed.dataset.role, "notebookCell");
    assert.equal(failed.querySelector(".pi-role-label").textContent, "notebook cell");
    assert.equal(failed.querySelector(".pi-renderer-error"), null);
    assert.equal(failed.querySelector(".pi-unknown"), null);
  });

  test("a cell: [n]: beside the source, its output, its image and its error with the traceback folded", async () => {
    const [failed] = await show(notebookCells());
    const [input, out] = failed.querySelectorAll(".pi-nbcell-row");
    assert.equal(input.querySelector(".pi-nbcell-prompt").textContent, "[5]:");
    assert.equal(input.querySelector("pre.pi-nbcell-source").textContent, "x = [3, 1, 2]\nplt.plot(x)\nx['a']");
    assert.equal(failed.querySelector(".pi-nbcell").dataset.executionCount, "5");
    assert.equal(out.querySelector("pre.pi-nbcell-stream").textContent, "[<matplotlib.lines.Line2D at 0x7f>]\n");
    const img = out.querySelector(".pi-nbcell-images img");
    assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG_1PX}`);
    assert.ok(img.classList.contains("pi-thumb") && img.classList.contains("pi-nbcell-img"));
    img.dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.ok(img.classList.contains("pi-thumb-large"), "a click enlarges the picture");
    const error = out.querySelector(".pi-nbcell-error");
    assert.equal(error.querySelector(".pi-nbcell-ename").textContent, "TypeError: list indices must be integers or slices, not str");
    assert.equal(error.querySelector(".pi-nbcell-ename-name").textContent, "TypeError");
    const details = error.querySelector("details.pi-nbcell-traceback");
    assert.equal(details.open, false, "the traceback is folded");
    assert.equal(details.querySelector("summary").textContent, "traceback · 5 lines");
    assert.match(details.querySelector("pre.pi-nbcell-tb").textContent, /^Cell In\[5\], line 3\n.*----> 3 x\['a'\]/s);
    // the card is marked as failed, with the exception's name in its header
    assert.ok(failed.classList.contains("pi-is-error"));
    const badge = failed.querySelector('.pi-msg-head [data-badge="error"]');
    assert.equal(badge.textContent, "TypeError");
    // the order of a notebook: output, then the picture, then the error
    const order = [...out.querySelector(".pi-nbcell-outputs").children].map((c) => c.className.split(" ").at(-1));
    assert.deepEqual(order, ["pi-nbcell-stream", "pi-nbcell-images", "pi-nbcell-error"]);
  });

  test("no output says so; no execution count is Jupyter's [ ]:", async () => {
    const [, plain, , cut] = await show(notebookCells());
    assert.equal(plain.querySelector(".pi-nbcell-empty").textContent, "(no output)");
    assert.equal(plain.querySelector(".pi-nbcell-error"), null);
    assert.equal(plain.querySelector(".pi-nbcell-status"), null);
    assert.equal(cut.querySelector(".pi-nbcell-prompt").textContent, "[ ]:");
    assert.equal(promptText(12), "[12]:");
    assert.equal(promptText(undefined), "[ ]:");
    assert.equal(promptText("5"), "[ ]:");
  });

  test("cancelled, truncated with the full output's path as text, and each thing left out on a line", async () => {
    const [, , , cut] = await show(notebookCells());
    const status = cut.querySelector(".pi-nbcell-status");
    const badges = [...status.querySelectorAll(".pi-badge")].map((b) => b.textContent);
    assert.deepEqual(badges, ["cancelled", "truncated"]);
    const path = status.querySelector(".pi-fullpath code");
    assert.equal(path.textContent, "/tmp/pi-cell-5.log");
    assert.equal(cut.querySelector("a"), null, "the path is text, not a link");
    assert.deepEqual(
      [...cut.querySelectorAll(".pi-nbcell-omitted li")].map((li) => li.textContent),
      ["an image/png of 21.3 MB was left out: larger than 4 MB", "3 more images were left out"],
    );
  });

  test("a private cell: the transcript's own badge, dashed, and the role's default visibility when none is given", async () => {
    const given = await show(notebookCells(), ["both", "both", "ui", "both"]);
    const priv = given[2];
    assert.equal(priv.dataset.visibility, "ui");
    assert.equal(priv.querySelector('.pi-msg-head [data-badge="ui"]').textContent, "not sent to the LLM");
    assert.equal(priv.querySelectorAll('[data-badge="ui"]').length, 1, "said once");
    assert.ok(priv.classList.contains("pi-excluded"));
    const defaulted = await show(notebookCells());
    assert.equal(defaulted[2].dataset.visibility, "ui");
    assert.equal(defaulted[0].dataset.visibility, "both");
    // a visibility that says it is sent (a view that computed none) still shows the cell's own word
    const [wrong] = await show([notebookCells()[2]], ["both"]);
    assert.equal(wrong.querySelector('.pi-nbcell-status [data-badge="ui"]').textContent, "not sent to the LLM");
  });

  test("secrets masked: the transcript's one generic badge", async () => {
    const [m] = await show([cell({ output: "key=[masked: OPENAI_API_KEY]\n" })]);
    assert.equal(m.querySelectorAll('[data-badge="masked"]').length, 1);
  });

  test("only PNG and JPEG, only from the base64 data: a URL, SVG or GIF is named, not drawn", async () => {
    const images = [
      { type: "image", data: PNG_1PX, mimeType: "image/jpeg" },
      { type: "image", data: "https://evil.example/leak.png", mimeType: "image/png" },
      { type: "image", data: PNG_1PX, mimeType: "image/svg+xml" },
      { type: "image", data: PNG_1PX, mimeType: "image/gif" },
      { type: "image", data: "", mimeType: "image/png" },
      "not a block",
    ];
    const [m] = await show([cell({ images })]);
    const srcs = [...m.querySelectorAll("img")].map((i) => i.getAttribute("src"));
    assert.deepEqual(srcs, [`data:image/jpeg;base64,${PNG_1PX}`]);
    assert.deepEqual(
      [...m.querySelectorAll(".pi-image-note")].map((n) => n.textContent),
      ["[image image/png not shown]", "[image image/svg+xml not shown]", "[image image/gif not shown]", "[image image/png not shown]"],
    );
  });

  test("compact: 10,000 lines of output and of traceback fold to a head and a tail", async () => {
    const lines = Array.from({ length: 10000 }, (_, i) => `line ${i}`).join("\n");
    const [m] = await show([cell({ source: lines, output: lines, error: { name: "E", value: "", traceback: lines } })]);
    for (const cls of ["pi-nbcell-source", "pi-nbcell-stream", "pi-nbcell-tb"]) {
      const pre = m.querySelector(`pre.${cls}`);
      assert.equal(pre.dataset.truncatedView, "true", cls);
      assert.ok(pre.textContent.split("\n").length < 210, cls);
      assert.ok(pre.querySelector("button.pi-show-more"), cls);
    }
    assert.equal(m.querySelector(".pi-nbcell-ename").textContent, "E", "no value: the name alone");
    assert.equal(m.querySelector(".pi-nbcell-traceback summary").textContent, "traceback · 10,000 lines");
  });

  test("a malformed cell still draws (fields of the wrong type are left out)", async () => {
    const odd = cell({ source: 42, executionCount: "5", output: ["x"], images: "x", error: "boom", omitted: "x", cancelled: "yes" });
    const [m] = await show([odd, cell({ error: { name: 7, traceback: 3 } })]);
    assert.equal(m.querySelector(".pi-renderer-error"), null);
    assert.equal(m.querySelector(".pi-nbcell-prompt").textContent, "[ ]:");
    assert.equal(m.querySelector(".pi-nbcell-empty").textContent, "(no output)");
    assert.equal(m.querySelector(".pi-nbcell-status"), null);
    const [, second] = await show([odd, cell({ error: { name: 7, traceback: 3 } })]);
    assert.equal(second.querySelector(".pi-nbcell-ename").textContent, "Error");
    assert.equal(second.querySelector("details"), null);
  });

  test("a user's own renderer for the role replaces this one", async () => {
    const source = 'export default (m, el, x) => el.appendChild(x.h("b", {class: "mine"}, `cell ${m.executionCount}`));';
    const [m] = await show([cell({ executionCount: 3 })], [], { renderers: { notebookCell: source } });
    assert.equal(m.querySelector("b.mine").textContent, "cell 3");
    assert.equal(m.querySelector(".pi-nbcell"), null);
  });
});

describe("notebookCell in the inspector", () => {
  const [failed] = notebookCells();
  const text = "Ran notebook cell [5]:\n```python\nx = [3, 1, 2]\n```";
  const llm = { role: "user", content: [{ type: "text", text }, failed.images[0]], timestamp: 1 };
  const row = { index: 0, role: "notebookCell", status: "translated", reason: "notebookCell → user", tokens: 900, agent: failed, llm: [llm], produced_text: `${text}\n[image: image/png]` };

  test("its one-line text: [n], the source, the error and the pictures", () => {
    assert.equal(
      shortText(failed),
      "[5] x = [3, 1, 2] plt.plot(x) x['a'] → TypeError: list indices must be integers or slices, not str [1 image]",
    );
    assert.equal(shortText({ role: "notebookCell", source: "s", images: [1, 2], cancelled: true }), "s [2 images] (cancelled)");
  });

  test("a translated row: both panes show the picture as a thumbnail, never its base64", () => {
    const el = mount(inspector, { rows: [row], requests: {}, provider: "", context_window: 1000, total_tokens: 900, model_name: "m" }).el;
    const r = el.querySelector(".pi-insp-row");
    assert.equal(r.dataset.status, "translated");
    assert.equal(r.dataset.role, "notebookCell");
    for (const pane of ["agent", "llm"]) {
      const cellEl = r.querySelector(`[data-pane="${pane}"]`);
      const [img, ...more] = cellEl.querySelectorAll(".pi-insp-images img.pi-thumb");
      assert.equal(more.length, 0, pane);
      assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG_1PX}`, pane);
      assert.ok(!cellEl.textContent.includes(PNG_1PX.slice(0, 20)), `${pane}: no base64 as text`);
    }
    // the text exactly as sent (its line breaks kept), the picture beside it as a thumbnail
    assert.equal(r.querySelector('[data-pane="llm"] .pi-llm-text').textContent, text);
    // a click on a thumbnail enlarges it and leaves the row as it was
    const img = r.querySelector('[data-pane="llm"] img');
    img.dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
    assert.ok(img.classList.contains("pi-thumb-large"));
    assert.equal(r.getAttribute("aria-expanded"), "false");
  });

  test("a dropped private cell shows its picture on the agent's side only", () => {
    const dropped = { ...row, status: "dropped", reason: "excludeFromContext", llm: [], produced_text: "" };
    const el = mount(inspector, { rows: [dropped], requests: {}, provider: "", context_window: 1000, total_tokens: 0, model_name: "m" }).el;
    assert.equal(el.querySelectorAll('[data-pane="agent"] img').length, 1);
    assert.equal(el.querySelectorAll('[data-pane="llm"] img').length, 0);
    assert.equal(el.querySelector('[data-pane="llm"]').textContent, "— not sent —");
  });
});
