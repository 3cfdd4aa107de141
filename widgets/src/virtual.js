// A list that puts in the DOM only the items near the viewport (virtual scrolling), for long transcripts and
// inspectors. The page scrolls as usual (the notebook's scroller, not a box of our own): two spacers above and
// below the drawn items keep the list as tall as all its items. Heights are measured once drawn; an item not
// drawn yet counts as the average of those measured (or what `estimate` says, e.g. 0 for a hidden item).
import { doc, h } from "./dom.js";

/** Lists this long or longer are drawn virtually; shorter ones in full. */
export const VIRTUAL_MIN = 150;
const OVERSCAN_PX = 600; // drawn beyond the viewport, above and below
const SPARE = 200; // items kept (detached) after they scrolled out, to redraw them for free
const DEFAULT_HEIGHT = 72;

function scrollParentOf(el) {
  const win = el.ownerDocument?.defaultView;
  for (let node = el.parentElement; node; node = node.parentElement) {
    const style = win?.getComputedStyle?.(node);
    if (style && /(auto|scroll|overlay)/.test(style.overflowY) && node.scrollHeight > node.clientHeight) return node;
  }
  return null;
}

export class VirtualList {
  /**
   * @param container the element whose children the list owns (two spacers and the drawn items)
   * @param render (i) => Element, the item's element (called again only after `reset`/`invalidate`)
   * @param estimate (i, average) => px, the height of an item not measured yet (default: average)
   * @param onDraw (elements) called after new elements were put in the DOM (e.g. to point links)
   */
  constructor(container, { render, estimate, onDraw } = {}) {
    this.container = container;
    this.render = render;
    this.estimate = estimate ?? ((_i, avg) => avg);
    this.onDraw = onDraw ?? (() => {});
    this.count = 0;
    this.heights = []; // measured px, or undefined
    this.els = new Map(); // index → element in the DOM
    this.spare = new Map(); // index → element scrolled out (most recent last)
    this.start = 0;
    this.end = 0;
    this.offsets = null; // prefix sums of the heights, recomputed when null
    this.measured = { sum: 0, n: 0 };
    this.fresh = new Set(); // items drawn since the last measure
    this.measureAll = true; // measure every drawn item next time (a resize, an item that changed by itself)
    this.topSpacer = h("div", { class: "pi-vspacer", "aria-hidden": "true" });
    this.bottomSpacer = h("div", { class: "pi-vspacer", "aria-hidden": "true" });
    container.append(this.topSpacer, this.bottomSpacer);
    this.cancelFrame = null;
    this.onScroll = () => this.schedule();
    const d = doc();
    d.addEventListener("scroll", this.onScroll, { capture: true, passive: true });
    d.defaultView?.addEventListener("resize", this.onScroll, { passive: true });
    const RO = d.defaultView?.ResizeObserver;
    if (RO) {
      let width = null;
      this.resizeObserver = new RO((entries) => {
        const w = Math.round(entries[entries.length - 1].contentRect.width);
        if (width !== null && w !== width) this.remeasureAll(); // text wraps differently: heights change
        else this.schedule(); // e.g. shown for the first time: measure what was drawn
        width = w;
      });
      this.resizeObserver.observe(container);
    }
  }

  destroy() {
    const d = doc();
    d.removeEventListener("scroll", this.onScroll, { capture: true });
    d.defaultView?.removeEventListener("resize", this.onScroll);
    this.resizeObserver?.disconnect();
    this.cancelFrame?.();
    for (const el of this.els.values()) el.remove();
    this.els.clear();
    this.spare.clear();
    this.topSpacer.remove();
    this.bottomSpacer.remove();
  }

  /** The list now has `count` items; those from `from` on are new or changed (drawn again). */
  setCount(count, from = count) {
    from = Math.max(0, Math.min(from, this.count, count));
    for (const map of [this.els, this.spare]) {
      for (const [i, el] of map) {
        if (i >= from) {
          el.remove();
          map.delete(i);
        }
      }
    }
    for (let i = from; i < this.heights.length; i++) if (this.heights[i] !== undefined) this.forget(i);
    this.heights.length = count;
    this.count = count;
    this.offsets = null;
    this.update();
  }

