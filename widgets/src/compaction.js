// Compaction made visible in the inspector, from the optional `compaction` trait:
// {threshold: tokens, cut: index of the first message Pi would keep if compaction ran now (or null),
//  summarise: [indices of the messages that would be summarised], enabled: bool}
// and, on compactionSummary rows, `covered`: the Pi JSON messages the summary replaced. Draws a marker on the
// token gauge at the threshold, a cut line above the row at `cut`, a "would be summarised" mark on those rows, and
// lets a summary row expand to the messages it covers. No trait (an older kernel, a saved notebook): nothing.
import { badge, fmtInt, h } from "./dom.js";
import { shortText } from "./summary.js";

/** The trait checked: null when absent or malformed; else {threshold, cut, summarise: Set, enabled}. */
export function compactionOf(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const threshold = Number.isFinite(value.threshold) && value.threshold > 0 ? value.threshold : 0;
  const cut = Number.isInteger(value.cut) ? value.cut : null;
  const summarise = new Set(Array.isArray(value.summarise) ? value.summarise.filter(Number.isInteger) : []);
  return { threshold, cut, summarise, enabled: value.enabled !== false };
}

/** The threshold marker on the gauge's bar (made once, moved or hidden after). */
export function drawThreshold(bar, compaction, contextWindow) {
  let mark = bar.querySelector(":scope > .pi-gauge-threshold");
  const show = !!compaction?.threshold && contextWindow > 0;
  if (!show) {
    mark?.remove();
    return;
  }
  if (!mark) {
    mark = h("div", { class: "pi-gauge-threshold", dataset: { figure: "threshold" } });
    bar.appendChild(mark);
  }
  const pct = Math.min(100, Math.max(0, (compaction.threshold / contextWindow) * 100));
  mark.style.left = `${pct.toFixed(1)}%`;
  mark.dataset.enabled = String(compaction.enabled);
  mark.title = `compaction threshold: ${fmtInt(compaction.threshold)} tokens${compaction.enabled ? "" : " (auto-compaction off)"}`;
}

/** A short text for the header: where the next compaction would cut, or "". */
export function compactionText(compaction) {
  if (!compaction?.threshold) return "";
  const off = compaction.enabled ? "" : " (auto-compaction off)";
  const cut = compaction.cut === null || !compaction.summarise.size ? "" : `; it would keep #${compaction.cut} on`;
  return `compacts at ~${fmtInt(compaction.threshold)} tokens${off}${cut}`;
}

/** Mark one drawn row: the cut line above it, "would be summarised", and a summary's covered messages. */
export function decorateRow(el, row, compaction, agentCell, statusCell) {
  const index = Number.isInteger(row?.index) ? row.index : null;
  if (compaction && index !== null && index === compaction.cut && compaction.summarise.size) {
    el.dataset.cut = "before";
    el.prepend(
      h(
        "div",
        { class: "pi-cut-line", role: "separator", dataset: { enabled: String(compaction.enabled) } },
        h("span", null, "✂ compaction would cut here: the rows above are summarised, this one and those below kept"),
      ),
    );
  }
  if (compaction && index !== null && compaction.summarise.has(index)) {
    el.dataset.wouldSummarise = "true";
    el.classList.add("pi-would-summarise");
    statusCell.appendChild(badge("would be summarised", "warn", "the next compaction would replace it by a summary"));
  }
  const covered = Array.isArray(row?.covered) ? row.covered : [];
  if (row?.role !== "compactionSummary" || !covered.length) return;
  const noun = covered.length === 1 ? "message" : "messages";
  const details = h(
    "details",
    { class: "pi-covered", dataset: { covered: covered.length } },
    h("summary", null, `${covered.length} ${noun} it replaced`),
    h(
      "ol",
      null,
      covered.map((m) =>
        h("li", null, h("span", { class: "pi-role-tag" }, String(m?.role ?? "(no role)")), " ", shortText(m, 200)),
      ),
    ),
  );
  details.addEventListener("click", (ev) => ev.stopPropagation()); // not the row's expand toggle
  agentCell.appendChild(details);
}

/**
 * The inspector's compaction marks moved (each new message moves the cut a little): draw again only the rows
 * whose marks changed, so that a long history is not redrawn after every cell. `view` is the InspectorView
 * (items, shown, vlist, marks: what its drawn rows are marked with, renderRow, redrawRows).
 */
export function compactionChanged(view) {
  const before = view.marks;
  const after = compactionOf(view.model.get("compaction"));
  if (!before || !after || before.enabled !== after.enabled) return view.redrawRows();
  view.marks = after;
  const changed = new Set([before.cut, after.cut]);
  for (const i of before.summarise) if (!after.summarise.has(i)) changed.add(i);
  for (const i of after.summarise) if (!before.summarise.has(i)) changed.add(i);
  changed.delete(null);
  if (changed.size > 200) return view.redrawRows();
  const position = new Map(view.shown.map((itemIndex, j) => [itemIndex, j]));
  for (const [itemIndex, item] of view.items.entries()) {
    if (!changed.has(item.row?.index)) continue;
    if (view.vlist) {
      const j = position.get(itemIndex);
      if (j !== undefined) view.vlist.invalidate(j);
    } else if (item.el) {
      const el = view.renderRow(item.row, item.index, item.role);
      el.hidden = item.el.hidden;
      item.el.replaceWith(el);
      item.el = el;
    }
  }
  view.vlist?.schedule();
}
