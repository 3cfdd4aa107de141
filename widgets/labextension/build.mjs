// Build the JupyterLab extension (index.js + the views in ../src) with @jupyterlab/builder, as
// `jupyter labextension build` would, into ../../pi_notebook/labextension/ (git-ignored; the wheel installs it
// to share/jupyter/labextensions/pi-notebook). The core's shared packages come from @jupyterlab/core-meta (npm),
// so no JupyterLab is needed to build: pip's isolated build environment has none.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const core = mkdtempSync(join(tmpdir(), "pi-notebook-core-"));
try {
  copyFileSync(require.resolve("@jupyterlab/core-meta/core.package.json"), join(core, "package.json"));
  const builder = require.resolve("@jupyterlab/builder/lib/build-labextension.js");
  const args = [builder, "--core-path", core, ...process.argv.slice(2), here];
  const run = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  if (run.status !== 0) process.exit(run.status ?? 1);
  // webpack leaves an unchanged file alone: date what build_hook.py compares, so it sees a fresh build.
  const out = join(here, "..", "..", "pi_notebook", "labextension");
  const now = new Date();
  for (const file of ["package.json", join("static", "style.js")]) utimesSync(join(out, file), now, now);
  console.log("pi_notebook/labextension  (JupyterLab extension pi-notebook)");
} finally {
  rmSync(core, { recursive: true, force: true });
}
