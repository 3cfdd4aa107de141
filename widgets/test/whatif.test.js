// The inspector's what-if preview, compare view and compaction marks, as a user sees them (jsdom).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dom, kernelSends, mount } from "./setup.js";
import { session } from "./fixtures.js";
import * as inspector from "../src/inspector.js";
import { savedState, snapshot } from "../src/snapshot.js";
import { staticModel } from "../src/static_model.js";

const msgs = session();
const bashText = "Ran `git status`\n```\nOn branch main\nnothing to commit\n```";
const asUser = (text, timestamp) => ({ role: "user", content: [{ type: "text", text }], timestamp });

function rows() {
  return [
    { index: 1, role: "user", status: "passed", reason: "", tokens: 12, agent: msgs[1], llm: [msgs[1]] },
    { index: 5, role: "bashExecution", status: "translated", reason: "bashExecution → user text", tokens: 20,
      agent: msgs[5], llm: [asUser(bashText, 5)], produced_text: bashText },
    { index: 6, role: "bashExecution", status: "dropped", reason: "excludeFromContext", tokens: 0, agent: msgs[6], llm: [] },
    { index: 7, role: "custom", status: "translated", reason: "custom → user", tokens: 4, agent: msgs[7],
      llm: [asUser("TODO list updated", 7)] },
    { index: null, role: "user", status: "injected", reason: "added by transform_context", tokens: 9, agent: null,
      llm: [asUser("Today is Monday.", 9)] },
  ];
}

function body(withBash) {
  const messages = [{ role: "user", content: [{ type: "text", text: "List the files, *please*." }] }];
  if (withBash) messages.push({ role: "user", content: [{ type: "text", text: bashText }] });
  messages.push({ role: "user", content: [{ type: "text", text: "TODO list updated" }] });
  return { model: "claude-sonnet-4-5", messages, stream: true };
}

const requests = () => ({
  anthropic: body(true),
  openai: { model: "gpt-5-mini", input: [{ role: "user", content: "List the files, *please*." }], stream: true },
});

function state(extra = {}) {
  return { rows: rows(), requests: requests(), provider: "anthropic", context_window: 200000, total_tokens: 45,
    model_name: "anthropic/claude-sonnet-4-5", ...extra };
}

const show = (extra) => mount(inspector, state(extra));

const rowEl = (el, index) => el.querySelector(`.pi-insp-row[data-index="${index}"]`);
const click = (node) => node.dispatchEvent(new dom.window.MouseEvent("click", { bubbles: true }));

/** The preview the kernel would send for "exclude #5": that row dropped, its text gone from the body. */
function excludeResult(id) {
  const after = rows();
  after[1] = { ...after[1], status: "dropped", reason: "excludeFromContext (%bash!): shown, never sent", tokens: 0,
    agent: { ...msgs[5], excludeFromContext: true }, llm: [], produced_text: "", whatIf: "exclude" };
  return { pi: "what_if_result", id, ok: true, rows: after, total_tokens: 25, notes: [],
    requests: { anthropic: body(false), openai: requests().openai } };
}

