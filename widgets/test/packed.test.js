// An export page's packed state (pi_notebook/notebook/packed.py writes it): each text once, references to it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { unpack } from "../src/packed.js";
import { unpack as fromStaticModel } from "../src/static_model.js";

const R = "\ue000";
const long = "a text long enough to be written once as a part";

test("references are replaced by their parts, at any depth, and the state is as it was", () => {
  const message = { role: "user", content: `${R}0`, timestamp: 1 };
  const data = {
    parts: [long, message, { agent: `${R}1`, llm: [`${R}1`], produced_text: "" }],
    state: { transcript: { messages: [`${R}1`] }, inspector: { rows: [`${R}2`], provider: "x" } },
  };
  const state = unpack(data);
  const expected = { role: "user", content: long, timestamp: 1 };
  assert.deepEqual(state, {
    transcript: { messages: [expected] },
    inspector: { rows: [{ agent: expected, llm: [expected], produced_text: "" }], provider: "x" },
  });
  // every object a copy: a view changing its copy changes nothing another view shows
  assert.notEqual(state.transcript.messages[0], state.inspector.rows[0].agent);
  assert.notEqual(state.inspector.rows[0].agent, state.inspector.rows[0].llm[0]);
  assert.equal(fromStaticModel, unpack, "the page loads it with the static model");
});

test("a text part is text even when it starts with the reference mark", () => {
  const data = { parts: [`${R}7 looks like a reference`], state: { a: `${R}0`, b: "plain", c: [1, null, true] } };
  assert.deepEqual(unpack(data), { a: `${R}7 looks like a reference`, b: "plain", c: [1, null, true] });
});

test("a key such as __proto__ stays a plain key", () => {
  const data = JSON.parse(`{"parts": [{"__proto__": {"polluted": true}, "x": 1}], "state": "${R}0"}`);
  const state = unpack(data);
  assert.equal(Object.getPrototypeOf(state), Object.prototype);
  assert.deepEqual(Object.keys(state), ["__proto__", "x"]);
  assert.equal({}.polluted, undefined);
});

test("a part refers only to parts before it; anything else is refused, never looped over", () => {
  assert.throws(() => unpack({ parts: [[`${R}0`]], state: `${R}0` }), /no part 0/);
  assert.throws(() => unpack({ parts: [[`${R}1`], "x"], state: `${R}0` }), /no part 1/);
  assert.throws(() => unpack({ parts: [], state: `${R}0` }), /no part 0/);
  assert.throws(() => unpack({ parts: ["x"], state: `${R}` }), /no part/);
  assert.throws(() => unpack({ parts: ["x"], state: `${R}0x` }), /no part/);
  assert.equal(unpack({ state: "no parts" }), "no parts");
});
