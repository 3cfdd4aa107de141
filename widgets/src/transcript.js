// The transcript widget (anywidget ES module): a thin view over Pi-JSON AgentMessages.
//
// Model state (set from Python): messages, visibility, streaming, show_hidden, title, renderers.
// See widgets/README.md for the contract. Live updates arrive as deltas (live.js) applied in `initialize`.
// Short lists render in full, in chunks (one per animation frame); long ones (VIRTUAL_MIN messages or more)
// draw only the messages near the viewport (virtual.js). Only the changed tail re-renders on
// `change:messages`, and `streaming` re-renders at most once per frame.
import { ansiToFragment } from "./ansi.js";
import { contentBlocks, longOutput, normaliseContent } from "./content.js";
import { badge, doc, fmtCost, fmtInt, fmtTime, h, idPart, jsonBlock, nextFrame, prettyJson } from "./dom.js";
import { applyPatch, followDeltas, PatchError, spliceList } from "./live.js";
import { announceState } from "./snapshot.js";
import { markdown } from "./markdown.js";
import { maskedBadge, maskedIn } from "./renderers/masked.js";
import { getRenderer, registerRenderer } from "./registry.js";
import { fallbackRenderer } from "./renderers/index.js";
import { VIRTUAL_MIN, VirtualList } from "./virtual.js";

export { registerRenderer };

const ROLE_LABELS = {
  user: "user",
  assistant: "assistant",
  toolResult: "tool result",
  bashExecution: "shell",
  compactionSummary: "compaction summary",
  branchSummary: "branch summary",
  custom: "custom",
  notebookCell: "notebook cell",
};
const VISIBILITIES = new Set(["both", "ui", "llm", "none"]);
/** Hidden in the UI unless show_hidden: display:false messages (sent to the LLM, or not even that). */
const HIDDEN = new Set(["llm", "none"]);
const FRAME_BUDGET_MS = 12;
const MIN_PER_FRAME = 25;

let viewCounter = 0;

/** What a message's visibility is when Python gave none: Pi's own rules. */
export function defaultVisibility(message) {
  if (message?.role === "bashExecution" && message.excludeFromContext) return "ui";
  if (message?.role === "notebookCell" && message.excludeFromContext) return "ui";
  if (message?.role === "custom" && message.display === false) return "llm";
  return "both";
}

