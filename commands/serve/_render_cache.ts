/**
 * The studio text of a run's events, rendered once per run and view: a
 * page asks for its events in small batches, and each batch must read as
 * one rendering of the whole run would (the renderer remembers tool calls,
 * streamed text and the run's totals). One renderer per run and view is fed
 * each event once, in order, and its newest results are kept for the
 * batches that ask for them; a range older than what is kept is rendered
 * again from seq 1.
 *
 * @module
 */

import type { EventLine, RunRef, ViewSettings } from "../../mod.ts";
import { eventRenderer } from "./_events_view.ts";
import type { RenderedEvent } from "./_model.ts";

/** How many rendered events each run and view keeps. */
const KEEP = 5_000;
/** How many runs and views are kept rendering at once. */
const ENTRIES = 16;

/** Reads a run's stored events from `from` to `to` (inclusive). */
export type ReadEvents = (
  ref: RunRef,
  from: number,
  to: number,
) => Promise<EventLine[]>;

interface Entry {
  render: ReturnType<typeof eventRenderer>;
  /** The next seq the renderer has not seen. */
  next: number;
  /** The newest rendered events, in seq order. */
  recent: RenderedEvent[];
  /** One request at a time feeds the renderer. */
  queue: Promise<unknown>;
}

function viewKey(view: ViewSettings): string {
  return `${view.tool_output}/${view.thinking}/${view.diff}`;
}

/** Rendered events per run and view, fed incrementally. */
export class RenderCache {
  readonly #read: ReadEvents;
  readonly #keep: number;
  readonly #entries = new Map<string, Entry>();

  /** A cache that reads events with `read` and keeps `keep` per run and view. */
  constructor(read: ReadEvents, keep: number = KEEP) {
    this.#read = read;
    this.#keep = keep;
  }

  /** The events `from`..`to` of a run, rendered as one pass from seq 1 would. */
  rendered(
    ref: RunRef,
    view: ViewSettings,
    from: number,
    to: number,
  ): Promise<RenderedEvent[]> {
    const key = `${ref.state_root}\0${ref.run_id}\0${viewKey(view)}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = {
        render: eventRenderer(view),
        next: 1,
        recent: [],
        queue: Promise.resolve(),
      };
      if (this.#entries.size >= ENTRIES) {
        // The least recently used goes (a Map keeps insertion order).
        this.#entries.delete(this.#entries.keys().next().value!);
      }
    } else {
      this.#entries.delete(key);
    }
    this.#entries.set(key, entry);
    const work = entry.queue.then(() =>
      this.#range(entry, ref, view, from, to)
    );
    entry.queue = work.catch(() => {});
    return work;
  }

  async #range(
    entry: Entry,
    ref: RunRef,
    view: ViewSettings,
    from: number,
    to: number,
  ): Promise<RenderedEvent[]> {
    const oldest = entry.recent[0]?.seq ?? entry.next;
    if (from < oldest) {
      // Older than what is kept: one pass from the start, not kept.
      const render = eventRenderer(view);
      const shown: RenderedEvent[] = [];
      for (const { event } of await this.#read(ref, 1, to)) {
        const one = render(event);
        if (event.seq >= from) shown.push(one);
      }
      return shown;
    }
    if (to >= entry.next) {
      for (const { event } of await this.#read(ref, entry.next, to)) {
        if (event.seq < entry.next) continue;
        entry.recent.push(entry.render(event));
        entry.next = event.seq + 1;
      }
    }
    // The kept events are consecutive seqs (a stream has no gaps): the
    // range is a slice; were one missing, a scan.
    const base = entry.recent[0]?.seq ?? from;
    const consecutive = entry.recent.length === 0 ||
      entry.recent.at(-1)!.seq - base === entry.recent.length - 1;
    const shown = consecutive
      ? entry.recent.slice(Math.max(0, from - base), Math.max(0, to - base + 1))
      : entry.recent.filter((one) => one.seq >= from && one.seq <= to);
    if (entry.recent.length > this.#keep) {
      entry.recent.splice(0, entry.recent.length - this.#keep);
    }
    return shown;
  }
}
