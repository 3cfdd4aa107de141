// The saved form (src/snapshot.js): what the JupyterLab extension draws from a saved output, and what a live
// view writes back into it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { announceState, KEPT_EVENT, KINDS, savedState, snapshot, STATE_EVENT } from "../src/snapshot.js";
import { staticModel } from "../src/static_model.js";
import transcript from "../src/transcript.js";
import { messagesOf, ready, win } from "./setup.js";

const user = { role: "user", content: "hi <b>there</b>", timestamp: 1 };
const bash = { role: "bashExecution", command: "ls", output: "a", exitCode: 0, excludeFromContext: true, timestamp: 2 };

test("a saved transcript (one JSON line per message, visibility by index) draws every message", async () => {
  const data = { version: 1, title: "Run", messages: [JSON.stringify(user), JSON.stringify(bash)], visibility: { 1: "ui" } };
  const state = savedState("transcript", data);
  assert.deepEqual(state.visibility, ["both", "ui"]);
  assert.deepEqual(state.renderers, {}, "no custom renderer comes from a saved output");
  const el = win.document.createElement("div");
  win.document.body.appendChild(el);
  transcript.render({ model: staticModel(state), el });
  await ready(el);
  assert.deepEqual(messagesOf(el).map((a) => a.dataset.role), ["user", "bashExecution"]);
  assert.equal(el.querySelector("article[data-role=bashExecution]").dataset.visibility, "ui");
  assert.equal(el.querySelector("script, [onerror]"), null);
});

test("malformed data falls back to defaults, never throws", () => {
  assert.deepEqual(savedState("inspector", null).rows, []);
  const state = savedState("inspector", { rows: "nope", provider: 3, notes: ["n"] });
  assert.deepEqual([state.rows, state.provider, state.notes], [[], "", ["n"]]);
  const t = savedState("transcript", { messages: ["{not json", JSON.stringify(user)] });
  assert.equal(t.messages.length, 2);
});

test("snapshot writes what savedState reads; a live change is announced once the model is quiet", async () => {
  const model = staticModel({ ...KINDS.transcript.defaults, messages: [user, bash], visibility: ["both", "ui"], title: "T" });
  const saved = snapshot("transcript", model);
  assert.deepEqual(savedState("transcript", saved).messages, [user, bash]);
  assert.deepEqual(saved.visibility, { 1: "ui" });
  const el = win.document.createElement("div");
  const seen = [];
  el.addEventListener(STATE_EVENT, (e) => seen.push(e.detail.snapshot()));
  const stop = announceState(el, "transcript", model);
  model.set("title", "T2");
  model.set("title", "T3");
  await new Promise((r) => setTimeout(r, 1000));
  stop();
  assert.equal(seen.length, 1);
  assert.equal(seen[0].title, "T3");
});

test("a view told that the page keeps its saved form tells its kernel, once", () => {
  const sent = [];
  const model = staticModel({ rows: [] }, { onSend: (content) => sent.push(content) });
  const el = win.document.createElement("div");
  const stop = announceState(el, "inspector", model);
  assert.equal(el.dataset.piState, "inspector", "the saved output finds the views inside it by this mark");
  el.dispatchEvent(new win.CustomEvent(KEPT_EVENT));
  el.dispatchEvent(new win.CustomEvent(KEPT_EVENT));
  stop();
  assert.deepEqual(sent, [{ pi: "page_keeps_state" }]);
});
