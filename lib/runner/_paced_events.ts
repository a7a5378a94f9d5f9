/**
 * A session's events, paced for the control plane: while the agent is
 * quiet, control requests are still consumed at every idle tick, and the
 * attempt's watch looks for a stall.
 *
 * @module
 */

import type { ProviderEvent } from "../shared/events.ts";
import type { Session } from "../providers/provider.ts";
import { IDLE_TICK_MS, type RunContext } from "./_run_context.ts";
import type { AttemptWatch } from "./_attempt_watch.ts";

/**
 * Waits with a deadline, for a stream of many short waits: a wait that lasts
 * longer than `ms` resolves with `null`. One timer serves every wait and is
 * re-armed only when it fires (about once per `ms`), not once per event: a
 * timer per event cost more than the rest of an in-memory event's path.
 */
class IdleWatch {
  readonly #ms: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #since = 0;
  #wake: ((value: null) => void) | null = null;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** The promise's value, or `null` when `ms` pass first. */
  async within<T>(promise: Promise<T>): Promise<T | null> {
    this.#since = performance.now();
    const idle = new Promise<null>((resolve) => {
      this.#wake = resolve;
    });
    this.#arm();
    try {
      return await Promise.race([promise, idle]);
    } finally {
      this.#wake = null;
    }
  }

  /** Ends the current wait at once, as if `ms` had passed. */
  wake(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.(null);
  }

  /** Clears the timer. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const due = this.#since + this.#ms - performance.now();
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, due));
  }

  #fire(): void {
    this.#timer = undefined;
    const wake = this.#wake;
    // Nobody waits: the next wait arms the timer again.
    if (wake === null) return;
    if (performance.now() - this.#since < this.#ms) return this.#arm();
    this.#wake = null;
    wake(null);
  }
}

/**
 * Yields a session's events, consuming control requests at least once a
 * second while the provider is quiet (a long think, a slow tool), so a view
 * change or a steer never waits for the next event.
 */
export async function* paced(
  ctx: RunContext,
  session: Session,
  attempt: AttemptWatch,
): AsyncGenerator<ProviderEvent> {
  const iterator = session.events[Symbol.asyncIterator]();
  const watch = new IdleWatch(IDLE_TICK_MS);
  // An agent's acknowledgement of a steer may come with no event after it
  // (Codex's echo): it is reported at once, not at the next idle tick.
  ctx.steers.onKnown = () => watch.wake();
  try {
    for (;;) {
      const next = iterator.next();
      let result: IteratorResult<ProviderEvent> | null = null;
      while (result === null) {
        result = await watch.within(next);
        if (result === null) {
          await attempt.idle();
          await ctx.boundary(true);
          if (ctx.aborted) session.interrupt();
        }
      }
      if (result.done) return;
      yield result.value;
    }
  } finally {
    ctx.steers.onKnown = null;
    watch.stop();
    await iterator.return?.();
  }
}
