/**
 * One follower per run for every connection that watches it: many browsers
 * on a run cost one read of each new line, one parse and one SSE encoding,
 * not one of each per browser. A hub keeps its newest messages, so a
 * connection that starts (or reconnects) near the live end joins it with no
 * gap and no duplicate; one further behind catches up with a follower of its
 * own first, then joins.
 *
 * @module
 */

import { errorText, type EventLine } from "../../mod.ts";

/** One message of a shared stream: its position (`seq`, or a count) and bytes. */
export interface Piece {
  /** Its position: consecutive, from the hub's first. */
  at: number;
  /** The encoded SSE message. */
  bytes: Uint8Array;
  /** The event it encodes, for a subscriber that takes pieces. */
  line?: EventLine;
}

/** A connection fed by a hub. */
export interface Subscriber {
  /** The next position it needs; the hub advances it. */
  next: number;
  /** Takes bytes; `false` when the connection is gone (or was dropped). */
  write(bytes: Uint8Array): boolean;
  /**
   * Takes the pieces themselves instead of their bytes (a stream fed from
   * another's follower); `false` when it is gone.
   */
  take?(pieces: readonly Piece[]): boolean;
  /** The stream reached its end (`run_finished`). */
  finish(): void;
  /** The stream ended early, for this reason. */
  end(reason: string): void;
}

/** Where a hub's stream comes from: batches of pieces, from a position. */
export type PieceSource = (
  from: number,
  signal: AbortSignal,
) => AsyncIterable<Piece[]>;

/**
 * The shortest time between two sends to the connections while a stream is
 * busy: a run writing an event every few milliseconds reaches each browser
 * at most this often, several events to a write, rather than one write per
 * event. The first event after a quiet spell goes out at once.
 */
export const SEND_EVERY_MS = 16;

/** Sends `pieces` to `subscriber` (`bytes` when already joined). */
function send(
  subscriber: Subscriber,
  pieces: readonly Piece[],
  bytes?: Uint8Array,
): boolean {
  if (subscriber.take !== undefined) return subscriber.take(pieces);
  return subscriber.write(bytes ?? joined(pieces));
}

/** One bytes array from several. */
function joined(pieces: readonly Piece[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!.bytes;
  let size = 0;
  for (const piece of pieces) size += piece.bytes.length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece.bytes, offset);
    offset += piece.bytes.length;
  }
  return out;
}

/** A run's shared follower, its newest pieces and its subscribers. */
export class Hub {
  readonly #keep: number;
  readonly #sendEveryMs: number;
  readonly #abort = new AbortController();
  readonly #subscribers = new Set<Subscriber>();
  /** The newest pieces, oldest first, from index #head. */
  #kept: Piece[] = [];
  #head = 0;
  /** The position the follower reads next. */
  #next: number;
  #ended: { reason: string | null } | null = null;
  readonly #onDone: () => void;
  /** Pieces read but not yet sent (the stream is busy), and when it last sent. */
  #held: Piece[] = [];
  #sentAt = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  /**
   * Starts following `source` from `from`, keeping the newest `keep`
   * pieces; `onDone` runs once the hub ends or its last subscriber leaves.
   * Sends go out at most every `sendEveryMs` while the stream is busy.
   */
  constructor(
    source: PieceSource,
    from: number,
    keep: number,
    onDone: () => void,
    sendEveryMs: number = SEND_EVERY_MS,
  ) {
    this.#keep = keep;
    this.#sendEveryMs = sendEveryMs;
    this.#next = from;
    this.#onDone = onDone;
    void this.#run(source, from);
  }

  /** Whether it has ended (or was stopped). */
  get ended(): boolean {
    return this.#ended !== null || this.#abort.signal.aborted;
  }