/** "4 s", "2 min 5 s": the time a running cell has been at what its status says. */
export function fmtElapsed(ms) {
  const seconds = Math.max(0, Math.floor((Number(ms) || 0) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A running cell's status line: the kernel's text with `{elapsed}` replaced by the time since it came. */
export function statusText(template, ms) {
  return String(template ?? "").replaceAll("{elapsed}", fmtElapsed(ms));
}

/** The header count: "12 messages · 3 hidden" (hidden = display:false, not drawn unless show_hidden). */
export function countText(total, hidden, showHidden) {
  const all = `${total.toLocaleString("en-US")} message${total === 1 ? "" : "s"}`;
  if (!hidden) return all;
  return `${all} · ${hidden.toLocaleString("en-US")} hidden${showHidden ? " (shown)" : ""}`;
}

function asList(value) {
  return Array.isArray(value) ? value : [];
}

/**
 * The model values after a transcript delta from the kernel (TranscriptWidget._send_delta):
 * {op: "messages", at, len, messages, visibility} replaces the messages from `at` on (with `first`, the edits that
 * make the first of them from the streaming message);
 * {op: "streaming", value} or {op: "streaming", patch} sets or edits the streaming message.
 */
export function applyTranscriptDelta(msg, get) {
  const out = {};
  for (const op of Array.isArray(msg?.ops) ? msg.ops : []) {
    if (op?.op === "messages") {
      const messages = "messages" in out ? out.messages : get("messages");
      // `first`: the streamed message, finished, as the edits of the streaming copy (not sent again whole)
      let added = op.messages;
      if ("first" in op) {
        const streaming = "streaming" in out ? out.streaming : get("streaming");
        added = [applyPatch(streaming, op.first), ...asList(op.messages)];
      }
      out.messages = spliceList(messages, op.at, op.len, added);
      const visibility = asList("visibility" in out ? out.visibility : get("visibility")).slice(0, op.at);
      while (visibility.length < op.at) visibility.push("");
      out.visibility = visibility.concat(asList(op.visibility));
    } else if (op?.op === "streaming") {
      if ("value" in op) out.streaming = op.value ?? null;
      else out.streaming = applyPatch("streaming" in out ? out.streaming : get("streaming"), op.patch);
    } else {
      throw new PatchError(`unknown operation ${op?.op}`);
    }
  }
  return out;
}

function keyOf(message) {
  try {
    return JSON.stringify(message) ?? "undefined";
  } catch {
    return `#unserialisable-${Math.random()}`; // never equal: always re-render
  }
}

function now() {
  return globalThis.performance?.now?.() ?? Date.now();
}

/**
 * Import an ES module from source text: a Blob URL (browsers), else a data: URL (Node, strict CSPs
 * without blob:). Its default export must be a function `render(message, el, helpers)`.
 */
export async function loadRendererModule(source) {
  const src = String(source ?? "");
  let mod;
  let blobError;
  if (typeof Blob === "function" && typeof URL?.createObjectURL === "function") {
    const url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
    try {
      mod = await import(/* webpackIgnore: true */ url);
    } catch (err) {
      blobError = err;
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  if (!mod) {
    try {
      mod = await import(/* webpackIgnore: true */ `data:text/javascript;charset=utf-8,${encodeURIComponent(src)}`);
    } catch (err) {
      throw blobError && !/scheme|protocol|URL/i.test(String(blobError.message)) ? blobError : err;
    }
  }
  if (typeof mod?.default !== "function") {
    throw new TypeError("the module has no default export function render(message, el, helpers)");
  }
  return mod.default;
}

class TranscriptView {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.id = `pi${(++viewCounter).toString(36)}${Math.random().toString(36).slice(2, 7)}`;
    this.rendered = []; // [{key, el, visibility}] in message order (lists drawn in full)
    this.vlist = null; // the VirtualList of a long list
    this.keys = [];
    this.bodies = []; // keyOf(message) per message, kept while the message object stays the same
    this.messages = [];
    this.visibility = [];
    this.callIds = new Set();
    this.resultIds = new Set();
    this.callAt = new Map(); // tool call id → index of the message holding the call
    this.resultAt = new Map(); // tool call id → index of its result
    this.custom = new Map(); // role → render function (from the `renderers` trait)
    this.customErrors = new Map(); // role → Error (module failed to load)
    this.chunking = false;
    this.loading = false;
    this.cancelChunk = null;
    this.cancelStream = null;
    this.loadToken = 0;

    this.titleEl = h("span", { class: "pi-title" });
    this.countEl = h("span", { class: "pi-count" });
    this.totalsEl = h("span", { class: "pi-totals" });
    this.hiddenBox = h("input", { type: "checkbox", class: "pi-hidden-checkbox" });
    this.hiddenLabel = h("span", null, "show hidden");
    this.hiddenToggle = h(
      "label",
      { class: "pi-hidden-toggle", title: "Messages sent to the LLM but hidden in the UI (display: false)" },
      this.hiddenBox,
      this.hiddenLabel,
    );
    this.list = h("div", { class: "pi-list", role: "log", "aria-live": "off" });
    this.empty = h("div", { class: "pi-empty pi-quiet" }, "(no messages)");
    this.slot = h("div", { class: "pi-streaming-slot", "aria-live": "polite" });
    // What a running cell is doing while nothing else shows it (a command that prints nothing yet, the model
    // loading): the kernel's `status`, its seconds counted here.
    this.statusEl = h("div", { class: "pi-run-status", role: "status", hidden: true });
    this.status = "";
    this.statusSince = 0;
    this.statusTimer = null;
    this.root = h(
      "div",
      { class: "pi-transcript", dataset: { state: "rendering" } },
      h("header", { class: "pi-transcript-head" }, this.titleEl, this.countEl, this.totalsEl, this.hiddenToggle),
      this.empty,
      this.list,
      this.slot,
      this.statusEl,
    );
    el.appendChild(this.root);

    this.onClick = (ev) => this.followLink(ev);
    this.root.addEventListener("click", this.onClick);
    this.hiddenBox.addEventListener("change", () => {
      model.set("show_hidden", this.hiddenBox.checked);
      model.save_changes();
    });

    this.handlers = {
      "change:messages": () => this.update(),
      "change:visibility": () => this.update(),
      "change:streaming": () => this.scheduleStreaming(),
      "change:show_hidden": () => this.applyShowHidden(),
      "change:title": () => this.updateHeader(),
      "change:renderers": () => this.loadCustom(),
      "change:status": () => this.renderStatus(),
    };
    for (const [ev, fn] of Object.entries(this.handlers)) model.on(ev, fn);

    this.updateHeader();
    if (Object.keys(this.model.get("renderers") || {}).length) this.loadCustom();
    else this.update();
    this.renderStreaming();
    this.renderStatus();
    this.setState();
  }

  destroy() {
    clearInterval(this.statusTimer);
    for (const [ev, fn] of Object.entries(this.handlers)) this.model.off(ev, fn);
    this.vlist?.destroy();
    this.cancelChunk?.();
    this.cancelStream?.();
    this.loadToken++;
    this.root.removeEventListener("click", this.onClick);
    this.root.remove();
  }

  // ---- state ---------------------------------------------------------------------------------

  setState() {
    const ready = !this.chunking && !this.loading && !this.cancelStream;
    const state = ready ? "ready" : "rendering";
    if (this.root.dataset.state !== state) {
      this.root.dataset.state = state;
      if (ready) this.root.dispatchEvent(new (doc().defaultView?.CustomEvent ?? CustomEvent)("pi-rendered"));
    }
  }

  visibilityOf(index) {
    const v = this.visibility[index];
    return VISIBILITIES.has(v) ? v : defaultVisibility(this.messages[index]);
  }

  showHidden() {
    return this.model.get("show_hidden") === true;
  }

  computeIds() {
    this.callIds = new Set();
    this.resultIds = new Set();
    this.callAt = new Map();
    this.resultAt = new Map();
    const streaming = this.model.get("streaming");
    const all = [...this.messages, streaming];
    all.forEach((m, i) => {
      if (!m || typeof m !== "object") return;
      if (m.role === "toolResult" && m.toolCallId !== undefined) {
        this.resultIds.add(String(m.toolCallId));
        this.resultAt.set(String(m.toolCallId), i);
      }
      if (m.role === "assistant" && Array.isArray(m.content)) {
        for (const b of m.content) {
          if (b?.type === "toolCall" && b.id !== undefined) {
            this.callIds.add(String(b.id));
            this.callAt.set(String(b.id), i);
          }
        }
      }
    });
  }

  // ---- custom renderers --------------------------------------------------------------------------

  async loadCustom() {
    const token = ++this.loadToken;
    this.loading = true;
    this.setState();
    const sources = this.model.get("renderers") || {};
    const custom = new Map();
    const errors = new Map();
    await Promise.all(
      Object.entries(sources).map(async ([role, source]) => {
        try {
          custom.set(role, await loadRendererModule(source));
        } catch (err) {
          errors.set(role, err);
        }
      }),
    );
    if (token !== this.loadToken) return; // superseded by a newer change:renderers or destroy()
    this.custom = custom;
    this.customErrors = errors;
    this.loading = false;
    this.rerenderAll();
  }

  // ---- the list ----------------------------------------------------------------------------------

  rerenderAll() {
    this.cancelChunk?.();
    for (const r of this.rendered) r.el.remove();
    this.rendered = [];
    this.vlist?.destroy();
    this.vlist = null;
    this.keys = [];
    this.update();
    this.renderStreaming();
  }

  /** Re-render from the first message whose JSON or visibility changed; append new ones in chunks (or, in a
   * long list, draw what is near the viewport). */
  update() {
    if (this.loading) return; // loadCustom() re-renders when done
    const before = this.messages;
    const bodies = this.bodies;
    this.messages = asList(this.model.get("messages"));
    this.visibility = asList(this.model.get("visibility"));
    // A message object the model still holds (a delta keeps the unchanged ones) is not serialised again.
    this.bodies = this.messages.map((m, i) => (m === before[i] && bodies[i] !== undefined ? bodies[i] : keyOf(m)));
    const previous = this.keys;
    this.keys = this.messages.map((_m, i) => `${this.visibilityOf(i)}\u0000${this.bodies[i]}`);
    this.computeIds();
    this.updateHeader();
    const virtual = this.messages.length >= VIRTUAL_MIN;
    if (virtual !== !!this.vlist) this.switchMode(virtual);
    if (this.vlist) {
      let i = 0;
      while (i < previous.length && i < this.keys.length && previous[i] === this.keys[i]) i++;
      this.vlist.setCount(this.keys.length, i);
      this.refreshLinks(this.list);
      this.setState();
      return;
    }
    let i = 0;
    while (i < this.rendered.length && i < this.keys.length && this.rendered[i].key === this.keys[i]) i++;
    for (const r of this.rendered.splice(i)) r.el.remove();
    this.cancelChunk?.();
    this.cancelChunk = null;
    this.chunking = true;
    this.renderChunk();
  }

  /** From drawing every message to drawing those near the viewport (a long list), or back. */
  switchMode(virtual) {
    this.cancelChunk?.();
    this.cancelChunk = null;
    this.chunking = false;
    for (const r of this.rendered) r.el.remove();
    this.rendered = [];
    this.vlist?.destroy();
    this.vlist = null;
    this.list.classList.toggle("pi-virtual", virtual);
    if (!virtual) return;
    this.vlist = new VirtualList(this.list, {
      render: (i) => this.renderMessage(this.messages[i], this.visibilityOf(i), i, false),
      estimate: (i, average) => (HIDDEN.has(this.visibilityOf(i)) && !this.showHidden() ? 0 : average),
      onDraw: (els) => {
        for (const el of els) this.refreshLinks(el);
      },
    });
  }

  renderChunk() {
    const start = now();
    const frag = doc().createDocumentFragment();
    let n = 0;
    while (this.rendered.length < this.keys.length) {
      const index = this.rendered.length;
      const visibility = this.visibilityOf(index);
      const el = this.renderMessage(this.messages[index], visibility, index, false);
      frag.appendChild(el);
      this.rendered.push({ key: this.keys[index], el, visibility });
      n++;
      if (n >= MIN_PER_FRAME && now() - start > FRAME_BUDGET_MS) break;
    }
    this.refreshLinks(frag);
    this.list.appendChild(frag);
    if (this.rendered.length < this.keys.length) {
      this.cancelChunk = nextFrame(() => this.renderChunk());
    } else {
      this.cancelChunk = null;
      this.chunking = false;
      this.refreshLinks(this.root);
    }
    this.setState();
  }

  scheduleStreaming() {
    if (this.cancelStream) return;
    this.cancelStream = nextFrame(() => {
      this.cancelStream = null;
      this.renderStreaming();
      this.setState();
    });
    this.setState();
  }

  renderStreaming() {
    const msg = this.model.get("streaming");
    this.slot.textContent = "";
    this.computeIds();
    if (msg && typeof msg === "object") {
      this.slot.appendChild(this.renderMessage(msg, "both", this.messages.length, true));
    }
    this.refreshLinks(this.root);
    this.updateHeader();
  }

  /** The status line: shown while the kernel says what the cell is doing, its `{elapsed}` counted each second
   * from when that text came (the kernel sends nothing while it waits). */
  renderStatus() {
    const value = this.model.get("status");
    const status = typeof value === "string" ? value : "";
    if (status !== this.status) {
      this.status = status;
      this.statusSince = Date.now();
    }
    clearInterval(this.statusTimer);
    this.statusTimer = null;
    this.statusEl.hidden = !status;
    this.statusEl.textContent = "";
    if (status) {
      const draw = () => {
        this.statusEl.textContent = statusText(status, Date.now() - this.statusSince);
      };
      draw();
      if (status.includes("{elapsed}")) this.statusTimer = setInterval(draw, 1000);
    }
    this.updateHeader();
  }

  applyShowHidden() {
    const show = this.showHidden();
    for (const r of this.rendered) if (HIDDEN.has(r.visibility)) r.el.hidden = !show;
    if (this.vlist) {
      for (const el of [...this.vlist.els.values(), ...this.vlist.spare.values()]) {
        if (HIDDEN.has(el.dataset.visibility)) el.hidden = !show;
      }
      this.vlist.forgetWhere((i) => HIDDEN.has(this.visibilityOf(i)));
      this.vlist.update();
    }
    this.updateHeader();
  }

  updateHeader() {
    const title = this.model.get("title");
    this.titleEl.textContent = typeof title === "string" ? title : "";
    this.titleEl.hidden = !this.titleEl.textContent;
    const n = this.messages.length;
    let tin = 0;
    let tout = 0;
    let cost = 0;
    let hidden = 0;
    this.messages.forEach((m, i) => {
      if (HIDDEN.has(this.visibilityOf(i))) hidden++;
      const u = m?.role === "assistant" ? m.usage : null;
      if (u && typeof u === "object") {
        tin += Number.isFinite(u.input) ? u.input : 0;
        tout += Number.isFinite(u.output) ? u.output : 0;
        cost += Number.isFinite(u.cost?.total) ? u.cost.total : 0;
      }
    });
    this.totalsEl.textContent =
      tin || tout ? `${fmtInt(tin)} in · ${fmtInt(tout)} out${cost > 0 ? ` · ${fmtCost(cost)}` : ""}` : "";
    const show = this.showHidden();
    this.countEl.textContent = countText(n, hidden, show);
    this.countEl.dataset.total = String(n);
    this.countEl.dataset.hidden = String(hidden);
    this.countEl.dataset.visible = String(show ? n : n - hidden);
    this.hiddenToggle.hidden = hidden === 0;
    this.hiddenBox.checked = show;
    // A running cell with nothing recorded yet shows what runs (its card, its status), not "0 messages".
    const running = !!this.model.get("streaming") || !!this.status;
    this.countEl.hidden = n === 0 && running;
    this.empty.hidden = n > 0 || running;
  }

  // ---- one message -------------------------------------------------------------------------------

  anchor(kind, toolCallId) {
    return `${this.id}-${kind}-${idPart(toolCallId)}`;
  }

  link(kind, toolCallId) {
    return h("a", { class: "pi-link", dataset: { link: kind, toolCallId: String(toolCallId) } });
  }

  /** Point tool call ↔ result links at their targets, or say why there is none. */
  refreshLinks(scope) {
    const streaming = !!this.model.get("streaming");
    for (const a of scope.querySelectorAll("a.pi-link")) {
      const id = a.dataset.toolCallId ?? "";
      const kind = a.dataset.link;
      const present = kind === "result" ? this.resultIds.has(id) : this.callIds.has(id);
      if (present) {
        a.setAttribute("href", `#${this.anchor(kind, id)}`);
        a.textContent = kind === "result" ? "↓ result" : "↑ call";
        a.dataset.linkState = "linked";
      } else {
        a.removeAttribute("href");
        a.textContent = kind === "result" ? (streaming ? "running…" : "no result") : "call not in transcript";
        a.dataset.linkState = "missing";
      }
    }
  }

  followLink(ev) {
    const a = ev.target?.closest?.("a.pi-link[href]");
    if (!a || !this.root.contains(a)) return;
    ev.preventDefault(); // scroll inside the notebook; don't touch the page's URL hash
    const selector = `[id="${a.getAttribute("href").slice(1)}"]`;
    let target = this.root.querySelector(selector);
    if (!target && this.vlist) {
      // a long list draws only what is near the viewport: draw the target's message first
      const id = a.dataset.toolCallId ?? "";
      const index = a.dataset.link === "result" ? this.resultAt.get(id) : this.callAt.get(id);
      if (index !== undefined) this.vlist.reveal(index);
      target = this.root.querySelector(selector);
    }
    if (!target) return;
    target.scrollIntoView?.({ block: "nearest", behavior: "smooth" });
    target.classList.add("pi-flash");
    setTimeout(() => target.classList.remove("pi-flash"), 1200);
  }

  helpers(article, header, visibility, index, streaming) {
    return {
      h,
      text: (s) => doc().createTextNode(String(s ?? "")),
      markdown,
      json: (v) => jsonBlock(v),
      prettyJson,
      content: contentBlocks,
      output: longOutput,
      ansi: ansiToFragment,
      badge,
      fmtInt,
      fmtCost,
      normaliseContent,
      article,
      header,
      visibility,
      index,
      streaming,
      callAnchor: (id) => this.anchor("call", id),
      resultAnchor: (id) => this.anchor("result", id),
      linkToResult: (id) => this.link("result", id),
      linkToCall: (id) => this.link("call", id),
    };
  }

  renderMessage(message, visibility, index, streaming) {
    const isObj = message !== null && typeof message === "object" && !Array.isArray(message);
    const role = isObj && typeof message.role === "string" ? message.role : "";
    const badges = h("span", { class: "pi-badges" });
    const time = isObj ? fmtTime(message.timestamp) : "";
    const header = h(
      "header",
      { class: "pi-msg-head" },
      h("span", { class: "pi-role-label" }, ROLE_LABELS[role] ?? (role || "(no role)")),
      badges,
      streaming ? h("span", { class: "pi-streaming-indicator", role: "status" }, "streaming") : null,
      time ? h("time", { class: "pi-time" }, time) : null,
    );
    const body = h("div", { class: "pi-msg-body" });
    const article = h(
      "article",
      {
        class: ["pi-msg", `pi-role-${idPart(role || "none")}`, visibility !== "both" && `pi-vis-${visibility}`],
        dataset: { role, visibility, index },
      },
      header,
      body,
    );
    if (streaming) article.dataset.streaming = "true";
    if (visibility === "ui" || visibility === "none") {
      badges.appendChild(badge("not sent to the LLM", "ui", "Not part of the LLM context"));
    }
    if (visibility === "llm") badges.appendChild(badge("LLM only", "llm", "Hidden in the UI; still sent to the LLM"));
    if (visibility === "none") badges.appendChild(badge("hidden", "llm", "display: false, and not sent to the LLM either"));
    if (HIDDEN.has(visibility) && !this.showHidden() && !streaming) article.hidden = true;

    const x = this.helpers(article, badges, visibility, index, streaming);
    const loadError = this.customErrors.get(role);
    const render = isObj ? (this.custom.get(role) ?? getRenderer(role)) : undefined;
    if (loadError) {
      this.renderFailure(body, x, message, `Custom renderer for role "${role}" failed to load: ${loadError.message}`);
    } else if (!render) {
      fallbackRenderer(isObj ? message : { role: undefined, value: message }, body, x);
    } else {
      try {
        render(message, body, x);
      } catch (err) {
        const custom = this.custom.has(role) ? "Custom renderer" : "Renderer";
        this.renderFailure(body, x, message, `${custom} for role "${role}" failed: ${err?.message ?? err}`);
      }
    }
    // One badge for every role, custom renderers' included: a known secret was masked in this message.
    if (isObj && !article.querySelector("[data-badge=masked]") && maskedIn(message)) badges.appendChild(maskedBadge(x));
    return article;
  }

  renderFailure(body, x, message, text) {
    body.textContent = "";
    body.appendChild(h("div", { class: "pi-error-box pi-renderer-error", role: "alert", dataset: { rendererError: "true" } }, text));
    try {
      fallbackRenderer(message, body, x);
    } catch {
      body.appendChild(h("pre", { class: "pi-json" }, String(message)));
    }
  }
}

/** anywidget: once per model, before any view. Applies the kernel's live deltas to the model. */
function initialize({ model }) {
  return followDeltas(model, ["messages", "visibility", "streaming"], applyTranscriptDelta);
}

/** anywidget entry point. Returns the cleanup function. */
function render({ model, el }) {
  const view = new TranscriptView(model, el);
  const quiet = announceState(el, "transcript", model); // a saved output around the view keeps the latest state
  return () => {
    quiet();
    view.destroy();
  };
}

export default { initialize, render };
