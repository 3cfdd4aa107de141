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
import { keepRenderers, savedRenderers, untrustedNote } from "../src/plugins.js";
import { KEPT_EVENT, KINDS, STATE_EVENT, savedState } from "../src/snapshot.js";
import { staticModel } from "../src/static_model.js";
import transcript from "../src/transcript.js";

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const VIEWS = { transcript, inspector };

/** How long a live view may take to appear before the saved form is drawn in its place meanwhile. */
const LIVE_WAIT_MS = 400;
/** A renderer still waiting for the page's widget manager is made again after this, then twice as long... */
const LIVE_RETRY_MS = 500;
const LIVE_RETRIES = 7;

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
    const data = this.model.data[this.mimeType];
    const trusted = this.model.trusted === true;
    const state = savedState(this.kind, data, { trusted });
    const blocked = this.kind === "transcript" && !trusted ? Object.keys(savedRenderers(data)) : [];
    if (blocked.length) el.before(untrustedNote(blocked));
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
    this.startLive(rendermime, 0);
    return true;
  }

  /**
   * A widget renderer for the view, hidden until it shows one. After a page reload the page's widget manager may
   * not exist yet when this output is drawn; a renderer made then waits for it for ever (ipywidgets hands the
   * manager only to renderers that are an output's own child, which this one is not). So while a renderer is
   * still waiting for a manager, it is made again, later each time (LIVE_RETRY_MS, doubled, LIVE_RETRIES times);
   * one that has its manager is kept, however long it takes to draw (it draws the view once the manager has the
   * model).
   */
  startLive(rendermime, attempt) {
    const live = rendermime.createRenderer(WIDGET_VIEW);
    this.live = live;
    live.hide();
    this.layout.addWidget(live);
    // The widget renderer shows "Loading widget..." / "model not found" as text, and the view as a child
    // widget once it has the model (maybe later, when the manager restores saved state).
    const check = () => {
      if (this.live !== live) return;
      const shown = (live.widgets?.length ?? 0) > 0;
      if (shown === this.liveShown) return;
      this.liveShown = shown;
      live.setHidden(!shown);
      if (shown) {
        this.cleanup?.(); // the saved form, if it was drawn meanwhile, goes: one view of the history per output
        this.cleanup = null;
        this.saved.node.replaceChildren();
        tell();
      }
      this.saved.setHidden(shown);
    };
    // The views in it, once each: their latest state is written here when the notebook is saved (keepState,
    // flush). A view may mark itself (data-pi-state) after its widget is attached (anywidget renders later).
    const told = new WeakSet();
    const tell = () => {
      for (const view of live.node.querySelectorAll("[data-pi-state]")) {
        if (told.has(view)) continue;
        told.add(view);
        view.dispatchEvent(new CustomEvent(KEPT_EVENT));
      }
    };
    this.observer?.disconnect();
    this.observer = new MutationObserver(check);
    this.observer.observe(live.node, { childList: true });
    this.marks?.disconnect();
    this.marks = new MutationObserver(() => this.liveShown && this.live === live && tell());
    this.marks.observe(live.node, { subtree: true, attributes: true, attributeFilter: ["data-pi-state"] });
    live.renderModel(this.model).then(
      () => {
        check();
        if (!this.liveShown) this.drawSaved(); // no such model (yet): the saved form meanwhile
      },
      () => this.drawSaved(),
    );
    // ipywidgets' renderer resolves this once it has the page's widget manager (a renderer of another make, or
    // another version without it, is never made again).
    const waiting = live._manager?.promise;
    let managed = !waiting;
    waiting?.then(() => (managed = true));
    if (attempt >= LIVE_RETRIES) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (managed || this.liveShown || this.isDisposed || this.live !== live) return;
      live.dispose(); // (its parent's layout lets it go: removing it from the layout as well would remove another)
      this.startLive(rendermime, attempt + 1);
    }, LIVE_RETRY_MS * 2 ** attempt);
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
      const next = keepRenderers(this.model.data[this.mimeType], take()); // (a plugin's, not the notebook's own)
      this.model.setData({ data: { ...this.model.data, [this.mimeType]: next } });
    }
  }

  dispose() {
    if (this.isDisposed) return;
    PENDING.delete(this);
    clearTimeout(this.fallback);
    clearTimeout(this.retry);
    this.node.removeEventListener(STATE_EVENT, this.onState);
    this.observer?.disconnect();
    this.marks?.disconnect();
    this.cleanup?.();
    super.dispose();
  }
}

function factory(kind) {
  return {
    safe: true, // the views escape and sanitise everything; nothing in the data is run unless trusted (plugins.js)
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
