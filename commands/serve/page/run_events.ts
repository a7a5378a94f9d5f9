/**
 * A run page's event list: the events shown, in seq order in blocks of
 * CHUNK, the oldest beyond MAX_SHOWN leaving while the reader follows the
 * newest, and earlier ones brought back on request (from `/rendered`).
 *
 * @module
 */

import { node } from "./dom.ts";
import { isNum, type TimelineEvent } from "./shared.ts";

/** One event as the page is sent it: its seq, type and rendered lines. */
export interface ShownItem {
  seq: number;
  type: string;
  lines?: string[];
  /** The event itself, when it changes the timeline. */
  event?: TimelineEvent;
}

/**
 * A page following a long run keeps its newest events; older ones come back
 * on request. Layout and paint cost grows with every node kept.
 */
const MAX_SHOWN = 1000;
const EARLIER_STEP = 200;
/** A redraw that brings this many events or more makes the next wait BUSY_MS. */
const BURST = 4;
const BUSY_MS = 100;
/**
 * Events sit in blocks of CHUNK: a new one touches its own block, not a list
 * of a thousand (each frame's layout and paint walk stays short).
 */
const CHUNK = 50;

function fill(el: HTMLElement, item: ShownItem): void {
  const lines = Array.isArray(item.lines) ? item.lines : [];
  el.className = lines.length === 0 ? "event empty" : "event";
  let pre = el.firstChild as HTMLElement | null;
  if (!pre) pre = el.appendChild(node("pre"));
  pre.textContent = lines.join("\n");
}

/** The events shown on a run page. */
export class EventList {
  readonly #box: HTMLElement;
  readonly #base: string;
  readonly #seen = new Map<number, HTMLElement>();
  /** The oldest seq shown, and the newest with none missing before it. */
  first: number | null = null;
  rendered = 0;
  /** The newest seq the stream has sent. */
  latest = 0;
  /** Whether the reader follows the newest events (scrolled to the end). */
  stick = true;
  #shown = 0;
  #tidying: ReturnType<typeof setTimeout> | null = null;
  #queue: ShownItem[] = [];
  #lastFlush = 0;
  #lastCount = 0;
  #loadingEarlier = false;

  /** The list in `box`, of the run at `base`, and the events it holds. */
  constructor(box: HTMLElement, base: string) {
    this.#box = box;
    this.#base = base;
    const shown = [...box.querySelectorAll<HTMLElement>(".event[data-seq]")];
    shown.forEach((el, i) => {
      if (i % CHUNK === 0) box.appendChild(node("div", "chunk"));
      box.lastChild!.appendChild(el);
      const seq = Number(el.getAttribute("data-seq"));
      this.#seen.set(seq, el);
      this.#shown++;
      if (this.first === null || seq < this.first) this.first = seq;
      if (seq > this.rendered) this.rendered = seq;
    });
    this.latest = this.rendered;
    box.addEventListener("scroll", () => this.stick = this.#atBottom());
    this.scrollDown();
    this.#earlierNote();
  }

  /** The types of the events shown, oldest first (for the run's end). */
  shownTypes(): [number, string][] {
    return [...this.#seen].map(([seq, el]) => [
      seq,
      el.getAttribute("data-type") ?? "",
    ]);
  }

  #atBottom(): boolean {
    const box = this.#box;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  }

  scrollDown(): void {
    if (this.stick) this.#box.scrollTop = this.#box.scrollHeight;
  }

  #insert(item: ShownItem): void {
    const seq = Number(item.seq);
    if (!isNum(seq) || this.#seen.has(seq)) return;
    const el = node("div", "event");
    el.setAttribute("data-seq", String(seq));
    el.setAttribute("data-type", String(item.type));
    fill(el, item);
    let after: HTMLElement | null = null;
    for (let k = seq + 1; k <= this.latest; k++) {
      after = this.#seen.get(k) ?? null;
      if (after) break;
    }
    if (after) {
      after.parentNode!.insertBefore(el, after);
    } else {
      let chunk = this.#box.lastElementChild;
      if (
        !chunk || chunk.className !== "chunk" ||
        chunk.childElementCount >= CHUNK
      ) {
        chunk = this.#box.appendChild(node("div", "chunk"));
      }
      chunk.appendChild(el);
    }
    this.#seen.set(seq, el);
    this.#shown++;
    if (this.first === null || seq < this.first) this.first = seq;
  }

