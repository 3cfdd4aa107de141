// Live updates that carry only what changed. The kernel sends custom comm messages ({pi: "delta", ...}); the
// widget's `initialize` applies them to the model with `model.set` (local: nothing goes back to the kernel, and
// every view hears the usual change events), so the model always holds the whole state and a saved notebook
// holds it too. A delta that does not fit what the model holds (a message missed) asks the kernel for the whole
// state ({pi: "resync"}), which comes back as {pi: "state", ...}.

export class PatchError extends Error {}

function isObject(v) {
  return v !== null && typeof v === "object";
}

/** A shallow copy of an object or array. */
function copy(v) {
  return Array.isArray(v) ? v.slice() : { ...v };
}

/**
 * Apply the edits of `json_patch` (Python) to `root` and return the new value; `root` is not changed (the
 * path to each edit is copied, everything else is shared, so unchanged parts stay identical). Edits:
 * ["a", path, text, at] appends text to the string at path (which must be `at` long); ["s", path, value] sets a
 * key or an index (at most one past the end); ["t", path, n] cuts a list to n items; ["d", path] deletes a key.
 * Throws PatchError when an edit does not fit.
 */
export function applyPatch(root, ops) {
  if (!Array.isArray(ops)) throw new PatchError("not a list of edits");
  let out = root;
  const copied = new WeakSet();
  const own = (v) => {
    if (!isObject(v)) throw new PatchError("not an object or a list");
    if (copied.has(v)) return v;
    const c = copy(v);
    copied.add(c);
    return c;
  };
  for (const op of ops) {
    if (!Array.isArray(op) || !Array.isArray(op[1])) throw new PatchError("malformed edit");
    const [kind, path] = op;
    if (path.length === 0) {
      if (kind === "s") out = op[2];
      else if (kind === "a" && typeof out === "string" && out.length === op[3]) out += String(op[2]);
      else if (kind === "t" && Array.isArray(out) && out.length >= op[2]) out = out.slice(0, op[2]);
      else throw new PatchError(`edit ${kind} does not fit the value`);
      continue;
    }
    out = own(out);
    let parent = out;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i];
      if (!isObject(parent) || !(key in parent)) throw new PatchError(`no ${path.slice(0, i + 1).join(".")}`);
      parent[key] = own(parent[key]);
      parent = parent[key];
    }
    const last = path[path.length - 1];
    if (!isObject(parent)) throw new PatchError(`no ${path.join(".")}`);
    if (kind === "s") {
      if (Array.isArray(parent) && !(Number.isInteger(last) && last >= 0 && last <= parent.length)) {
        throw new PatchError(`index ${last} out of range`);
      }
      parent[last] = op[2];
    } else if (kind === "a") {
      const current = parent[last];
      if (typeof current !== "string" || current.length !== op[3]) throw new PatchError(`${path.join(".")}: not ${op[3]} characters`);
      parent[last] = current + String(op[2]);
    } else if (kind === "t") {
      const list = parent[last];
      if (!Array.isArray(list) || list.length < op[2]) throw new PatchError(`${path.join(".")}: not a list to cut`);
      parent[last] = list.slice(0, op[2]);
    } else if (kind === "d") {
      if (Array.isArray(parent)) throw new PatchError("cannot delete from a list");
      delete parent[last];
    } else {
      throw new PatchError(`unknown edit ${kind}`);
    }
  }
  return out;
}

/** Replace `list[at:]` with `items`, checking the list is `len` long; a new array (the model sees a change). */
export function spliceList(list, at, len, items) {
  const current = Array.isArray(list) ? list : [];
  if (current.length !== len || !Number.isInteger(at) || at < 0 || at > len || !Array.isArray(items)) {
    throw new PatchError(`expected ${len} items, have ${current.length}`);
  }
  return current.slice(0, at).concat(items);
}

/**
 * Follow the kernel's deltas on `model`: `apply(msg, get)` returns {trait: newValue} (or throws PatchError);
 * the new values are set on the model. `keys` are the traits a {pi: "state"} message may carry. Returns the
 * function that stops following.
 */
export function followDeltas(model, keys, apply) {
  let waiting = false; // a resync was asked for: deltas are skipped until the whole state is back
  const onMsg = (msg) => {
    if (!isObject(msg)) return;
    if (msg.pi === "state") {
      waiting = false;
      for (const key of keys) if (key in msg) model.set(key, msg[key]);
      return;
    }
    if (msg.pi !== "delta" || waiting) return;
    let changes;
    try {
      changes = apply(msg, (key) => model.get(key));
    } catch (err) {
      if (!(err instanceof PatchError)) throw err;
      waiting = true;
      model.send({ pi: "resync", why: err.message });
      return;
    }
    for (const [key, value] of Object.entries(changes)) model.set(key, value);
  };
  model.on("msg:custom", onMsg);
  return () => model.off("msg:custom", onMsg);
}
