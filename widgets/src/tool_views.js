// Tool views: how the transcript draws one tool's calls and results, registered by tool name (as renderers are by
// role). A view is optional on either side: `call(block, x)` returns the call's card (in the assistant message),
// `result(message, el, x)` fills the result's body; a tool without a view gets the generic cards.

const views = new Map();

/** Register (or replace) the view of tool `name`: `{ call, result }`. Returns a function restoring the previous. */
export function registerToolView(name, view) {
  if (typeof name !== "string" || !name) throw new TypeError("registerToolView: name must be a non-empty string");
  const { call, result } = view ?? {};
  if ((call !== undefined && typeof call !== "function") || (result !== undefined && typeof result !== "function")) {
    throw new TypeError("registerToolView: call and result must be functions");
  }
  const previous = views.get(name);
  views.set(name, { call, result });
  return () => {
    if (previous) views.set(name, previous);
    else views.delete(name);
  };
}

/** The view registered for tool `name`, or undefined. */
export function toolView(name) {
  return typeof name === "string" ? views.get(name) : undefined;
}
