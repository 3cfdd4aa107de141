// Compare: two request bodies side by side, diffed line by line — two providers, or a body before and after the
// what-if preview. Opened by the request pane's "compare" button; a section under the rows and the request pane.
// Works without a kernel too (the bodies are in the state).
import { diffLines, diffStats, sideBySide } from "./diff.js";
import { h, prettyJson } from "./dom.js";

const CONTEXT = 3; // unchanged lines kept around a change; longer unchanged runs fold
const MAX_ROWS = 4000; // rows drawn at most (two unrelated long bodies differ on every line)

export class Compare {
  /** @param model the widget model; @param whatif the view's WhatIf (its preview's bodies are offered too) */
  constructor(model, whatif) {
    this.model = model;
    this.whatif = whatif;
    this.open = false;
    this.picked = false; // the user chose the sides: keep them
    this.button = h(
      "button",
      { type: "button", class: "pi-compare-toggle", dataset: { control: "compare" }, "aria-expanded": "false" },
      "compare",
    );
    const select = (side) =>
      h("select", { class: "pi-compare-pick", dataset: { control: `compare-${side}` }, "aria-label": `${side} body` });
    this.left = select("left");
    this.right = select("right");
    this.stats = h("span", { class: "pi-compare-stats pi-quiet" });
    this.grid = h("div", { class: "pi-compare-grid", role: "table", "aria-label": "request bodies compared" });
    this.section = h(
      "section",
      { class: "pi-insp-compare", dataset: { pane: "compare" }, hidden: true },
      h("div", { class: "pi-pane-head" }, h("span", null, "compare "), this.left, h("span", null, " with "), this.right, this.stats),
      this.grid,
    );
    this.button.addEventListener("click", () => this.toggle());
    for (const s of [this.left, this.right]) {
      s.addEventListener("change", () => {
        this.picked = true;
        this.render();
      });
    }
  }

  toggle(open = !this.open) {
    this.open = open;
    this.section.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (open) this.render();
  }

  /** The bodies on offer: value → {label, text()}. */
  sources() {
    const requests = this.model.get("requests");
    const names = requests && typeof requests === "object" ? Object.keys(requests) : [];
    const out = new Map();
    for (const n of names) out.set(`now:${n}`, { label: n, text: () => prettyJson(requests[n]) ?? "" });
    const before = this.model.get("requests_before");
    for (const n of Object.keys(before && typeof before === "object" ? before : {})) {
      out.set(`before:${n}`, { label: `before the change · ${n}`, text: () => prettyJson(before[n]) ?? "" });
    }
    const preview = this.whatif.preview?.requests ?? {};
    for (const n of Object.keys(preview)) {
      out.set(`whatif:${n}`, { label: `what if · ${n}`, text: () => prettyJson(preview[n]) ?? "" });
    }
    return out;
  }

  /** The preview came or went: offer "before / after" unless the user picked the sides. */
  previewChanged() {
    this.picked = false;
    if (this.open) this.render();
  }

  render() {
    if (!this.open) return;
    const sources = this.sources();
    const keys = [...sources.keys()];
    const shown = this.model.get("provider");
    const first = keys.includes(`now:${shown}`) ? `now:${shown}` : keys[0];
    let left = this.left.value;
    let right = this.right.value;
    if (!this.picked || !sources.has(left) || !sources.has(right)) {
      // A preview: now against what if. A changed pipeline: before the change against now. Else two providers.
      const changed = !this.whatif.preview && sources.has(`before:${shown}`);
      left = changed ? `before:${shown}` : first;
      const after = this.whatif.preview ? `whatif:${shown}` : changed ? first : "";
      right = sources.has(after) ? after : (keys.find((k) => k !== first && k.startsWith("now:")) ?? first);
    }
    for (const [s, value] of [
      [this.left, left],
      [this.right, right],
    ]) {
      s.textContent = "";
      for (const [k, src] of sources) s.appendChild(h("option", { value: k }, src.label));
      s.value = value ?? "";
    }
    this.grid.textContent = "";
    if (!left || !right) {
      this.stats.textContent = "(no request built yet)";
      return;
    }
    const a = sources.get(left).text().split("\n");
    const b = sources.get(right).text().split("\n");
    const rows = sideBySide(diffLines(a, b));
    const st = diffStats(rows);
    this.stats.textContent = ` +${st.added} −${st.removed} ~${st.changed} lines`;
    this.grid.dataset.added = st.added;
    this.grid.dataset.removed = st.removed;
    this.grid.dataset.changed = st.changed;
    this.draw(rows, a, b);
  }

  draw(rows, a, b) {
    const line = (r) =>
      h(
        "div",
        { class: "pi-cmp-row", dataset: { kind: r.kind }, role: "row" },
        h("span", { class: "pi-cmp-ln" }, r.a < 0 ? "" : String(r.a + 1)),
        h("span", { class: "pi-cmp-text pi-cmp-left" }, r.a < 0 ? "" : a[r.a]),
        h("span", { class: "pi-cmp-ln" }, r.b < 0 ? "" : String(r.b + 1)),
        h("span", { class: "pi-cmp-text pi-cmp-right" }, r.b < 0 ? "" : b[r.b]),
      );
    let drawn = 0;
    let i = 0;
    while (i < rows.length && drawn < MAX_ROWS) {
      let end = i;
      while (end < rows.length && rows[end].kind === "same") end++;
      const head = i === 0 ? 0 : CONTEXT;
      const tail = end === rows.length ? 0 : CONTEXT;
      if (end - i > head + tail + 2) {
        for (const r of rows.slice(i, i + head)) this.grid.appendChild(line(r));
        const hidden = rows.slice(i + head, end - tail);
        const fold = h("button", { type: "button", class: "pi-diff-fold" }, `⋯ ${hidden.length} unchanged lines`);
        fold.addEventListener("click", () => fold.replaceWith(...hidden.map(line)));
        this.grid.appendChild(fold);
        for (const r of rows.slice(end - tail, end)) this.grid.appendChild(line(r));
        drawn += head + tail + 1;
        i = end;
        continue;
      }
      if (end === i) end = i + 1; // a changed row
      for (const r of rows.slice(i, end)) this.grid.appendChild(line(r));
      drawn += end - i;
      i = end;
    }
    if (i < rows.length) {
      this.grid.appendChild(h("div", { class: "pi-quiet pi-cmp-cut" }, `… ${rows.length - i} more lines not drawn`));
    }
  }
}
