// The data of an export page, each text once (pi_notebook/notebook/packed.py writes it): {parts, state}, where a
// string that starts with U+E000 is a reference to parts[n] (n: the digits after it). A part is a text (the
// string itself: never a reference, even when it starts with U+E000) or an object or list, which may hold
// references to earlier parts. `unpack` gives back the state the views draw: every object and list a fresh copy
// (no view can change what another shows), every string shared (strings cannot change).

const REF = 0xe000;

/**
 * The state a page's packed data holds, with every reference replaced by its part.
 * @param {{parts: unknown[], state: unknown}} data
 */
export function unpack(data) {
  const parts = Array.isArray(data?.parts) ? data.parts : [];
  // A part refers only to parts before it (Python writes them so): a page that did otherwise could not loop.
  const resolve = (value, below) => {
    if (typeof value === "string") {
      if (value.charCodeAt(0) !== REF) return value;
      const digits = value.slice(1);
      const index = /^[0-9]{1,9}$/.test(digits) ? Number(digits) : -1;
      if (index < 0 || index >= below) throw new Error(`no part ${digits} here`);
      const part = parts[index];
      return typeof part === "string" ? part : resolve(part, index);
    }
    if (Array.isArray(value)) return value.map((item) => resolve(item, below));
    if (value !== null && typeof value === "object") {
      // fromEntries defines own properties: a key such as "__proto__" stays a plain key, as JSON.parse made it
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, below)]));
    }
    return value;
  };
  return resolve(data?.state, parts.length);
}
