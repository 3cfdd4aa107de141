// The compare view's and the what-if pane's line diff is jsdiff's (the `diff` package Pi uses), bundled by esbuild:
// src/diff.js keeps only the cut of the common head and tail, the edit budget and the side-by-side / unified forms.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { diffArrays } from "diff";
import { diffLines } from "../src/diff.js";

function rng(seed) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}

/** jsdiff's own script for a and b, in diffLines' form. */
function jsdiffOps(a, b) {
  const ops = [];
  let i = 0;
  let j = 0;
  for (const part of diffArrays(a, b)) {
    for (let k = 0; k < part.count; k++) {
      if (part.added) ops.push({ op: "add", a: -1, b: j++ });
      else if (part.removed) ops.push({ op: "del", a: i++, b: -1 });
      else ops.push({ op: "same", a: i++, b: j++ });
    }
  }
  return ops;
}

describe("the line diff is jsdiff's", () => {
  test("the same script as jsdiff on random bodies", () => {
    const r = rng(11);
    for (let round = 0; round < 400; round++) {
      const line = () => ["{", "}", '  "a": 1,', '  "b": 2,', "  ]"][Math.floor(r() * 5)];
      // Different first and last lines: no common head or tail for diffLines to cut before jsdiff runs.
      const a = ["left", ...Array.from({ length: Math.floor(r() * 20) }, line), "left end"];
      const b = ["right", ...Array.from({ length: Math.floor(r() * 20) }, line), "right end"];
      assert.deepEqual(diffLines(a, b), jsdiffOps(a, b), `${JSON.stringify(a)} → ${JSON.stringify(b)}`);
    }
  });

  test("it is a devDependency bundled into the inspector, not fetched", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    assert.ok(pkg.devDependencies.diff, "diff in devDependencies");
    const bundle = readFileSync(new URL("../../pi_notebook/notebook/static/inspector.js", import.meta.url), "utf8");
    assert.match(bundle, /oneChangePerToken/); // an option only jsdiff's Myers reads
    assert.doesNotMatch(bundle, /from\s*["']diff/); // inlined: no import left for a CDN or a loader to resolve
  });
});
