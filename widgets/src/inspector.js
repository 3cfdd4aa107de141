// The context inspector widget (anywidget ES module): what the agent stored, what the LLM got, and the
// exact request body, side by side. Model state: rows, requests, provider, context_window, total_tokens,
// model_name, busy and optional notes (see widgets/README.md). The kernel appends rows and edits request
// bodies with deltas (live.js), applied in `initialize`; a long list of rows (VIRTUAL_MIN or more) draws only
// the rows near the viewport (virtual.js), and new rows are drawn without redrawing the others.
import { badge, copyButton, doc, fmtInt, h, jsonBlock, prettyJson } from "./dom.js";
import { applyPatch, followDeltas, PatchError, spliceList } from "./live.js";
import { compactionChanged, compactionOf, compactionText, decorateRow, drawThreshold } from "./compaction.js";
import { Compare } from "./compare.js";
import { imageBlock } from "./image.js";
import { llmParts } from "./llm_text.js";
import { fillDiff, fillText } from "./request_text.js";
import { announceState } from "./snapshot.js";
import { shortText } from "./summary.js";
import { normaliseContent } from "./text.js";
import { VIRTUAL_MIN, VirtualList } from "./virtual.js";
import { WhatIf } from "./whatif.js";

export { fillText };

export const STATUSES = ["passed", "translated", "dropped", "summarised", "injected", "error"];
const STATUS_HELP = {
  passed: "sent unchanged",
  translated: "converted into LLM message(s)",
  dropped: "not sent to the LLM",
  summarised: "replaced by a summary",
  injected: "added by transform_context; not in the agent's messages",
  error: "its converter raised: not converted (the next LLM call fails the same way)",
};

function asList(v) {
  return Array.isArray(v) ? v : [];
}

function rowRole(row) {
  if (typeof row?.role === "string" && row.role) return row.role;
  if (row?.agent && typeof row.agent.role === "string") return row.agent.role;
  const first = asList(row?.llm)[0];
  return typeof first?.role === "string" ? first.role : "(none)";
}

function rowStatus(row) {
  return STATUSES.includes(row?.status) ? row.status : "passed";
}

/** Thumbnails of a message's images (image blocks in its content, a notebook cell's `images`), or null: a pane
 * shows the picture, not its base64. */
function imagesOf(message) {
  if (!message || typeof message !== "object") return null;
  const blocks = [...normaliseContent(message.content), ...asList(message.images)];
  const images = blocks.filter((b) => b?.type === "image");
  return images.length ? h("div", { class: "pi-images pi-insp-images" }, images.map((b) => imageBlock(b))) : null;
}

/** First text of the first LLM message: used to find the row in the request body. */
function snippetOf(row) {
  for (const m of asList(row?.llm)) {
    const c = m?.content;
    const blocks = typeof c === "string" ? [{ type: "text", text: c }] : asList(c);
    for (const b of blocks) {
      if (b?.type === "text" && typeof b.text === "string" && b.text.trim()) return b.text.trim().slice(0, 60);
      if (b?.type === "toolCall" && b.id) return String(b.id);
    }
    if (m?.toolCallId) return String(m.toolCallId);
  }
  return "";
}

function clampPct(pct) {
  return Math.min(100, Math.max(0, pct)).toFixed(1);
}

function fmtPct(pct) {
  return `${pct < 10 ? pct.toFixed(1) : Math.round(pct)}%`;
}

/**
 * What the estimate counts, for its tooltip: the messages, and the system prompt's and the tools' share
 * (`overhead_tokens` from Python: {system, tools}; absent in outputs saved before they were counted).
 */
export function estimateKind(overhead) {
  const system = Number(overhead?.system);
  const tools = Number(overhead?.tools);
  if (!Number.isFinite(system) || !Number.isFinite(tools)) {
    return { label: "estimate: messages, chars/4", title: "characters / 4 of the messages" };
  }
  return {
    label: "estimate: messages + system prompt + tools, chars/4",
    title: `characters / 4 of the request: the messages, the system prompt (~${fmtInt(system)}) and the tool definitions (~${fmtInt(tools)})`,
  };
}

/**
 * The provider-reported figure of `reported_usage` (from Python): the input side of the last successful
 * reply, input + cacheRead + cacheWrite. Null when absent or malformed.
 */
