// One renderer per role. Built-ins register through the same public call users use.
//
// A renderer is `render(message, el, helpers)`: it fills `el` (the message body) from the Pi JSON
// `message`. `helpers` (see transcript.js `makeHelpers`) gives safe builders: h, text, markdown, json,
// content, output, ansi, badge, the message header, tool-call links, and the message's visibility.

const renderers = new Map();

/** Register (or replace) the renderer of a role. Returns a function that restores the previous one. */
export function registerRenderer(role, render) {
  if (typeof role !== "string" || !role) throw new TypeError("registerRenderer: role must be a non-empty string");
  if (typeof render !== "function") throw new TypeError("registerRenderer: render must be a function");
  const previous = renderers.get(role);
  renderers.set(role, render);
  return () => {
    if (previous) renderers.set(role, previous);
    else renderers.delete(role);
  };
}

/** The renderer registered for `role`, or undefined. */
export function getRenderer(role) {
  return renderers.get(role);
}

/** Roles with a registered renderer. */
export function registeredRoles() {
  return [...renderers.keys()];
}
