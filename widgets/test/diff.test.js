import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { diffLines, diffStats, sideBySide, unified } from "../src/diff.js";

/** Rebuild both sides from the script: every line of a and of b exactly once, in order. */
function check(a, b, ops) {
  assert.deepEqual(ops.filter((o) => o.op !== "add").map((o) => a[o.a]), a);
  assert.deepEqual(ops.filter((o) => o.op !== "del").map((o) => b[o.b]), b);
  for (const o of ops) if (o.op === "same") assert.equal(a[o.a], b[o.b]);
}

function lcs(a, b) {
  const t = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  return t[0][0];
}

function rng(seed) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}

describe("diffLines (Myers)", () => {
  test("edge cases: empty sides, equal, all different", () => {
    assert.deepEqual(diffLines([], []), []);
    assert.deepEqual(diffLines(["a"], []), [{ op: "del", a: 0, b: -1 }]);
    assert.deepEqual(diffLines([], ["a"]), [{ op: "add", a: -1, b: 0 }]);
    assert.deepEqual(diffLines(["a", "b"], ["a", "b"]).map((o) => o.op), ["same", "same"]);
    assert.deepEqual(diffLines(["a"], ["b"]).map((o) => o.op).sort(), ["add", "del"]);
  });

  test("a line removed in the middle of a JSON body is one deletion", () => {
    const a = ["{", '  "messages": [', '    "one",', '    "two",', '    "three"', "  ]", "}"];
    const b = a.filter((l) => !l.includes("two"));
    const ops = diffLines(a, b);
    check(a, b, ops);
    assert.deepEqual(ops.filter((o) => o.op !== "same"), [{ op: "del", a: 3, b: -1 }]);
  });

  test("minimal on random inputs: edits = n + m - 2·LCS, and the script rebuilds both sides", () => {
    const r = rng(7);
    for (let round = 0; round < 300; round++) {
      const a = Array.from({ length: Math.floor(r() * 12) }, () => "abcd"[Math.floor(r() * 4)]);
      const b = Array.from({ length: Math.floor(r() * 12) }, () => "abcd"[Math.floor(r() * 4)]);
      const ops = diffLines(a, b);
      check(a, b, ops);
      assert.equal(ops.filter((o) => o.op !== "same").length, a.length + b.length - 2 * lcs(a, b), `${a} → ${b}`);
    }
  });

  test("past the edit budget the middle is replaced whole, still a correct script", () => {
    const a = Array.from({ length: 50 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 50 }, (_, i) => `b${i}`);
    const ops = diffLines(["head", ...a, "tail"], ["head", ...b, "tail"], { maxEdits: 10 });
    check(["head", ...a, "tail"], ["head", ...b, "tail"], ops);
    assert.equal(ops.filter((o) => o.op === "del").length, 50);
  });

  test("a small change in 200,000 lines is quick", () => {
    const a = Array.from({ length: 200000 }, (_, i) => `line ${i}`);
    const b = [...a];
    b.splice(100000, 1, "edited");
    const t0 = performance.now();
    const ops = diffLines(a, b);
    assert.ok(performance.now() - t0 < 1500);
    assert.equal(ops.filter((o) => o.op !== "same").length, 2);
  });

  test("two unrelated 20,000-line bodies finish (budget), not hang", () => {
    const a = Array.from({ length: 20000 }, (_, i) => `x${i}`);
    const b = Array.from({ length: 20000 }, (_, i) => `y${i}`);
    const t0 = performance.now();
    check(a, b, diffLines(a, b));
    assert.ok(performance.now() - t0 < 5000);
  });
});

describe("side by side and unified", () => {
  test("removed + added lines of one hunk pair up as changed", () => {
    const a = ["same", "old 1", "old 2", "gone", "end"];
    const b = ["same", "new 1", "new 2", "end", "added"];
    const rows = sideBySide(diffLines(a, b));
    assert.deepEqual(diffStats(rows), { added: 1, removed: 1, changed: 2 });
    assert.equal(rows[0].kind, "same");
    assert.deepEqual(rows.at(-1), { kind: "add", a: -1, b: 4 });
    const u = unified(diffLines(a, b), a, b);
    assert.deepEqual(
      u.map((l) => `${l.kind}${l.changed ? "*" : ""} ${l.line}`),
      ["same same", "del* old 1", "del* old 2", "del* gone", "add* new 1", "add* new 2", "same end", "add added"],
    );
  });
});
