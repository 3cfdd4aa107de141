// A line diff for the inspector's what-if preview and its compare view: jsdiff's Myers ("An O(ND) Difference
// Algorithm and Its Variations", 1986), the `diff` package Pi uses for its edit tool's diffs, run on lines as small
// integers. The common head and tail are cut first, so a small change in a long request body costs its length, not
// its square; past a budget of edits the middle is reported as replaced whole (a correct diff, not a minimal one)
// so two unrelated bodies never freeze the page.
import { diffArrays } from "diff/lib/diff/array.js"; // (the array diff alone: not the whole library in the bundle)

const MAX_EDITS = 2000; // edit distance explored before giving up on a minimal middle

/**
 * The edit script from `a` to `b` (arrays of strings): [{op: "same" | "del" | "add", a, b}] in order, `a` / `b` the
 * line numbers (0-based) in each; -1 where the line is not in that side.
 */
export function diffLines(a, b, { maxEdits = MAX_EDITS } = {}) {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops = [];
  for (let i = 0; i < head; i++) ops.push({ op: "same", a: i, b: i });
  // Lines as small integers: the diff compares numbers, not strings.
  const ids = new Map();
  const idOf = (line) => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const middle = diffArrays(a.slice(head, endA).map(idOf), b.slice(head, endB).map(idOf), { maxEditLength: maxEdits });
  if (middle) {
    let i = head;
    let j = head;
    for (const part of middle) {
      for (let k = 0; k < part.count; k++) {
        if (part.added) ops.push({ op: "add", a: -1, b: j++ });
        else if (part.removed) ops.push({ op: "del", a: i++, b: -1 });
        else ops.push({ op: "same", a: i++, b: j++ });
      }
    }
  } else {
    for (let i = head; i < endA; i++) ops.push({ op: "del", a: i, b: -1 });
    for (let j = head; j < endB; j++) ops.push({ op: "add", a: -1, b: j });
  }
  for (let i = endA, j = endB; i < a.length; i++, j++) ops.push({ op: "same", a: i, b: j });
  return ops;
}

/**
 * Rows of a side-by-side view: {kind: "same" | "del" | "add" | "change", a, b} with the line numbers of each side
 * (-1: nothing on that side). Deleted and added lines between the same two unchanged lines pair up as "change".
 */
export function sideBySide(ops) {
  const rows = [];
  let dels = [];
  let adds = [];
  const flush = () => {
    const pairs = Math.min(dels.length, adds.length);
    for (let i = 0; i < pairs; i++) rows.push({ kind: "change", a: dels[i], b: adds[i] });
    for (const a of dels.slice(pairs)) rows.push({ kind: "del", a, b: -1 });
    for (const b of adds.slice(pairs)) rows.push({ kind: "add", a: -1, b });
    dels = [];
    adds = [];
  };
  for (const o of ops) {
    if (o.op === "del") dels.push(o.a);
    else if (o.op === "add") adds.push(o.b);
    else {
      flush();
      rows.push({ kind: "same", a: o.a, b: o.b });
    }
  }
  flush();
  return rows;
}

/** Counts of a diff's lines: {added, removed, changed} (changed: pairs of a removed and an added line). */
export function diffStats(rows) {
  const out = { added: 0, removed: 0, changed: 0 };
  for (const r of rows) {
    if (r.kind === "add") out.added++;
    else if (r.kind === "del") out.removed++;
    else if (r.kind === "change") out.changed++;
  }
  return out;
}

/**
 * The unified form for one pane: [{kind: "same" | "del" | "add", changed, line}] in order; `changed` is true for
 * removed and added lines of the same hunk (the line was edited), false for lines only added or only removed.
 */
export function unified(ops, a, b) {
  const out = [];
  let hunk = [];
  const flush = () => {
    const both = hunk.some((o) => o.op === "del") && hunk.some((o) => o.op === "add");
    for (const o of hunk.filter((o) => o.op === "del")) out.push({ kind: "del", changed: both, line: a[o.a] });
    for (const o of hunk.filter((o) => o.op === "add")) out.push({ kind: "add", changed: both, line: b[o.b] });
    hunk = [];
  };
  for (const o of ops) {
    if (o.op === "same") {
      flush();
      out.push({ kind: "same", changed: false, line: a[o.a] });
    } else hunk.push(o);
  }
  flush();
  return out;
}