  /** One rendered event from the stream: shown, or shown again the new way. */
  take(item: ShownItem): void {
    const seq = Number(item.seq);
    if (!isNum(seq)) return;
    if (seq > this.latest) this.latest = seq;
    this.#queue.push(item);
    if (this.#tidying !== null) return;
    // While events pour in (the last redraw brought BURST or more), the
    // list is redrawn every BUSY_MS: nobody reads faster, and each redraw
    // costs the machine the page runs on. A trickle still shows at once.
    const wait = this.#lastCount >= BURST
      ? Math.max(0, this.#lastFlush + BUSY_MS - Date.now())
      : 0;
    this.#tidying = setTimeout(() => this.#flush(), wait);
  }

  /**
   * Shows what came since the last time, then trims and scrolls: once for
   * however many events came together, and never a new event shown before
   * the list follows it.
   */
  #flush(): void {
    this.#tidying = null;
    this.#lastFlush = Date.now();
    this.#lastCount = this.#queue.length;
    for (const item of this.#queue.splice(0)) {
      const seq = Number(item.seq);
      const el = this.#seen.get(seq);
      if (el) fill(el, item);
      else if (this.first === null || seq >= this.first) this.#insert(item);
    }
    while (this.#seen.has(this.rendered + 1)) this.rendered++;
    this.#trim();
    this.scrollDown();
  }

  /**
   * Following the newest events: the oldest beyond MAX_SHOWN leave the page
   * (never while the reader is scrolled up in them).
   */
  #trim(): void {
    if (!this.stick || this.first === null || this.#shown <= MAX_SHOWN) return;
    while (this.#shown > MAX_SHOWN && this.first < this.rendered) {
      const el = this.#seen.get(this.first);
      if (el) {
        const parent = el.parentNode as HTMLElement;
        el.remove();
        if (parent !== this.#box && parent.childElementCount === 0) {
          parent.remove();
        }
        this.#seen.delete(this.first);
        this.#shown--;
      }
      this.first++;
    }
    this.#earlierNote();
  }

  /** "N earlier events not shown", with a button that brings some back. */
  #earlierNote(): void {
    let note = this.#box.querySelector<HTMLElement>(".earlier");
    const hidden = this.first === null ? 0 : this.first - 1;
    if (hidden <= 0) {
      note?.remove();
      return;
    }
    if (!note) {
      note = node("p", "earlier");
      this.#box.insertBefore(note, this.#box.firstChild);
    }
    note.setAttribute("data-earlier", String(hidden));
    note.textContent = `${hidden} earlier event${
      hidden === 1 ? "" : "s"
    } not shown `;
    const more = node(
      "button",
      "show-earlier",
      `show ${Math.min(EARLIER_STEP, hidden)} earlier`,
    );
    more.setAttribute("type", "button");
    more.addEventListener("click", () => this.#showEarlier());
    note.appendChild(more);
  }

  #showEarlier(): void {
    if (this.#loadingEarlier || this.first === null || this.first <= 1) return;
    this.#loadingEarlier = true;
    this.stick = false;
    const to = this.first - 1;
    const from = Math.max(1, this.first - EARLIER_STEP);
    fetch(this.#base + "/rendered?from=" + from + "&to=" + to, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    }).then((res) => {
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return res.json();
    }).then((list: unknown) => {
      const height = this.#box.scrollHeight;
      if (Array.isArray(list)) {
        for (const item of list) this.#insert(item as ShownItem);
      }
      // Keep what the reader was looking at in place.
      this.#box.scrollTop += this.#box.scrollHeight - height;
      this.#earlierNote();
      this.#loadingEarlier = false;
    }, () => {
      this.#loadingEarlier = false;
    });
  }
}