  /** Draw item `i` again (its content changed). */
  invalidate(i) {
    this.els.get(i)?.remove();
    this.els.delete(i);
    this.spare.delete(i);
    this.forget(i);
    this.offsets = null;
  }

  /** Measure the drawn items again (one changed its height by itself, e.g. expanded). */
  remeasure() {
    this.measureAll = true;
    this.schedule();
  }

  /** Forget every height (the width changed) and measure again. */
  remeasureAll() {
    this.heights = new Array(this.count);
    this.measured = { sum: 0, n: 0 };
    this.offsets = null;
    this.remeasure();
  }

  /** Heights of items not drawn changed (e.g. hidden ones are shown): forget those matching `test`. */
  forgetWhere(test) {
    for (let i = 0; i < this.count; i++) if (this.heights[i] !== undefined && test(i)) this.forget(i);
    this.offsets = null;
  }

  forget(i) {
    const height = this.heights[i];
    if (height !== undefined && height > 0) {
      this.measured.sum -= height;
      this.measured.n--;
    }
    this.heights[i] = undefined;
  }

  average() {
    return this.measured.n ? this.measured.sum / this.measured.n : DEFAULT_HEIGHT;
  }

  heightOf(i) {
    const height = this.heights[i];
    return height !== undefined ? height : this.estimate(i, this.average());
  }

  computeOffsets() {
    if (this.offsets && this.offsets.length === this.count + 1) return this.offsets;
    const offsets = new Float64Array(this.count + 1);
    for (let i = 0; i < this.count; i++) offsets[i + 1] = offsets[i] + this.heightOf(i);
    this.offsets = offsets;
    return offsets;
  }

