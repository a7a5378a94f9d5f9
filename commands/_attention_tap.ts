/**
 * `watch`'s ear on the event stream: between two samples a run may raise
 * attention and clear it again (a stall the next event ended, a refused
 * permission the next attempt moved past). The snapshot then never shows
 * it, but the stream keeps every `attention_needed`, so the tap follows the
 * watched run's events and keeps the first one it hears.
 *
 * @module
 */

import type { RunRef } from "../lib/control/paths.ts";
import { events } from "../lib/control/events.ts";
import { attentionOf } from "../lib/control/snapshot.ts";
import type { Attention } from "../lib/shared/snapshot_schema.ts";
import { sleep } from "../lib/shared/sleep.ts";

/** Follows a watched run's events for `attention_needed`. */
export class AttentionTap implements AsyncDisposable {
  /** The run of the first sample (`null`: none); `undefined` before it. */
  #firstRun: string | null | undefined = undefined;
  /** The run being followed, and the seq to follow it from next. */
  #run: string | null = null;
  #following = false;
  #next = 1;
  #stop = new AbortController();
  #done: Promise<void> = Promise.resolve();
  #heard: Attention | null = null;

  /** The first attention the run raised while it was watched, if any. */
  get heard(): Attention | null {
    return this.#heard;
  }

  /**
   * Takes a sample's run. A run already there at the first sample is
   * followed from just after that sample's snapshot (what came before is
   * history); a run that began after the watch did is followed from its
   * start. A follow that failed (the runner gone, a file not there yet) is
   * taken up again where it stopped.
   *
   * @param ref The sample's run (`null`: no run yet).
   * @param lastSeq The last seq the sample's snapshot had folded in.
   */
  track(ref: RunRef | null, lastSeq: number | null): void {
    const runId = ref?.run_id ?? null;
    if (this.#firstRun === undefined) {
      this.#firstRun = runId;
      if (ref !== null) this.#next = (lastSeq ?? 0) + 1;
    }
    if (ref === null || runId === null) return;
    if (runId !== this.#run) {
      this.#stop.abort();
      this.#stop = new AbortController();
      this.#run = runId;
      this.#following = false;
      if (runId !== this.#firstRun) this.#next = 1;
    }
    if (this.#following) return;
    this.#following = true;
    const signal = this.#stop.signal;
    this.#done = this.#follow(ref, signal);
  }

  async #follow(ref: RunRef, signal: AbortSignal): Promise<void> {
    try {
      for await (const event of events(ref, { from: this.#next, signal })) {
        if (signal.aborted) return;
        this.#next = event.seq + 1;
        if (event.type !== "attention_needed" || this.#heard !== null) {
          continue;
        }
        // Read as the snapshot's is: a line with an unknown reason is not one.
        this.#heard = attentionOf({ ...event.data, since: event.at });
      }
    } catch {
      // The sample says why (the runner is gone, another run took over);
      // the next one takes the follow up again.
      if (!signal.aborted) this.#following = false;
    }
  }

  /**
   * Waits, at most `ms`, for the follow to reach the run's end: a run the
   * sample saw end may have raised attention in its last moments.
   */
  async settle(ms: number): Promise<void> {
    const stop = new AbortController();
    await Promise.race([this.#done, sleep(ms, stop.signal)]);
    stop.abort();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}
