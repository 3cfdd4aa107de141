// Bundle the widgets into pi_notebook/notebook/static/: transcript.js, inspector.js (ES modules with
// marked + DOMPurify inside: nothing is fetched at runtime) and pi_notebook.css.
//   node build.mjs            one build
//   node build.mjs --watch    rebuild on change
import { mkdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "pi_notebook", "notebook", "static");
const watch = process.argv.includes("--watch");

const options = {
  entryPoints: {
    transcript: join(here, "src", "transcript.js"),
    inspector: join(here, "src", "inspector.js"),
    static_model: join(here, "src", "static_model.js"),
    pi_notebook: join(here, "src", "pi_notebook.css"),
  },
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
  for (const name of ["transcript.js", "inspector.js", "static_model.js", "pi_notebook.css"]) {
    const file = join(outdir, name);
    console.log(`${relative(process.cwd(), file)}  ${(statSync(file).size / 1024).toFixed(1)} KiB`);
  }
}