  /** The first index whose bottom is below `y` (px from the list's top). */
  indexAt(y) {
    const offsets = this.computeOffsets();
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** [top, bottom] of the visible part of the page, in px from the list's top. */
  viewport() {
    const win = this.container.ownerDocument?.defaultView;
    const rect = this.container.getBoundingClientRect();
    let top = 0;
    let bottom = win?.innerHeight || 800;
    if (this.container.isConnected && (!this.scrollerChecked || (this.scroller && !this.scroller.isConnected))) {
      this.scroller = scrollParentOf(this.container); // looked up once per attachment: it reads styles
      this.scrollerChecked = true;
    }
    if (this.scroller) {
      const s = this.scroller.getBoundingClientRect();
      top = Math.max(top, s.top);
      bottom = Math.min(bottom, s.bottom);
    }
    return [top - rect.top, bottom - rect.top];
  }

  /** Whether the page lays the list out (not in jsdom, not in a hidden tab). */
  laidOut() {
    if (!this.container.isConnected) {
      this.scrollerChecked = false;
      return false;
    }
    return this.container.offsetParent !== null && this.container.getClientRects().length > 0;
  }

  schedule() {
    if (this.cancelFrame) return;
    const win = doc().defaultView;
    const raf = win?.requestAnimationFrame ?? globalThis.requestAnimationFrame;
    if (typeof raf === "function") {
      const id = raf(() => {
        this.cancelFrame = null;
        this.update();
      });
      this.cancelFrame = () => (win?.cancelAnimationFrame ?? globalThis.cancelAnimationFrame)?.(id);
    } else {
      const id = setTimeout(() => {
        this.cancelFrame = null;
        this.update();
      }, 16);
      this.cancelFrame = () => clearTimeout(id);
    }
  }

  /**
   * Draw the items in (and near) the viewport and size the spacers. Reads first, then writes, so no layout is
   * forced: what the last frame drew is measured now (the page laid it out since), what this one draws is
   * measured in the next frame.
   */
  update() {
    const laidOut = this.laidOut();
    if (laidOut && !this.wasLaidOut) this.measureAll = true; // drawn before the page laid it out
    this.wasLaidOut = laidOut;
    if (laidOut) this.measure();
    const [top, bottom] = this.viewport();
    const total = this.computeOffsets()[this.count];
    const from = Math.max(0, Math.min(top, total) - OVERSCAN_PX);
    const to = Math.max(0, Math.min(bottom, total) + OVERSCAN_PX);
    let start = this.indexAt(from);
    let end = Math.min(this.count, this.indexAt(to) + 1);
    if (end <= start) {
      start = Math.min(start, Math.max(0, this.count - 1));
      end = Math.min(this.count, start + 1);
    }
    this.draw(start, end);
    if (laidOut && (this.fresh.size || this.measureAll)) this.schedule();
  }

  draw(start, end) {
    for (const [i, el] of this.els) {
      if (i < start || i >= end) {
        el.remove();
        this.els.delete(i);
        this.spare.delete(i);
        this.spare.set(i, el);
      }
    }
    while (this.spare.size > SPARE) this.spare.delete(this.spare.keys().next().value);
    const fresh = [];
    let cursor = this.topSpacer;
    for (let i = start; i < end; i++) {
      let el = this.els.get(i);
      if (!el) {
        el = this.spare.get(i);
        this.spare.delete(i);
        if (!el) {
          el = this.render(i);
          fresh.push(el);
        }
        this.els.set(i, el);
        if (this.heights[i] === undefined) this.fresh.add(i);
      }
      if (cursor.nextSibling !== el) this.container.insertBefore(el, cursor.nextSibling);
      cursor = el;
    }
    this.start = start;
    this.end = end;
    this.sizeSpacers();
    if (fresh.length) this.onDraw(fresh);
  }

  sizeSpacers() {
    const offsets = this.computeOffsets();
    this.topSpacer.style.height = `${offsets[this.start]}px`;
    this.bottomSpacer.style.height = `${offsets[this.count] - offsets[this.end]}px`;
  }

  /** Measure the items drawn since the last time (or all drawn ones after `remeasure`): the distance from an
   * item's top to the next one's. True if a height changed. Nothing new drawn: no layout is forced. */
  measure() {
    const all = this.measureAll;
    const wanted = all ? null : [...this.fresh].filter((i) => i >= this.start && i < this.end);
    this.measureAll = false;
    this.fresh.clear();
    if (wanted && !wanted.length) return false;
    const tops = new Map();
    const topOf = (i) => {
      if (!tops.has(i)) {
        const el = i < this.end ? this.els.get(i) : this.bottomSpacer;
        tops.set(i, el?.isConnected ? el.getBoundingClientRect().top : null);
      }
      return tops.get(i);
    };
    let changed = false;
    const indices = wanted ?? Array.from({ length: this.end - this.start }, (_x, k) => this.start + k);
    for (const i of indices) {
      const [here, next] = [topOf(i), topOf(i + 1)];
      if (here === null || next === null) continue; // taken out since it was drawn
      const height = Math.max(0, next - here);
      const old = this.heights[i];
      if (old === undefined || Math.abs(old - height) > 0.5) {
        this.forget(i);
        this.heights[i] = height;
        if (height > 0) {
          this.measured.sum += height;
          this.measured.n++;
        }
        changed = true;
      }
    }
    if (changed) this.offsets = null;
    return changed;
  }

  /** The element of item `i`, drawn (and scrolled to, when `scroll`) if needed. */
  reveal(i, { scroll = true } = {}) {
    if (i < 0 || i >= this.count) return null;
    if (!this.els.has(i) && scroll && this.laidOut()) {
      const offsets = this.computeOffsets();
      const scroller = this.scroller ?? scrollParentOf(this.container);
      const rect = this.container.getBoundingClientRect();
      if (scroller) {
        const s = scroller.getBoundingClientRect();
        scroller.scrollTop += rect.top + offsets[i] - s.top - s.height / 3;
      } else {
        const win = this.container.ownerDocument?.defaultView;
        win?.scrollBy?.(0, rect.top + offsets[i] - (win.innerHeight || 0) / 3);
      }
      this.update();
    }
    if (!this.els.has(i)) this.draw(Math.max(0, i - 5), Math.min(this.count, i + 20));
    return this.els.get(i) ?? null;
  }

  /** The drawn elements, in order. */
  drawn() {
    return [...this.els.entries()].sort((a, b) => a[0] - b[0]).map(([, el]) => el);
  }
}