  /** How many connections it feeds. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** The oldest position a joining subscriber can start at. */
  get oldest(): number {
    if (this.#head < this.#kept.length) return this.#kept[this.#head]!.at;
    return this.#held.length > 0 ? this.#held[0]!.at : this.#next;
  }

  /** Whether a subscriber needing `next` can join with no gap. */
  covers(next: number): boolean {
    return !this.ended && next >= this.oldest;
  }

  /**
   * Feeds `subscriber` from its `next`: what is kept, at once, then every
   * new batch. With no gap only when {@linkcode covers} says so.
   */
  join(subscriber: Subscriber): void {
    const kept = [...this.#kept.slice(this.#head), ...this.#held].filter((
      piece,
    ) => piece.at >= subscriber.next);
    this.#subscribers.add(subscriber);
    if (kept.length > 0) {
      subscriber.next = kept.at(-1)!.at + 1;
      if (!send(subscriber, kept)) this.leave(subscriber);
    }
  }

  /** Stops feeding `subscriber`; the hub stops when none is left. */
  leave(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    if (this.#subscribers.size === 0) this.stop();
  }

  /** Stops following. */
  stop(): void {
    if (this.#abort.signal.aborted) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#abort.abort();
    this.#onDone();
  }

  async #run(source: PieceSource, from: number): Promise<void> {
    let reason: string | null = null;
    try {
      for await (const batch of source(from, this.#abort.signal)) {
        if (batch.length > 0) this.#hold(batch);
      }
    } catch (error) {
      reason = errorText(error);
    }
    if (this.#abort.signal.aborted) return;
    this.#flush();
    this.#ended = { reason };
    // Gone from the registry first: a connection arriving now starts anew.
    this.stop();
    for (const subscriber of this.#subscribers) {
      if (reason === null) subscriber.finish();
      else subscriber.end(reason);
    }
    this.#subscribers.clear();
  }

  /** Sends `batch` now, or with what follows within the send pause. */
  #hold(batch: Piece[]): void {
    this.#held.push(...batch);
    if (this.#timer !== null) return;
    const wait = this.#sentAt + this.#sendEveryMs - performance.now();
    if (wait <= 0) {
      this.#flush();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#flush();
    }, wait);
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#held.length === 0) return;
    const batch = this.#held;
    this.#held = [];
    this.#sentAt = performance.now();
    this.#publish(batch);
  }

  #publish(batch: Piece[]): void {
    this.#next = batch.at(-1)!.at + 1;
    this.#kept.push(...batch);
    const over = this.#kept.length - this.#head - this.#keep;
    if (over > 0) this.#head += over;
    if (this.#head > this.#keep) {
      this.#kept = this.#kept.slice(this.#head);
      this.#head = 0;
    }
    const all = [...this.#subscribers].some((one) => one.take === undefined)
      ? joined(batch)
      : undefined;
    const first = batch[0]!.at;
    for (const subscriber of [...this.#subscribers]) {
      if (subscriber.next > this.#next - 1) continue; // ahead: it has these
      const sent = subscriber.next <= first
        ? send(subscriber, batch, all)
        : send(
          subscriber,
          batch.filter((piece) => piece.at >= subscriber.next),
        );
      subscriber.next = this.#next;
      if (!sent) this.#subscribers.delete(subscriber);
    }
    if (this.#subscribers.size === 0) this.stop();
  }
}

/** The live hubs, one per key (a run and what it streams). */
export class Hubs {
  readonly #hubs = new Map<string, Hub>();

  /**
   * The live hub for `key`, or a new one following `source` from `from`.
   */
  hub(
    key: string,
    source: PieceSource,
    from: number,
    keep: number,
    sendEveryMs: number = SEND_EVERY_MS,
  ): Hub {
    const live = this.#hubs.get(key);
    if (live !== undefined && !live.ended) return live;
    const hub: Hub = new Hub(source, from, keep, () => {
      if (this.#hubs.get(key) === hub) this.#hubs.delete(key);
    }, sendEveryMs);
    this.#hubs.set(key, hub);
    return hub;
  }

  /** How many hubs are live (for tests and the server's own checks). */
  get size(): number {
    return this.#hubs.size;
  }

  /** Stops every hub. */
  close(): void {
    for (const hub of [...this.#hubs.values()]) hub.stop();
  }
}
