// A stand-in for an anywidget model, made from a plain state object: what the transcript and the inspector
// views need (get / set / on / off / save_changes / send) when there is no kernel — a saved notebook's MIME
// output, or an exported HTML page. `set` changes the local copy and fires `change:<key>` as a widget model
// does, so view controls (show hidden, provider, filters) keep working; nothing is sent anywhere. An exported
// page's state comes packed, each text once: `unpack` (packed.js) gives it back as the views take it.

export { unpack } from "./packed.js";

/**
 * @param {Record<string, unknown>} state the widget's synced traits, e.g. {messages, visibility, title}
 * @param {{onSend?: (content: unknown) => void}} [options] `onSend` receives what a view would send to the kernel
 */
export function staticModel(state, options = {}) {
  const values = { ...state };
  const listeners = new Map();
  const fire = (event, ...args) => {
    for (const fn of [...(listeners.get(event) || [])]) fn(...args);
  };
  return {
    get: (key) => values[key],
    set(key, value) {
      if (values[key] === value) return;
      values[key] = value;
      fire(`change:${key}`, this, value);
      fire("change", this);
    },
    on(event, fn) {
      for (const name of String(event).split(/\s+/).filter(Boolean)) {
        if (!listeners.has(name)) listeners.set(name, new Set());
        listeners.get(name).add(fn);
      }
    },
    off(event, fn) {
      if (event === undefined) return listeners.clear();
      for (const name of String(event).split(/\s+/).filter(Boolean)) {
        if (fn === undefined) listeners.delete(name);
        else listeners.get(name)?.delete(fn);
      }
    },
    save_changes() {},
    send(content) {
      options.onSend?.(content);
    },
    /** Not part of anywidget's API: the current values, for a caller that re-renders. */
    snapshot: () => ({ ...values }),
  };
}