describe("what if, per row", () => {
  test("each stored row offers the toggles its role allows; an injected row none", () => {
    const { el } = show();
    const kinds = (i) => [...rowEl(el, i).querySelectorAll("button.pi-whatif-toggle")].map((b) => b.dataset.whatif);
    assert.deepEqual(kinds(1), ["drop"]);
    assert.deepEqual(kinds(5), ["exclude", "drop"]);
    assert.deepEqual(kinds(6), ["include", "drop"]); // already excluded (!!): the toggle sends it again
    assert.deepEqual(kinds(7), ["show", "drop"]); // display: false
    assert.equal(rowEl(el, "i4").querySelector(".pi-whatif-controls"), null);
    assert.equal(rowEl(el, 5).querySelector('[data-whatif="exclude"]').textContent, "exclude (!!)");
  });

  test("a toggle asks the kernel for a preview, without expanding the row", () => {
    const { el, model } = show();
    click(rowEl(el, 5).querySelector('[data-whatif="exclude"]'));
    const [msg] = model.sent.filter((m) => m.pi === "what_if");
    assert.deepEqual(msg.changes, { exclude: [5] });
    assert.equal(typeof msg.id, "string");
    assert.equal(rowEl(el, 5).getAttribute("aria-expanded"), "false");
    assert.equal(el.firstElementChild.dataset.whatif, "pending");
    assert.equal(rowEl(el, 5).querySelector('[data-whatif="exclude"]').getAttribute("aria-pressed"), "true");
    const banner = el.querySelector(".pi-whatif-banner");
    assert.equal(banner.hidden, false);
    assert.match(banner.textContent, /Preview — nothing stored.*exclude #5/);
    // a second toggle adds to the changes
    click(rowEl(el, 1).querySelector('[data-whatif="drop"]'));
    assert.deepEqual(model.sent.filter((m) => m.pi === "what_if").at(-1).changes, { exclude: [5], drop: [1] });
  });

  test("the result shows the changed LLM pane and request lines, highlighted, under the banner; reset restores", () => {
    const { el, model } = show();
    const before = el.querySelector(".pi-request-json").textContent;
    click(rowEl(el, 5).querySelector('[data-whatif="exclude"]'));
    kernelSends(model, excludeResult(model.sent.at(-1).id));

    const root = el.firstElementChild;
    assert.equal(root.dataset.whatif, "preview");
    const row = rowEl(el, 5);
    assert.equal(row.dataset.status, "dropped");
    assert.equal(row.dataset.diff, "removed");
    const llm = row.querySelector('[data-pane="llm"]');
    assert.ok(llm.classList.contains("pi-diff-removed"));
    assert.match(llm.querySelector(".pi-diff-label").textContent, /no longer sent/);
    assert.match(llm.querySelector("del.pi-diff-old").textContent, /Ran `git status`/);
    assert.match(row.textContent, /what if: exclude/);
    assert.equal(rowEl(el, 1).dataset.diff, undefined); // unchanged rows are not marked
    // the toggles still say what is stored: the same button turns the change off again
    const toggle = row.querySelector("button.pi-whatif-toggle");
    assert.equal(toggle.dataset.whatif, "exclude");
    assert.equal(toggle.getAttribute("aria-pressed"), "true");
    // the request pane: the preview's body, the removed lines struck out and marked
    const pre = el.querySelector(".pi-request-json");
    const removed = [...pre.querySelectorAll("del.pi-diff-del")].map((d) => d.textContent).join("");
    assert.match(removed, /Ran `git status`/);
    assert.equal(pre.querySelectorAll("ins.pi-diff-add").length, 0);
    assert.match(el.querySelector(".pi-whatif-banner").textContent, /~25 tokens \(now ~45\)/);

    click(el.querySelector('[data-control="whatif-reset"]'));
    assert.equal(root.dataset.whatif, "off");
    assert.equal(el.querySelector(".pi-whatif-banner").hidden, true);
    assert.equal(rowEl(el, 5).dataset.status, "translated");
    assert.equal(rowEl(el, 5).dataset.diff, undefined);
    assert.equal(el.querySelector(".pi-request-json").textContent, before);
    assert.equal(el.querySelectorAll('[aria-pressed="true"]').length, 0);
    assert.equal(model.get("rows")[1].status, "translated"); // the model was never changed
  });

  test("added and edited lines are marked too; toggling the change off again is a reset", () => {
    const { el, model } = show();
    click(rowEl(el, 6).querySelector('[data-whatif="include"]'));
    const after = rows();
    after[2] = { ...after[2], status: "translated", llm: [asUser("Ran `make`", 6)], whatIf: "include" };
    const changed = body(true);
    changed.messages[0].content[0].text = "List the files, please.";
    changed.messages.push({ role: "user", content: [{ type: "text", text: "Ran `make`" }] });
    kernelSends(model, { pi: "what_if_result", id: model.sent.at(-1).id, ok: true, rows: after, total_tokens: 50,
      notes: [], requests: { anthropic: changed, openai: requests().openai } });
    assert.equal(rowEl(el, 6).dataset.diff, "added");
    assert.match(rowEl(el, 6).querySelector('[data-pane="llm"]').textContent, /\+ would be sent.*Ran `make`/);
    const pre = el.querySelector(".pi-request-json");
    assert.ok([...pre.querySelectorAll("ins.pi-diff-change")].some((n) => n.textContent.includes("please.")));
    assert.ok([...pre.querySelectorAll("del.pi-diff-change")].some((n) => n.textContent.includes("*please*")));
    assert.ok([...pre.querySelectorAll("ins.pi-diff-add:not(.pi-diff-change)")].some((n) => n.textContent.includes("make")));
    click(rowEl(el, 6).querySelector('[data-whatif="include"]'));
    assert.equal(el.firstElementChild.dataset.whatif, "off");
    assert.equal(rowEl(el, 6).dataset.status, "dropped");
  });

  test("an error is shown in the banner; a reply to another view or an older request is ignored", () => {
    const { el, model } = show();
    click(rowEl(el, 5).querySelector('[data-whatif="drop"]'));
    const id = model.sent.at(-1).id;
    kernelSends(model, excludeResult("someone-else:1"));
    assert.equal(el.firstElementChild.dataset.whatif, "pending");
    kernelSends(model, { pi: "what_if_result", id, ok: false, error: "ValueError: no such message" });
    assert.equal(el.firstElementChild.dataset.whatif, "error");
    assert.match(el.querySelector(".pi-whatif-banner").textContent, /drop #5: ValueError: no such message/);
  });

  test("the kernel's new rows while previewing ask for the preview again", () => {
    const { el, model } = show();
    click(rowEl(el, 5).querySelector('[data-whatif="exclude"]'));
    kernelSends(model, excludeResult(model.sent.at(-1).id));
    const asked = model.sent.filter((m) => m.pi === "what_if").length;
    model.set("rows", [...rows(), { index: 8, role: "user", status: "passed", reason: "", tokens: 1, agent: msgs[13], llm: [msgs[13]] }]);
    const again = model.sent.filter((m) => m.pi === "what_if");
    assert.equal(again.length, asked + 1);
    assert.deepEqual(again.at(-1).changes, { exclude: [5] });
  });

  test("without a kernel (saved notebook, exported page) the controls are disabled and say why", () => {
    const sent = [];
    const el = document.createElement("div");
    document.body.appendChild(el);
    inspector.default.render({ model: staticModel(state(), { onSend: (m) => sent.push(m) }), el });
    assert.equal(el.firstElementChild.dataset.whatif, "no-kernel");
    const toggles = [...el.querySelectorAll("button.pi-whatif-toggle")];
    assert.ok(toggles.length >= 4);
    for (const b of toggles) {
      assert.equal(b.disabled, true);
      assert.match(b.title, /needs the kernel/);
    }
    click(toggles[0]);
    assert.deepEqual(sent, []);
  });
});

describe("compare", () => {
  test("two providers side by side, diffed line by line", () => {
    const { el } = show();
    const section = el.querySelector('[data-pane="compare"]');
    assert.equal(section.hidden, true);
    click(el.querySelector('[data-control="compare"]'));
    assert.equal(section.hidden, false);
    assert.equal(el.querySelector('[data-control="compare-left"]').value, "now:anthropic");
    assert.equal(el.querySelector('[data-control="compare-right"]').value, "now:openai");
    const kinds = [...section.querySelectorAll(".pi-cmp-row")].map((r) => r.dataset.kind);
    assert.ok(kinds.includes("same") && kinds.some((k) => k !== "same"));
    const changed = section.querySelector('.pi-cmp-row[data-kind="change"]');
    assert.match(changed.querySelector(".pi-cmp-left").textContent, /claude-sonnet-4-5/);
    assert.match(changed.querySelector(".pi-cmp-right").textContent, /gpt-5-mini/);
    assert.match(section.querySelector(".pi-compare-stats").textContent, /\+\d+ −\d+ ~\d+ lines/);
    // pick the same body on both sides: nothing differs
    const right = el.querySelector('[data-control="compare-right"]');
    right.value = "now:anthropic";
    right.dispatchEvent(new dom.window.Event("change"));
    assert.ok([...section.querySelectorAll(".pi-cmp-row")].every((r) => r.dataset.kind === "same"));
    assert.match(section.querySelector(".pi-compare-stats").textContent, /\+0 −0 ~0/);
  });

  test("after the pipeline changed (a converter, a transform_context): before the change against now", () => {
    const { el, model } = show();
    click(el.querySelector('[data-control="compare"]'));
    const before = requests();
    const now = structuredClone(before);
    now.anthropic.messages.pop(); // the new pipeline sends one message less
    model.set("requests", now);
    model.set("requests_before", before);
    assert.equal(el.querySelector('[data-control="compare-left"]').value, "before:anthropic");
    assert.equal(el.querySelector('[data-control="compare-right"]').value, "now:anthropic");
    assert.ok(el.querySelectorAll('.pi-cmp-row[data-kind="del"]').length > 0);
    assert.equal(el.querySelectorAll('.pi-cmp-row[data-kind="add"]').length, 0);
    const labels = [...el.querySelector('[data-control="compare-left"]').options].map((o) => o.textContent);
    assert.ok(labels.includes("before the change · openai"));
  });

  test("before / after the what-if", () => {
    const { el, model } = show();
    click(el.querySelector('[data-control="compare"]'));
    click(rowEl(el, 5).querySelector('[data-whatif="exclude"]'));
    kernelSends(model, excludeResult(model.sent.at(-1).id));
    assert.equal(el.querySelector('[data-control="compare-left"]').value, "now:anthropic");
    assert.equal(el.querySelector('[data-control="compare-right"]').value, "whatif:anthropic");
    const dels = [...el.querySelectorAll('.pi-cmp-row[data-kind="del"] .pi-cmp-left')].map((n) => n.textContent);
    assert.ok(dels.some((t) => t.includes("Ran `git status`")));
    assert.equal(el.querySelectorAll('.pi-cmp-row[data-kind="add"]').length, 0);
  });
});

describe("compaction marks", () => {
  const compaction = { threshold: 150000, cut: 6, summarise: [1, 5], enabled: true };

  test("the threshold on the gauge, the cut line, the rows that would be summarised", () => {
    const { el } = show({ compaction });
    const mark = el.querySelector(".pi-gauge-threshold");
    assert.equal(parseFloat(mark.style.left), 75);
    assert.match(mark.title, /150,000 tokens/);
    assert.match(el.querySelector('[data-figure="compaction"]').textContent, /compacts at ~150,000 tokens; it would keep #6 on/);
    const cut = el.querySelectorAll(".pi-cut-line");
    assert.equal(cut.length, 1);
    assert.equal(cut[0].closest(".pi-insp-row").dataset.index, "6");
    const marked = [...el.querySelectorAll('.pi-insp-row[data-would-summarise="true"]')].map((r) => r.dataset.index);
    assert.deepEqual(marked, ["1", "5"]);
    assert.match(rowEl(el, 5).textContent, /would be summarised/);
  });

  test("no trait, no marks; a change of the trait redraws them", () => {
    const { el, model } = show();
    assert.equal(el.querySelector(".pi-gauge-threshold, .pi-cut-line, .pi-would-summarise"), null);
    assert.equal(el.querySelector('[data-figure="compaction"]'), null);
    model.set("compaction", { ...compaction, cut: 7, summarise: [1], enabled: false });
    assert.equal(el.querySelector(".pi-cut-line").closest(".pi-insp-row").dataset.index, "7");
    assert.equal(el.querySelector(".pi-gauge-threshold").dataset.enabled, "false");
    model.set("compaction", null);
    assert.equal(el.querySelector(".pi-gauge-threshold, .pi-cut-line, .pi-would-summarise"), null);
  });

  test("when the cut moves, only the rows whose marks changed are drawn again", () => {
    const { el, model } = show({ compaction: { ...compaction, cut: 5, summarise: [1, 2, 3, 4] } });
    const kept = rowEl(el, 1);
    const moved = rowEl(el, 5);
    model.set("compaction", { ...compaction, cut: 6, summarise: [1, 2, 3, 4, 5] });
    assert.equal(rowEl(el, 1), kept, "an unchanged row keeps its element");
    assert.notEqual(rowEl(el, 5), moved);
    assert.match(rowEl(el, 5).textContent, /would be summarised/);
    assert.equal(el.querySelectorAll(".pi-cut-line").length, 1);
    assert.equal(el.querySelector(".pi-cut-line").closest(".pi-insp-row").dataset.index, "6");
    const marked = [...el.querySelectorAll('.pi-insp-row[data-would-summarise="true"]')].map((r) => r.dataset.index);
    assert.deepEqual(marked, ["1", "5"]); // the rows this history has (2 to 4 are not in it)
  });

  test("a compaction summary row expands to the messages it replaced", () => {
    const summary = { index: 0, role: "compactionSummary", status: "translated", reason: "summary", tokens: 40,
      agent: msgs[0], llm: [asUser("The conversation history before this point...", 1)],
      covered: [msgs[1], msgs[2], { role: "bashExecution", command: "ls", output: "x", exitCode: 0 }] };
    const { el } = show({ rows: [summary, ...rows()] });
    const details = rowEl(el, 0).querySelector("details.pi-covered");
    assert.equal(details.querySelector("summary").textContent, "3 messages it replaced");
    assert.equal(details.open, false);
    const items = [...details.querySelectorAll("li")].map((li) => li.textContent);
    assert.match(items[0], /^user/);
    assert.match(items[2], /^bashExecution/);
    click(details.querySelector("summary"));
    assert.equal(rowEl(el, 0).getAttribute("aria-expanded"), "false"); // the row did not toggle
  });

  test("a saved inspector keeps them (the saved form holds the trait)", () => {
    const live = show({ compaction });
    const saved = savedState("inspector", JSON.parse(JSON.stringify(snapshot("inspector", live.model))));
    assert.deepEqual(saved.compaction, compaction);
    const el = document.createElement("div");
    document.body.appendChild(el);
    inspector.default.render({ model: staticModel(saved), el });
    assert.equal(el.querySelector(".pi-cut-line").closest(".pi-insp-row").dataset.index, "6");
    assert.ok(el.querySelector(".pi-gauge-threshold"));
  });

  test("nothing to summarise: no cut line", () => {
    const { el } = show({ compaction: { threshold: 150000, cut: 1, summarise: [], enabled: true } });
    assert.equal(el.querySelector(".pi-cut-line"), null);
    assert.ok(el.querySelector(".pi-gauge-threshold"));
  });
});
