// Test harness: a jsdom window as the global DOM (scripts enabled, so a payload that slipped through
// would really run), a fake anywidget model, and helpers to mount a widget and wait for it.
import { JSDOM } from "jsdom";

export const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>", {
  url: "https://notebook.test/lab/tree/demo.ipynb",
  pretendToBeVisual: true,
  runScripts: "dangerously",
});
export const win = dom.window;

globalThis.window = win;
globalThis.document = win.document;
for (const name of ["Node", "Element", "HTMLElement", "DocumentFragment", "Text", "NodeFilter", "getComputedStyle"]) {
  if (!(name in globalThis)) globalThis[name] = win[name];
}
globalThis.requestAnimationFrame = win.requestAnimationFrame.bind(win);
globalThis.cancelAnimationFrame = win.cancelAnimationFrame.bind(win);
if (!("navigator" in globalThis)) globalThis.navigator = win.navigator;

/** The ~15-line fake of anywidget's model: get/set/on/off/save_changes/send with change listeners. */
export function fakeModel(initial = {}) {
  const listeners = new Map();
  return {
    state: { ...initial },
    saves: 0,
    sent: [],
    get(key) {
      return this.state[key];
    },
    set(key, value) {
      this.state[key] = value;
      for (const cb of [...(listeners.get(`change:${key}`) ?? [])]) cb();
    },
    emit(event, ...args) {
      for (const cb of [...(listeners.get(event) ?? [])]) cb(...args);
    },
    on(event, cb) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(cb);
    },
    off(event, cb) {
      if (cb) listeners.get(event)?.delete(cb);
      else listeners.delete(event);
    },
    save_changes() {
      this.saves++;
    },
    send(msg) {
      this.sent.push(msg);
    },
    listenerCount() {
      return [...listeners.values()].reduce((n, s) => n + s.size, 0);
    },
  };
}

/** Render an anywidget module ({default: {initialize, render}}) into a fresh element of the page, as anywidget
 * does: `initialize` once for the model, then `render`. `model.viewListeners()` counts the view's listeners. */
export function mount(widget, state, model = fakeModel(state)) {
  const el = document.createElement("div");
  document.body.appendChild(el);
  if (!model.initialized) {
    model.initialized = true;
    model.dispose = widget.default.initialize?.({ model });
  }
  const base = model.listenerCount();
  model.viewListeners = () => model.listenerCount() - base;
  const cleanup = widget.default.render({ model, el });
  return { model, el, cleanup, root: el.firstElementChild };
}

/** A message from the kernel (anywidget's msg:custom). */
export function kernelSends(model, msg) {
  model.emit("msg:custom", msg);
}

/** Wait until the widget root says data-state="ready" (chunked rendering and frames done). */
export async function ready(el, timeoutMs = 20000) {
  const root = el.firstElementChild ?? el;
  const start = Date.now();
  // One frame first, so a change that schedules work is seen as "rendering".
  await frame();
  while (root.dataset.state !== "ready") {
    if (Date.now() - start > timeoutMs) throw new Error(`widget not ready after ${timeoutMs} ms`);
    await frame();
  }
  return root;
}

export function frame() {
  return new Promise((resolve) => win.requestAnimationFrame(() => resolve()));
}

/** All messages of a transcript, by index. */
export function messagesOf(el) {
  return [...el.querySelectorAll(".pi-list > article.pi-msg")];
}
