// Bundle the widgets into pi_notebook/notebook/static/: transcript.js, inspector.js (ES modules with
// marked + DOMPurify inside: nothing is fetched at runtime), pi_notebook.css, and the approval prompt
// (approval.js, approval.css).
//   node build.mjs            one build
//   node build.mjs --watch    rebuild on change
import { mkdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "pi_notebook", "notebook", "static");
const watch = process.argv.includes("--watch");

// [output name, source]: each built as static/<name>.<js|css>.
const entries = [
  ["transcript", "transcript.js"],
  ["inspector", "inspector.js"],
  ["static_model", "static_model.js"],
  ["pi_notebook", "pi_notebook.css"],
  ["approval", "approval.js"], // the approval prompt, with its own stylesheet below
  ["approval", "approval.css"],
];

const options = {
  entryPoints: entries.map(([out, source]) => ({ in: join(here, "src", source), out })),
  outdir,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  minify: true,
  legalComments: "eof", // keep the MIT / Apache-2.0 notices of marked and DOMPurify
  sourcemap: false,
  logLevel: "warning",
};

mkdirSync(outdir, { recursive: true });
if (watch) {
  const ctx = await esbuild.context({ ...options, logLevel: "info" });
  await ctx.watch();
} else {
  await esbuild.build(options);
  for (const [out, source] of entries) {
    const file = join(outdir, out + source.slice(source.lastIndexOf(".")));
    console.log(`${relative(process.cwd(), file)}  ${(statSync(file).size / 1024).toFixed(1)} KiB`);
  }
}
