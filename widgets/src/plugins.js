// An installed plugin's renderers in a saved output. The kernel registers a plugin's renderer (the ES module its
// package ships) with `saved=True` (pi_notebook/notebook/plugins.py): the live widget gets it in its `renderers`
// trait, and a finished cell's saved form carries those of the roles it shows, as `renderers: {role: source}`.
// The saved form is data anyone can write into a notebook, so the JupyterLab extension runs them only when the
// output is trusted (JupyterLab's rule for an output's HTML and scripts: the user ran it, or trusted the notebook);
// otherwise those roles get the generic view and one note says why. An exported page carries them in its state.

/** Role → source of the renderers a saved transcript carries (strings only; anything else is ignored). */
export function savedRenderers(data) {
  const given = data !== null && typeof data === "object" ? data.renderers : null;
  if (given === null || typeof given !== "object" || Array.isArray(given)) return {};
  const out = {};
  for (const [role, source] of Object.entries(given)) {
    if (role && typeof source === "string" && source.trim()) out[role] = source;
  }
  return out;
}

/** The saved form a live view writes back (snapshot.js) with the renderers of the form it replaces: the live
 * model's `renderers` also hold those registered by hand in the notebook, which a saved form never carries. */
export function keepRenderers(previous, next) {
  const renderers = savedRenderers(previous);
  const out = { ...next };
  delete out.renderers;
  return Object.keys(renderers).length ? { ...out, renderers } : out;
}

/** The line shown above a saved transcript of an untrusted notebook whose plugin renderers were not run. */
export function untrustedNote(roles, doc = document) {
  const note = doc.createElement("div");
  note.className = "pi-renderers-untrusted pi-quiet";
  note.dataset.untrustedRenderers = roles.join(",");
  note.textContent =
    `This notebook is not trusted: the renderer${roles.length === 1 ? "" : "s"} saved with it for ` +
    `${roles.join(", ")} did not run (a generic view instead). Trust the notebook to run them.`;
  return note;
}
