// The kernel-less model the saved-notebook renderer and the HTML export hand to the views.
import assert from "node:assert/strict";
import { test } from "node:test";
import { staticModel } from "../src/static_model.js";

test("get returns the state; set changes a copy and fires change:<key> then change", () => {
  const state = { provider: "anthropic", rows: [1] };
  const model = staticModel(state);
  const seen = [];
  model.on("change:provider", (_m, value) => seen.push(["provider", value]));
  model.on("change", () => seen.push(["any"]));
  model.set("provider", "openai");
  model.set("provider", "openai"); // unchanged: no event
  assert.deepEqual(seen, [["provider", "openai"], ["any"]]);
  assert.equal(model.get("provider"), "openai");
  assert.equal(state.provider, "anthropic", "the caller's object is not changed");
});

test("off removes one listener or all; send goes to onSend and nowhere else", () => {
  const sent = [];
  const model = staticModel({ a: 1 }, { onSend: (c) => sent.push(c) });
  let calls = 0;
  const fn = () => calls++;
  model.on("change:a change:b", fn);
  model.off("change:a", fn);
  model.set("a", 2);
  model.set("b", 3);
  assert.equal(calls, 1);
  model.off();
  model.set("b", 4);
  assert.equal(calls, 1);
  model.save_changes();
  model.send({ pi: "provider", value: "google" });
  assert.deepEqual(sent, [{ pi: "provider", value: "google" }]);
  assert.deepEqual(model.snapshot(), { a: 2, b: 4 });
});
