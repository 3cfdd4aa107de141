// What if, per row: each stored message of the inspector gets controls — exclude a bashExecution from the context
// (Pi's `!!`) or include it again, hide or show a custom message, drop a message from the history. A change asks
// the kernel for a preview ({pi: "what_if", id, changes}; InspectorWidget.what_if answers {pi: "what_if_result",
// id, ok, rows, requests, total_tokens, notes} or {ok: false, error}); the view then draws the preview's rows and
// request bodies, with what changed marked, under a "preview — nothing stored" banner with a reset button.
// Nothing is ever stored: the kernel computes on copies. Without a kernel (a saved notebook, an exported page)
// the controls are disabled, with a tooltip saying why.
import { badge, fmtInt, h, prettyJson } from "./dom.js";
import { shortText } from "./summary.js";

const NO_KERNEL = "what-if needs the kernel: open the notebook and run the inspector's cell to try it";
const TIMEOUT_MS = 15000; // no answer by then: no kernel behind this view

/** The toggles a row offers: [{kind, label, title}] (kind as the kernel names it, for this row's stored state). */
export function togglesFor(row) {
  const agent = row?.agent;
  if (!Number.isInteger(row?.index) || !agent || typeof agent !== "object") return [];
  const out = [];
  if (agent.role === "bashExecution") {
    out.push(
      agent.excludeFromContext
        ? { kind: "include", label: "include", title: "what if this command's output were sent to the LLM" }
        : { kind: "exclude", label: "exclude (!!)", title: "what if this command were excluded from the context (Pi's !!)" },
    );
  }
  if (agent.role === "custom") {
    out.push(
      agent.display === false
        ? { kind: "show", label: "show", title: "what if this custom message were displayed (display: true)" }
        : { kind: "hide", label: "hide", title: "what if this custom message were hidden (display: false)" },
    );
  }
  out.push({ kind: "drop", label: "drop", title: "what if this message were not in the history" });
  return out;
}

function llmKey(row) {
  return prettyJson(Array.isArray(row?.llm) ? row.llm : []);
}

/** How a preview row differs for the LLM from the row it replaces: "added", "removed", "changed" or "". */
export function llmChange(base, row) {
  const was = Array.isArray(base?.llm) && base.llm.length > 0;
  const now = Array.isArray(row?.llm) && row.llm.length > 0;
  if (!was && now) return "added";
  if (was && !now) return "removed";
  return was && llmKey(base) !== llmKey(row) ? "changed" : "";
}

const CHANGE_TEXT = { added: "+ would be sent", removed: "− no longer sent", changed: "~ sent differently" };

export class WhatIf {
  /**
   * @param model the widget model
   * @param onChange called when the preview (or its state) changed: the view draws again
   */
  constructor(model, onChange) {
    this.model = model;
    this.onChange = onChange;
    this.live = typeof model.snapshot !== "function"; // static_model.js's models have no kernel behind them
    this.changes = new Map(); // row index → kind
    this.preview = null; // {rows, requests, total_tokens, notes}
    this.state = "off"; // off | pending | preview | error
    this.error = "";
    this.token = Math.random().toString(36).slice(2, 8);
    this.sent = 0;
    this.timer = null;
    this.text = h("span", { class: "pi-whatif-text" });
    this.resetButton = h(
      "button",
      { type: "button", class: "pi-whatif-reset", dataset: { control: "whatif-reset" } },
      "reset",
    );
    this.resetButton.addEventListener("click", () => this.reset());
    this.banner = h(
      "div",
      { class: "pi-whatif-banner", role: "status", "aria-live": "polite", hidden: true },
      h("strong", null, "Preview — nothing stored"),
      " ",
      this.text,
      " ",
      this.resetButton,
    );
    this.onMsg = (msg) => this.receive(msg);
    model.on("msg:custom", this.onMsg);
  }

  destroy() {
    clearTimeout(this.timer);
    this.model.off("msg:custom", this.onMsg);
  }

  /** The controls of one row (an element), or null for a row with nothing to change (an injected message). */
  controls(row) {
    const toggles = togglesFor(this.preview ? (this.baseOf(row) ?? row) : row); // as stored, not as previewed
    if (!toggles.length) return null;
    const box = h("span", { class: "pi-whatif-controls", role: "group", "aria-label": "what if" });
    for (const t of toggles) {
      const on = this.changes.get(row.index) === t.kind;
      const button = h(
        "button",
        {
          type: "button",
          class: "pi-whatif-toggle",
          dataset: { whatif: t.kind },
          "aria-pressed": String(on),
          title: this.live ? t.title : NO_KERNEL,
          disabled: !this.live,
        },
        t.label,
      );
      button.addEventListener("click", (ev) => {
        ev.stopPropagation();
        this.toggle(row.index, t.kind);
      });
      box.appendChild(button);
    }
    return box;
  }

