// pi_notebook's JupyterLab / Notebook 7 extension (prebuilt, shipped in the wheel): MIME renderers for the saved
// form of a transcript and of an inspector (src/snapshot.js), drawn by the same views as the live widgets over
// a kernel-less model (src/static_model.js). The views' stylesheet is this extension's style: once per page.
//
// An output may hold a widget view too (an inspector while it is open, pi_notebook.show): when the notebook is
// trusted and the page's widget manager has that model (a kernel is running it, or its state was saved), the
// live view is shown, and its latest state is written into this output's saved form when the notebook is saved
// (plugin.js: a long history's JSON is serialised once per save, not after every change); otherwise (no kernel,
// an untrusted notebook, a model long gone) the saved form is drawn.
import { PanelLayout, Widget } from "@lumino/widgets";
import inspector from "../src/inspector.js";
import { KEPT_EVENT, KINDS, STATE_EVENT, savedState } from "../src/snapshot.js";
import { staticModel } from "../src/static_model.js";
import transcript from "../src/transcript.js";

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const VIEWS = { transcript, inspector };

/** How long a live view may take to appear before the saved form is drawn in its place meanwhile. */
const LIVE_WAIT_MS = 400;

/** The renderers showing a live view whose state changed since it was last written into their output. */
const PENDING = new Set();

/** Write the pending live states of the outputs inside `root` (a notebook being saved) into those outputs. */
export function keepLiveStates(root) {
  for (const renderer of [...PENDING]) {
    if (renderer.isDisposed) PENDING.delete(renderer);
    else if (!root || root.contains(renderer.node)) renderer.flush();
  }
}

/** The rendermime registry of the output area holding `widget` (a notebook's: it has the widget renderer). */
function rendermimeOf(widget) {
  for (let w = widget.parent; w; w = w.parent) {
    if (w.rendermime && typeof w.rendermime.getFactory === "function") return w.rendermime;
  }
  return null;
}

class SavedRenderer extends Widget {
  constructor(options, kind) {
    super();
    this.kind = kind;
    this.mimeType = options.mimeType;
    this.addClass("pi-notebook-saved");
    this.node.dataset.piSaved = kind;
    this.layout = new PanelLayout();
    this.saved = new Widget();
    this.layout.addWidget(this.saved);
    this.model = null;
    this.cleanup = null;
    this.live = null;
    this.liveShown = false;
    this.onState = (event) => this.keepState(event);
    this.node.addEventListener(STATE_EVENT, this.onState);
  }

  async renderModel(model) {
    this.model = model;
    if (this.liveShown) return; // the live view shows the newest state; new saved data came from it
    if (this.isAttached) this.present();
  }

  onAfterAttach(msg) {
    super.onAfterAttach(msg);
    if (this.model) this.present();
  }

  /** The live view if it can be had, else (or until it comes) the saved form. */
  present() {
    if (this.tryLive()) {
      // Drawing the saved form too would double a long history's DOM: only if the live view is slow to come.
      clearTimeout(this.fallback);
      this.fallback = setTimeout(() => this.liveShown || this.drawSaved(), LIVE_WAIT_MS);
    } else if (!this.live) {
      this.drawSaved();
    }
  }

  drawSaved() {
    this.cleanup?.();
    const el = document.createElement("div");
    this.saved.node.replaceChildren(el);
    const state = savedState(this.kind, this.model.data[this.mimeType]);
    const stop = VIEWS[this.kind].render({ model: staticModel(state), el });
    this.cleanup = typeof stop === "function" ? stop : null;
    this.saved.setHidden(this.liveShown);
  }

  /** Show the widget view instead, if the notebook is trusted and the page's widget manager has its model.
   * True when a live view is (or is being) made. */
  tryLive() {
    const model = this.model;
    if (this.live) return true;
    if (!model || !model.trusted || !(WIDGET_VIEW in model.data)) return false;
    const rendermime = rendermimeOf(this);
    if (!rendermime || !rendermime.getFactory(WIDGET_VIEW)) return false;
    const live = rendermime.createRenderer(WIDGET_VIEW);
    this.live = live;
    live.hide();
    this.layout.addWidget(live);
    // The widget renderer shows "Loading widget..." / "model not found" as text, and the view as a child
    // widget once it has the model (maybe later, when the manager restores saved state).
    const check = () => {
      const shown = (live.widgets?.length ?? 0) > 0;
      if (shown === this.liveShown) return;
      this.liveShown = shown;
      live.setHidden(!shown);
      if (shown) {
        this.cleanup?.(); // the saved form, if it was drawn meanwhile, goes: one view of the history per output
        this.cleanup = null;
        this.saved.node.replaceChildren();
        // The views in it: their latest state is written here when the notebook is saved (keepState, flush).
        const views = live.node.querySelectorAll("[data-pi-state]");
        for (const view of views) view.dispatchEvent(new CustomEvent(KEPT_EVENT));
      }
      this.saved.setHidden(shown);
    };
    this.observer = new MutationObserver(check);
    this.observer.observe(live.node, { childList: true });
    live.renderModel(model).then(() => {
      check();
      if (!this.liveShown) this.drawSaved(); // no such model (yet): the saved form meanwhile
    }, () => this.drawSaved());
    return true;
  }

  /** The live view's state changed: remember how to take it; it is written when the notebook is saved. */
  keepState(event) {
    const detail = event.detail;
    if (!this.liveShown || !detail || detail.kind !== this.kind || !this.model?.setData) return;
    event.stopPropagation();
    this.pending = detail.snapshot;
    PENDING.add(this);
  }

  /** Write the live view's latest state into this output's saved form (before the notebook is saved). */
  flush() {
    PENDING.delete(this);
    const take = this.pending;
    this.pending = null;
    if (take && this.model?.setData && !this.isDisposed) {
      this.model.setData({ data: { ...this.model.data, [this.mimeType]: take() } });
    }
  }

  dispose() {
    if (this.isDisposed) return;
    PENDING.delete(this);
    clearTimeout(this.fallback);
    this.node.removeEventListener(STATE_EVENT, this.onState);
    this.observer?.disconnect();
    this.cleanup?.();
    super.dispose();
  }
}

function factory(kind) {
  return {
    safe: true, // the views escape and sanitise everything; nothing in the data is run
    mimeTypes: [KINDS[kind].mime],
    createRenderer: (options) => new SavedRenderer(options, kind),
  };
}

// Ranked before the widget view (-10) and text/html: a bundle holding both is drawn here.
const extensions = ["transcript", "inspector"].map((kind) => ({
  id: `pi-notebook:${kind}`,
  name: `pi_notebook ${kind}`,
  rendererFactory: factory(kind),
  rank: -20,
  dataType: "json",
}));

export default extensions;
