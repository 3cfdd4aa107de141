// The part of pi_notebook's JupyterLab / Notebook 7 extension that is a plugin, not a renderer: when a notebook
// is about to be saved, the live views in it write their latest state into their outputs' saved form
// (index.js, keepLiveStates), so the file holds what the page shows. Doing it then, rather than after every
// change, keeps a long history from being serialised (and stored in the notebook's model) after each cell.
//
// No token is required: the notebooks are found in the shell (a document widget with a `context` that has a
// `saveState` signal, in JupyterLab and Notebook 7 alike), so the extension needs no @jupyterlab package.
import { keepLiveStates } from "./index.js";

const watched = new WeakSet();

function watch(widget) {
  const context = widget?.context;
  if (!context?.saveState || watched.has(widget)) return;
  watched.add(widget);
  context.saveState.connect((_, state) => {
    if (state === "started") keepLiveStates(widget.node); // before the model is serialised
  });
}

function watchAll(app) {
  for (const widget of app.shell.widgets?.("main") ?? []) watch(widget);
}

export default {
  id: "pi-notebook:keep-live-states",
  description: "Writes the live pi_notebook views' state into their outputs when a notebook is saved.",
  autoStart: true,
  activate: (app) => {
    watchAll(app);
    app.shell.currentChanged?.connect(() => watchAll(app));
    app.shell.layoutModified?.connect(() => watchAll(app));
    app.restored?.then(() => watchAll(app));
  },
};