export function reportedFigure(usage) {
  if (!usage || typeof usage !== "object") return null;
  const num = (v) => (Number.isFinite(v) && v > 0 ? v : 0);
  const parts = { input: num(usage.input), "cache read": num(usage.cacheRead), "cache write": num(usage.cacheWrite) };
  const sum = parts.input + parts["cache read"] + parts["cache write"];
  const tokens = Number.isFinite(usage.tokens) && usage.tokens > 0 ? usage.tokens : sum;
  if (!(tokens > 0)) return null;
  const detail = Object.entries(parts)
    .filter(([name, v]) => v > 0 || name === "input")
    .map(([name, v]) => `${name} ${fmtInt(v)}`)
    .join(" + ");
  const where = Number.isFinite(usage.index) ? ` (#${usage.index})` : "";
  return { tokens, detail: `input tokens of that request: ${detail}`, where };
}

/**
 * The model values after an inspector delta from the kernel (InspectorWidget): {op: "rows", at, len, rows}
 * replaces the rows from `at` on; {op: "requests", patch} edits the request bodies.
 */
export function applyInspectorDelta(msg, get) {
  const out = {};
  for (const op of Array.isArray(msg?.ops) ? msg.ops : []) {
    if (op?.op === "rows") out.rows = spliceList("rows" in out ? out.rows : get("rows"), op.at, op.len, op.rows);
    else if (op?.op === "requests") out.requests = applyPatch("requests" in out ? out.requests : get("requests") ?? {}, op.patch);
    else throw new PatchError(`unknown operation ${op?.op}`);
  }
  return out;
}

class InspectorView {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.expanded = new Set(); // row keys (index) kept across re-renders
    this.roleFilter = "";
    this.search = "";
    this.items = []; // per row: {row, index, role, key, haystack, el}
    this.shown = []; // indices of the items the filter lets through
    this.vlist = null; // the VirtualList of a long list
    this.emptyEl = h("div", { class: "pi-quiet pi-empty" }, "(no messages in the context)");

    this.titleModel = h("span", { class: "pi-model" });
    this.gaugeFill = h("div", { class: "pi-gauge-fill" });
    this.gaugeMark = h("div", { class: "pi-gauge-mark", title: "reported by the provider (last reply)" });
    this.gaugeText = h("span", { class: "pi-gauge-text", dataset: { figure: "estimate" } });
    this.gauge = h(
      "div",
      { class: "pi-gauge", role: "meter", "aria-valuemin": 0, "aria-label": "context window used (estimate)" },
      h("div", { class: "pi-gauge-bar" }, this.gaugeFill, this.gaugeMark),
      this.gaugeText,
    );
    this.reportedEl = h("div", { class: "pi-reported", dataset: { figure: "reported" } });
    this.roleSelect = h("select", { class: "pi-role-filter", dataset: { control: "role" }, "aria-label": "filter by role" });
    this.searchInput = h("input", {
      type: "search",
      class: "pi-search",
      placeholder: "search…",
      dataset: { control: "search" },
      "aria-label": "search rows",
    });
    this.countEl = h("span", { class: "pi-insp-count pi-quiet" });
    this.providerSelect = h("select", {
      class: "pi-provider",
      dataset: { control: "provider" },
      "aria-label": "request body of provider",
    });
    this.requestPre = h("pre", { class: "pi-json pi-request-json" });
    this.rowsEl = h("div", { class: "pi-insp-rows" });
    this.notesEl = h("ul", { class: "pi-insp-notes" });
    this.whatif = new WhatIf(model, (state) => this.previewChanged(state)); // what-if.js: row controls, preview
    this.compare = new Compare(model, this.whatif); // compare.js: two bodies side by side, diffed
    this.root = h(
      "div",
      { class: "pi-inspector", dataset: { state: "ready", whatif: this.whatif.live ? "off" : "no-kernel" } },
      h(
        "header",
        { class: "pi-insp-head" },
        h("div", { class: "pi-insp-title" }, h("strong", null, "Context inspector"), " ", this.titleModel),
        h("div", { class: "pi-insp-tokens" }, this.gauge, this.reportedEl),
        h(
          "div",
          { class: "pi-insp-controls" },
          h("label", null, "role ", this.roleSelect),
          this.searchInput,
          this.countEl,
        ),
      ),
      this.notesEl,
      this.whatif.banner,
      h(
        "div",
        { class: "pi-insp-body" },
        h(
          "div",
          { class: "pi-insp-rows-pane" },
          h(
            "div",
            { class: "pi-insp-colheads" },
            h("div", null, "AgentMessage (stored)"),
            h("div", null, "status"),
            h("div", null, "Message(s) for the LLM"),
          ),
          this.rowsEl,
        ),
        h(
          "section",
          { class: "pi-insp-request", dataset: { pane: "request" } },
          h(
            "div",
            { class: "pi-pane-head" },
            h("span", null, "request body "),
            this.providerSelect,
            this.compare.button,
            copyButton(() => this.requestText, "copy", this.requestPre),
          ),
          this.requestPre,
        ),
      ),
      this.compare.section,
    );
    el.appendChild(this.root);