  /** Turn one change of a row on or off (one change per row: a new one replaces the row's other). */
  toggle(index, kind) {
    if (!this.live) return;
    if (this.changes.get(index) === kind) this.changes.delete(index);
    else this.changes.set(index, kind);
    if (!this.changes.size) return this.reset();
    this.ask();
  }

  /** Ask the kernel for the preview of the current changes (again after the history changed). */
  ask() {
    if (!this.changes.size) return;
    const changes = {};
    for (const [index, kind] of this.changes) (changes[kind] ??= []).push(index);
    this.sent++;
    this.state = "pending";
    this.model.send({ pi: "what_if", id: `${this.token}:${this.sent}`, changes });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fail("no answer from the kernel (is it running?)"), TIMEOUT_MS);
    this.show();
  }

  receive(msg) {
    if (msg?.pi !== "what_if_result" || msg.id !== `${this.token}:${this.sent}` || !this.changes.size) return;
    clearTimeout(this.timer);
    if (!msg.ok) return this.fail(String(msg.error ?? "the preview failed"));
    const rows = Array.isArray(msg.rows) ? msg.rows : [];
    const requests = msg.requests && typeof msg.requests === "object" ? msg.requests : {};
    const notes = Array.isArray(msg.notes) ? msg.notes.filter((n) => typeof n === "string") : [];
    this.preview = { rows, requests, total_tokens: Number(msg.total_tokens) || 0, notes };
    this.state = "preview";
    this.show();
  }

  fail(error) {
    this.preview = null;
    this.state = "error";
    this.error = error;
    this.show();
  }

  /** Back to what is stored: no change, no preview. */
  reset() {
    clearTimeout(this.timer);
    this.changes.clear();
    this.preview = null;
    this.state = "off";
    this.show();
  }

  show() {
    const state = this.state;
    this.banner.hidden = state === "off";
    this.banner.dataset.state = state;
    const what = [...this.changes].map(([index, kind]) => `${kind} #${index}`).join(", ");
    if (state === "pending") this.text.textContent = `computing what the LLM would get if: ${what}…`;
    else if (state === "error") this.text.textContent = `${what}: ${this.error}`;
    else if (state === "preview") {
      const now = Number(this.model.get("total_tokens")) || 0;
      const notes = this.preview.notes.length ? ` · ${this.preview.notes.join(" · ")}` : "";
      this.text.textContent = `what the LLM would get if: ${what} · ~${fmtInt(this.preview.total_tokens)} tokens (now ~${fmtInt(now)})${notes}`;
    }
    this.onChange(state);
  }

  /** The rows to draw: the preview's, or null (the stored ones). */
  rows() {
    return this.preview ? this.preview.rows : null;
  }

  /** The preview's request body for `name` as text, or null (no preview, or none for that provider). */
  requestText(name) {
    const body = this.preview?.requests?.[name];
    return body === undefined ? null : (prettyJson(body) ?? "");
  }

  /** The stored row a preview row stands for: the same index; an injected one, by its place among those. */
  baseOf(row) {
    const rows = this.model.get("rows");
    if (this.baseRows !== rows) {
      this.baseRows = rows;
      this.byIndex = new Map();
      this.injected = [];
      for (const r of Array.isArray(rows) ? rows : []) {
        if (Number.isInteger(r?.index)) this.byIndex.set(r.index, r);
        else this.injected.push(r);
      }
    }
    if (Number.isInteger(row?.index)) return this.byIndex.get(row.index) ?? null;
    return this.injected[this.preview.rows.filter((r) => !Number.isInteger(r?.index)).indexOf(row)] ?? null;
  }

  /**
   * Mark a drawn preview row: what changed for the LLM (`data-diff`, the LLM cell's class and label, the messages
   * no longer sent shown struck out) and which change made it (a badge). `base`: the stored row it replaces.
   */
  decorate(el, row, llmCell, statusCell) {
    if (!this.preview) return;
    const base = this.baseOf(row);
    const kind = llmChange(base, row);
    if (row?.whatIf) statusCell.appendChild(badge(`what if: ${row.whatIf}`, "warn", "the change this preview makes"));
    if (!kind) return;
    el.dataset.diff = kind;
    llmCell.classList.add(`pi-diff-${kind}`);
    llmCell.prepend(h("div", { class: "pi-diff-label" }, CHANGE_TEXT[kind]));
    if (kind === "added") return;
    for (const m of base.llm) {
      llmCell.appendChild(
        h(
          "del",
          { class: "pi-llm-msg pi-diff-old", title: "what the LLM gets now" },
          h("span", { class: "pi-role-tag" }, String(m?.role ?? "(no role)")),
          " ",
          shortText(m),
        ),
      );
    }
  }
}
