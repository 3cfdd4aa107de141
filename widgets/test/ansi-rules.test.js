// The widgets' terminal-code rules (src/ansi.js) against the cases the Python side is held to
// (tests/coding_agent/tools/test_ansi_rules.py): what is dropped is the same in the live tail, the transcript and
// the recorded output.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import "./setup.js";
import { ansiToFragment, stripAnsi } from "../src/ansi.js";

const CASES = JSON.parse(readFileSync(new URL("./ansi_cases.json", import.meta.url), "utf8"));

describe("terminal codes: the same rules as the Python side", () => {
  for (const c of CASES) {
    test(c.name, () => {
      assert.equal(stripAnsi(c.input), c.text);
      const div = document.createElement("div");
      div.appendChild(ansiToFragment(c.input));
      assert.equal(div.textContent, c.text);
      assert.equal(div.querySelector("*:not(span)"), null); // text and spans only: never markup from the text
    });
  }
});
