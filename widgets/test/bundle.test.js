// The built files (npm run build → pi_notebook/notebook/static/) are self-contained ES modules that
// anywidget can load: a default export with render(), no imports, nothing fetched from a CDN.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { messagesOf, mount, ready, win } from "./setup.js";
import { session } from "./fixtures.js";

const STATIC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "pi_notebook", "notebook", "static");
const FILES = ["transcript.js", "inspector.js", "pi_notebook.css"];

describe("built bundle", () => {
  test("static files exist (npm run build)", () => {
    for (const f of FILES) assert.ok(existsSync(join(STATIC, f)), `${f} missing: run npm run build`);
  });

  test("no imports and no network: marked and DOMPurify are inside", () => {
    for (const f of ["transcript.js", "inspector.js"]) {
      const src = readFileSync(join(STATIC, f), "utf8");
      assert.doesNotMatch(src, /(^|[;\n])\s*import\s*["'{*]/, `${f} has a static import`);
      assert.doesNotMatch(src, /cdn\.|unpkg|jsdelivr|esm\.sh|skypack/i, `${f} mentions a CDN`);
    }
    const t = readFileSync(join(STATIC, "transcript.js"), "utf8");
    assert.match(t, /DOMPurify/);
    assert.match(t, /marked/i);
  });

  test("css uses JupyterLab variables with fallbacks", () => {
    const css = readFileSync(join(STATIC, "pi_notebook.css"), "utf8");
    for (const v of ["--jp-ui-font-family", "--jp-code-font-family", "--jp-layout-color1", "--jp-border-color1", "--jp-content-font-color1", "--jp-brand-color1", "--jp-error-color1", "--jp-success-color1", "--jp-warn-color1"]) {
      assert.ok(css.includes(v), v);
    }
    assert.doesNotMatch(css, /@import|url\(\s*["']?https?:/);
  });

  test("the built transcript and inspector render with a fake model", async () => {
    const t = await import(pathToFileURL(join(STATIC, "transcript.js")).href);
    assert.equal(typeof t.default.render, "function");
    assert.equal(typeof t.registerRenderer, "function");
    const { el } = mount(t, { messages: session(), visibility: [], streaming: null, show_hidden: true, title: "", renderers: {} });
    await ready(el);
    assert.equal(messagesOf(el).length, session().length);
    const md = document.createElement("div");
    const { el: el2 } = mount(t, {
      messages: [{ role: "user", content: '<img src=x onerror="window.__piPwned=1"> [x](javascript:window.__piPwned=1)' }],
      visibility: [],
      streaming: null,
      show_hidden: false,
      title: "",
      renderers: {},
    });
    await ready(el2);
    assert.equal(el2.querySelector("[onerror]"), null);
    assert.equal(el2.querySelector('a[href^="javascript"]'), null);
    md.remove();
    assert.equal(win.__piPwned, undefined);

    const i = await import(pathToFileURL(join(STATIC, "inspector.js")).href);
    const { el: el3 } = mount(i, { rows: [], requests: {}, provider: "", context_window: 0, total_tokens: 0, model_name: "" });
    assert.ok(el3.querySelector('[data-pane="request"]'));
  });
});