    this.roleSelect.addEventListener("change", () => {
      this.roleFilter = this.roleSelect.value;
      this.applyFilter();
    });
    this.searchInput.addEventListener("input", () => {
      this.search = this.searchInput.value.trim().toLowerCase();
      this.applyFilter();
    });
    this.providerSelect.addEventListener("change", () => {
      // A message, not save_changes(): that would send back the rows and requests the deltas set here too.
      this.model.set("provider", this.providerSelect.value);
      this.model.send({ pi: "provider", value: this.providerSelect.value });
      this.renderRequest();
    });

    this.handlers = {
      "change:rows": () => (this.whatif.preview ? this.whatif.ask() : this.renderRows()), // a preview: asked anew
      "change:requests": () => this.requestsChanged(),
      "change:requests_before": () => this.compare.previewChanged(), // a changed pipeline: offer before / after
      "change:provider": () => this.renderRequest(),
      "change:compaction": () => [this.renderHeader(), compactionChanged(this)],
      "change:context_window": () => this.renderHeader(),
      "change:total_tokens": () => this.renderHeader(),
      "change:overhead_tokens": () => this.renderHeader(),
      "change:reported_usage": () => this.renderHeader(),
      "change:model_name": () => this.renderHeader(),
      "change:notes": () => this.renderNotes(),
      "change:busy": () => this.renderCount(),
    };
    for (const [ev, fn] of Object.entries(this.handlers)) model.on(ev, fn);
    this.renderHeader();
    this.renderNotes();
    this.renderRows();
    this.renderRequest();
  }

  destroy() {
    for (const [ev, fn] of Object.entries(this.handlers)) this.model.off(ev, fn);
    this.vlist?.destroy();
    this.whatif.destroy();
    this.root.remove();
  }

  renderHeader() {
    const name = this.model.get("model_name");
    this.titleModel.textContent = typeof name === "string" ? name : "";
    const used = Number(this.model.get("total_tokens")) || 0;
    const max = Number(this.model.get("context_window")) || 0;
    const pct = max > 0 ? (used / max) * 100 : 0;
    const level = max <= 0 ? "unknown" : pct > 100 ? "over" : pct >= 80 ? "warn" : "ok";
    this.gauge.dataset.level = level;
    this.gauge.setAttribute("aria-valuenow", String(used));
    if (max > 0) this.gauge.setAttribute("aria-valuemax", String(max));
    this.gaugeFill.style.width = `${clampPct(pct)}%`;
    const compaction = compactionOf(this.model.get("compaction"));
    drawThreshold(this.gaugeFill.parentElement, compaction, max);
    // Two figures, each saying what it is: our chars/4 estimate of the messages (what the bar shows) and,
    // once a reply came back, the input tokens the provider reported for that request.
    this.gaugeText.textContent = "";
    const kind = estimateKind(this.model.get("overhead_tokens"));
    this.gaugeText.append(
      max > 0
        ? `~${fmtInt(used)} / ${fmtInt(max)} tokens (${fmtPct(pct)})`
        : `~${fmtInt(used)} tokens (context window unknown)`,
      " ",
      h("span", { class: "pi-figure-kind", title: kind.title }, kind.label),
      compactionText(compaction) ? h("span", { class: "pi-compaction-text", dataset: { figure: "compaction" } }, ` · ${compactionText(compaction)}`) : "",
    );
    this.gauge.setAttribute("aria-valuetext", this.gaugeText.textContent);
    const reported = reportedFigure(this.model.get("reported_usage"));
    this.reportedEl.textContent = "";
    this.reportedEl.hidden = !reported;
    this.gaugeMark.hidden = !reported || max <= 0;
    if (!reported) return;
    this.gaugeMark.style.left = `${clampPct((reported.tokens / max) * 100)}%`;
    const share = max > 0 ? ` (${fmtPct((reported.tokens / max) * 100)})` : "";
    this.reportedEl.append(
      `${fmtInt(reported.tokens)} tokens${share} `,
      h("span", { class: "pi-figure-kind", title: reported.detail }, "reported by the provider"),
      ` for the last reply${reported.where}`,
    );
    this.reportedEl.title = reported.detail;
  }

  /** Optional `notes` (list of strings from Python): things worth knowing, e.g. "compaction due". */
  renderNotes() {
    const notes = asList(this.model.get("notes")).filter((n) => typeof n === "string" && n);
    this.notesEl.textContent = "";
    for (const n of notes) this.notesEl.appendChild(h("li", null, n));
    this.notesEl.hidden = notes.length === 0;
  }

  // ---- rows --------------------------------------------------------------------------------------

  /** Draw the rows: those unchanged since the last time (the same objects: a delta appended rows) stay. */
  renderRows() {
    this.marks = compactionOf(this.model.get("compaction")); // what the rows drawn from now on are marked with
    const rows = this.whatif.rows() ?? asList(this.model.get("rows"));
    const before = this.items;
    let same = 0;
    while (same < before.length && same < rows.length && before[same].row === rows[same]) same++;
    for (const item of before.slice(same)) item.el?.remove();
    const items = before.slice(0, same);
    for (let i = same; i < rows.length; i++) {
      const row = rows[i];
      items.push({ row, index: i, role: rowRole(row), key: this.rowKey(row, i), haystack: null, el: null });
    }
    this.items = items;
    const virtual = items.length >= VIRTUAL_MIN;
    if (virtual !== !!this.vlist) {
      this.switchMode(virtual);
      same = 0;
    }
    if (!this.vlist) {
      const frag = doc().createDocumentFragment();
      for (const item of items.slice(same)) {
        item.el = this.renderRow(item.row, item.index, item.role);
        frag.appendChild(item.el);
      }
      this.rowsEl.appendChild(frag);
    }
    if (!rows.length) this.rowsEl.appendChild(this.emptyEl);
    else this.emptyEl.remove();

    const roles = [];
    for (const item of items) if (!roles.includes(item.role)) roles.push(item.role);
    if (roles.join("\u0000") !== this.roles?.join("\u0000")) {
      this.roles = roles;
      this.roleSelect.textContent = "";
      this.roleSelect.appendChild(h("option", { value: "" }, "all roles"));
      for (const r of roles) this.roleSelect.appendChild(h("option", { value: r }, r));
    }
    if (!roles.includes(this.roleFilter)) this.roleFilter = "";
    this.roleSelect.value = this.roleFilter;
    this.applyFilter(same);
  }

  /** Draw every row again (the what-if preview or the compaction marks changed). */
  redrawRows() {
    for (const item of this.items) item.el?.remove();
    this.items = [];
    this.renderRows();
  }

  /** The what-if preview came, went or is on its way: rows, request pane and compare view follow it. */
  previewChanged(state) {
    this.root.dataset.whatif = state;
    this.redrawRows();
    this.renderRequest();
    this.compare.previewChanged();
  }

  /** From drawing every row to drawing those near the viewport (a long list), or back. */
  switchMode(virtual) {
    for (const item of this.items) {
      item.el?.remove();
      item.el = null;
    }
    this.vlist?.destroy();
    this.vlist = null;
    if (!virtual) return;
    this.vlist = new VirtualList(this.rowsEl, {
      render: (j) => {
        const item = this.items[this.shown[j]];
        item.el = this.renderRow(item.row, item.index, item.role);
        return item.el;
      },
    });
  }

  rowKey(row, i) {
    return String(Number.isFinite(row?.index) ? row.index : `i${i}`);
  }

  renderRow(row, i, role) {
    const status = rowStatus(row);
    const key = this.rowKey(row, i);
    const agent = row?.agent ?? null;
    const llm = asList(row?.llm);

    const agentCell = h("div", { class: "pi-cell pi-cell-agent", dataset: { pane: "agent" } });
    agentCell.appendChild(
      h(
        "div",
        { class: "pi-cell-head" },
        h("span", { class: "pi-idx" }, Number.isFinite(row?.index) ? `#${row.index}` : ""),
        h("span", { class: "pi-role-tag" }, agent ? String(agent.role ?? "(no role)") : "—"),
        this.whatif.controls(row),
      ),
    );
    agentCell.appendChild(
      agent
        ? h("div", { class: "pi-cell-text" }, shortText(agent))
        : h("div", { class: "pi-cell-text pi-quiet" }, "(not in the agent's messages)"),
    );
    const agentImages = imagesOf(agent);
    if (agentImages) agentCell.appendChild(agentImages);

    const statusCell = h(
      "div",
      { class: "pi-cell pi-status-cell" },
      badge(status, `status-${status}`, STATUS_HELP[status]),
      row?.reason ? h("div", { class: "pi-reason" }, String(row.reason)) : null,
      Number.isFinite(row?.tokens) ? h("div", { class: "pi-tokens pi-quiet" }, `~${fmtInt(row.tokens)} tok`) : null,
    );

    const llmCell = h("div", { class: "pi-cell pi-cell-llm", dataset: { pane: "llm" } });
    if (!llm.length) {
      const note = status === "summarised" ? "— replaced by the summary —" : "— not sent —";
      llmCell.appendChild(h("div", { class: "pi-cell-text pi-quiet pi-dropped-note" }, note));
    }
    for (const m of llm) {
      // Each text as the LLM gets it (line breaks, spaces, fences): this column is "what the LLM sees".
      const parts = llmParts(m).map((p) => h("pre", { class: ["pi-llm-text", `pi-llm-${p.kind}`], dataset: { part: p.kind } }, p.text));
      llmCell.appendChild(
        h(
          "div",
          { class: "pi-llm-msg" },
          h("span", { class: "pi-role-tag" }, String(m?.role ?? "(no role)")),
          parts.length ? parts : h("div", { class: "pi-cell-text pi-quiet" }, "(no text)"),
          imagesOf(m),
        ),
      );
    }

    const el = h(
      "div",
      {
        class: ["pi-insp-row", `pi-status-${status}`],
        dataset: { status, role, index: key },
        tabindex: 0,
        role: "button",
        "aria-expanded": "false",
      },
      agentCell,
      statusCell,
      llmCell,
    );
    const toggle = () => {
      if (this.expanded.has(key)) this.expanded.delete(key);
      else this.expanded.add(key);
      this.syncExpanded(el, row, key);
      this.vlist?.remeasure();
      // Mark this row's text in the request body; collapsing it takes the mark away again.
      this.highlightInRequest(this.expanded.has(key) ? snippetOf(row) : "");
    };
    el.addEventListener("click", (ev) => {
      if (ev.target?.closest?.("button, a, summary, .pi-insp-expanded")) return;
      toggle();
    });
    el.addEventListener("keydown", (ev) => {
      if ((ev.key === "Enter" || ev.key === " ") && ev.target === el) {
        ev.preventDefault();
        toggle();
      }
    });
    this.whatif.decorate(el, row, llmCell, statusCell);
    decorateRow(el, row, compactionOf(this.model.get("compaction")), agentCell, statusCell);
    this.syncExpanded(el, row, key);
    return el;
  }

  syncExpanded(el, row, key) {
    const open = this.expanded.has(key);
    el.setAttribute("aria-expanded", String(open));
    el.classList.toggle("pi-expanded", open);
    el.querySelector(":scope > .pi-insp-expanded")?.remove();
    if (!open) return;
    const agentText = row?.agent ? prettyJson(row.agent) : "null";
    const llmText = prettyJson(asList(row?.llm));
    el.appendChild(
      h(
        "div",
        { class: "pi-insp-expanded" },
        h(
          "div",
          { class: "pi-json-box", dataset: { json: "agent" } },
          h("div", { class: "pi-pane-head" }, "AgentMessage JSON ", copyButton(() => agentText)),
          jsonBlock(row?.agent ?? null),
        ),
        h(
          "div",
          { class: "pi-json-box", dataset: { json: "llm" } },
          h("div", { class: "pi-pane-head" }, "Message JSON ", copyButton(() => llmText)),
          jsonBlock(asList(row?.llm)),
        ),
        typeof row?.produced_text === "string" && row.produced_text
          ? h(
              "div",
              { class: "pi-json-box pi-produced", dataset: { json: "text" } },
              h("div", { class: "pi-pane-head" }, "Text the LLM reads ", copyButton(() => row.produced_text)),
              h("pre", { class: "pi-json" }, row.produced_text),
            )
          : null,
      ),
    );
  }

  matches(item) {
    if (this.roleFilter && item.role !== this.roleFilter) return false;
    if (!this.search) return true;
    item.haystack ??= [
      prettyJson(item.row?.agent),
      prettyJson(item.row?.llm),
      item.row?.reason ?? "",
      item.row?.produced_text ?? "",
      item.row?.status ?? "",
      item.role,
    ]
      .join("\n")
      .toLowerCase();
    return item.haystack.includes(this.search);
  }

  /** Which rows the role filter and the search let through; `from`: rows before it are known unchanged. */
  applyFilter(from = 0) {
    const filter = `${this.roleFilter}\u0000${this.search}`;
    if (filter !== this.filter) from = 0;
    this.filter = filter;
    let keep = 0;
    while (keep < this.shown.length && this.shown[keep] < from) keep++;
    const shown = this.shown.slice(0, keep);
    for (let i = from; i < this.items.length; i++) if (this.matches(this.items[i])) shown.push(i);
    this.shown = shown;
    if (this.vlist) {
      this.vlist.setCount(shown.length, keep);
    } else {
      const ok = new Set(shown);
      for (const item of this.items) if (item.el) item.el.hidden = !ok.has(item.index);
    }
    this.renderCount();
  }

  renderCount() {
    const busy = this.model.get("busy") === true;
    const shown = this.shown.length.toLocaleString("en-US");
    const loading = busy ? " · loading…" : "";
    this.countEl.textContent = `${shown} of ${this.items.length.toLocaleString("en-US")} rows${loading}`;
    this.root.dataset.state = busy ? "rendering" : "ready";
  }

  // ---- request pane ------------------------------------------------------------------------------

  selectedProvider() {
    const requests = this.model.get("requests");
    const names = requests && typeof requests === "object" ? Object.keys(requests) : [];
    const chosen = this.model.get("provider");
    return { names, name: names.includes(chosen) ? chosen : (names[0] ?? ""), requests: requests || {} };
  }

  /** New request bodies: the pane is drawn again only if the one it shows changed (a cell edits all four or five,
   * one at a time; laying out a long body again for each of the others would be wasted). */
  requestsChanged() {
    const { names, name, requests } = this.selectedProvider();
    if (requests[name] === this.shownBody && names.join("\u0000") === this.shownNames) this.compare.render();
    else this.renderRequest();
  }

  renderRequest() {
    const { names, name, requests } = this.selectedProvider();
    this.shownBody = requests[name];
    this.shownNames = names.join("\u0000");
    this.providerSelect.textContent = "";
    for (const n of names) this.providerSelect.appendChild(h("option", { value: n }, n));
    this.providerSelect.value = name;
    this.providerSelect.disabled = names.length < 2;
    this.requestText = name ? (prettyJson(requests[name]) ?? "") : "";
    const preview = this.whatif.requestText(name);
    if (preview !== null) {
      fillDiff(this.requestPre, this.requestText, preview); // the preview's body, its changes marked
      this.requestText = preview;
    } else fillText(this.requestPre, name ? this.requestText : "(no request built yet)");
    this.compare.render();
    this.requestPre.dataset.provider = name;
  }

  /** Mark the first place the row's text appears in the request body, and scroll to it. */
  highlightInRequest(snippet) {
    if (this.whatif.preview) return; // the pane shows the preview's changes marked: kept
    const text = this.requestText || "";
    const needle = snippet && text ? JSON.stringify(snippet).slice(1, -1) : "";
    const at = needle ? text.indexOf(needle) : -1;
    const mark = at < 0 ? null : { at, length: needle.length };
    fillText(this.requestPre, text || "(no request built yet)", mark);
    if (!mark?.el) return;
    // Scroll the pane only (not the notebook): the <pre> is the positioned scroll container.
    this.requestPre.scrollTop = Math.max(0, mark.el.offsetTop - this.requestPre.clientHeight / 3);
  }
}

/** anywidget: once per model, before any view. Applies the kernel's deltas to the model. */
function initialize({ model }) {
  return followDeltas(model, ["rows", "requests"], applyInspectorDelta);
}

/** anywidget entry point. Returns the cleanup function. */
function render({ model, el }) {
  const view = new InspectorView(model, el);
  const quiet = announceState(el, "inspector", model); // a saved output around the view keeps the latest state
  return () => {
    quiet();
    view.destroy();
  };
}

export default { initialize, render };
