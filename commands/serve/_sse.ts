/**
 * Server-Sent Events (DESIGN §10): a run's events, one SSE event per `seq`
 * with its stored line as data; its snapshot and control log as unnumbered
 * `snapshot` and `log` events; the runs page's rows. Every stream stops its
 * followers when the client goes away or the server closes.
 *
 * @module
 */

import {
  eventLineBatches,
  followLog,
  type RunRef,
  type Snapshot,
} from "../../mod.ts";
import {
  type Hub,
  type Hubs,
  type Piece,
  type PieceSource,
  type Subscriber,
} from "./_hub.ts";
import type { RunIndex, WatchedRoot } from "./_runs.ts";

/** How often an idle stream sends a comment, so proxies keep it open. */
const KEEP_ALIVE_MS = 15_000;

/** What a connection may have queued before it is told to come back. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/** How many of its newest events a run's shared follower keeps for joiners. */
const KEEP_EVENTS = 2_000;

/** How many of a run's control-log entries its shared follower keeps. */
const KEEP_LOG = 20_000;

const encoder = new TextEncoder();

/** The headers of an SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "x-accel-buffering": "no",
};

/** One SSE message: optional `event:` and `id:`, then `data:` per line. */
export function sseMessage(
  data: string,
  options: { event?: string; id?: number } = {},
): string {
  let text = "";
  if (options.event !== undefined) text += `event: ${options.event}\n`;
  if (options.id !== undefined) text += `id: ${options.id}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return text + "\n";
}

/**
 * Where a run's stream starts: after the `Last-Event-ID` header's seq, else
 * after `?after=N`, else at seq 1.
 */
export function startSeq(request: Request, url: URL): number {
  for (
    const given of [
      request.headers.get("last-event-id"),
      url.searchParams.get("after"),
    ]
  ) {
    if (given !== null && /^\d{1,15}$/.test(given.trim())) {
      return Number(given.trim()) + 1;
    }
  }
  return 1;
}

/** A stream of text messages that stops its work when cancelled or closed. */
class MessageStream {
  readonly abort = new AbortController();
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  #closed = false;
  #keepAlive: ReturnType<typeof setInterval>;
  #waiters: (() => void)[] = [];
  readonly stream: ReadableStream<Uint8Array>;

  constructor(stop: AbortSignal) {
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => this.#wake(),
      cancel: () => this.close(),
    }, new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }));
    this.#keepAlive = setInterval(
      () => this.send(": keep-alive\n\n"),
      KEEP_ALIVE_MS,
    );
    // Removed when this stream closes: the server's signal outlives it.
    if (stop.aborted) this.close();
    else {
      stop.addEventListener("abort", () => this.close(), {
        once: true,
        signal: this.abort.signal,
      });
    }
    this.abort.signal.addEventListener("abort", () => this.close(), {
      once: true,
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(text: string): void {
    this.write(encoder.encode(text));
  }

  /**
   * Queues bytes; `false` when the stream is closed. A client that has let
   * more than MAX_BACKLOG_BYTES pile up is cut off: its browser comes back
   * with `Last-Event-ID` and continues from where it was.
   */
  write(bytes: Uint8Array): boolean {
    if (this.#closed) return false;
    try {
      this.#controller?.enqueue(bytes);
    } catch {
      this.close();
      return false;
    }
    if ((this.#controller?.desiredSize ?? 0) < -MAX_BACKLOG_BYTES) {
      this.close();
      return false;
    }
    return true;
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Resolves when the client has taken what was sent (or is gone). */
  async ready(): Promise<void> {
    while (!this.#closed && (this.#controller?.desiredSize ?? 1) <= 0) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake();
    clearInterval(this.#keepAlive);
    this.abort.abort();
    try {
      this.#controller?.close();
    } catch {
      // Already cancelled by the client.
    }
  }
}

/** How long the final snapshot is waited for after `run_finished`. */
const FINAL_SNAPSHOT_MS = 3_000;

/**
 * The run's snapshot once it no longer says `running` (the runner writes it
 * just after `run_finished`), or the newest one after a few seconds.
 */
async function finalSnapshot(
  index: RunIndex,
  root: WatchedRoot,
  ref: RunRef,
  signal: AbortSignal,
): Promise<Snapshot | null> {
  const deadline = Date.now() + FINAL_SNAPSHOT_MS;
  for (;;) {
    const snapshot = await index.snapshotOf(root);
    if (snapshot === null || snapshot.run_id !== ref.run_id) return null;
    if (
      snapshot.status !== "running" || Date.now() >= deadline || signal.aborted
    ) {
      return snapshot;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A run's events as SSE messages, `id:` its seq and `data:` its line. */
function eventPieces(ref: RunRef): PieceSource {
  return async function* (
    from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    for await (const batch of eventLineBatches(ref, { from, signal })) {
      yield batch.map(({ line, event }) => ({
        at: event.seq,
        bytes: encoder.encode(sseMessage(line, { id: event.seq })),
      }));
    }
  };
}

/** A run's control-log entries as `log` messages, counted from 1. */
function logPieces(ref: RunRef): PieceSource {
  return async function* (
    _from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    let at = 0;
    for await (const entry of followLog(ref, { signal })) {
      yield [{
        at: ++at,
        bytes: encoder.encode(
          sseMessage(JSON.stringify(entry), { event: "log" }),
        ),
      }];
    }
  };
}

/** How a subscription ended: its stream's end, an early end, or the client left. */
type Fed = { reason: string | null } | "gone";

/** Feeds `out` from `hub`, from `next`, until the hub ends or the client leaves. */
function feed(
  hub: Hub,
  out: MessageStream,
  next: number,
): Promise<Fed> {
  return new Promise<Fed>((resolve) => {
    const subscriber: Subscriber = {
      next,
      write: (bytes) => out.write(bytes),
      finish: () => resolve({ reason: null }),
      end: (reason) => resolve({ reason }),
    };
    const signal = out.abort.signal;
    if (signal.aborted) return resolve("gone");
    signal.addEventListener("abort", () => {
      hub.leave(subscriber);
      resolve("gone");
    }, { once: true });
    hub.join(subscriber);
  });
}

/**
 * A run's live stream: its events from `from` (each `id: seq`, `data:` the
 * stored line, byte for byte), its snapshot whenever it changes, and its
 * control log; ends after `run_finished` (or with an `end` event when the
 * run is lost). Connections near the live end share one follower per run;
 * one further behind reads on its own until it reaches the shared one.
 */
export function runEventStream(
  index: RunIndex,
  hubs: Hubs,
  root: WatchedRoot,
  ref: RunRef,
  from: number,
  stop: AbortSignal,
): ReadableStream<Uint8Array> {
  const out = new MessageStream(stop);
  const signal = out.abort.signal;
  const key = `${ref.state_root}\0${ref.run_id}`;
  const sendSnapshot = (snapshot: Snapshot): void => {
    if (snapshot.run_id === ref.run_id) {
      out.send(sseMessage(JSON.stringify(snapshot), { event: "snapshot" }));
    }
  };
  const unwatch = index.watch((changed, snapshot) => {
    if (changed.key === root.key) sendSnapshot(snapshot);
  });
  signal.addEventListener("abort", unwatch, { once: true });
  // The log: every entry of the run so far, then each as it is written.
  void feed(hubs.hub(`log\0${key}`, logPieces(ref), 1, KEEP_LOG), out, 1);
  void (async () => {
    let ending: string | null = null;
    try {
      // The snapshot as it is now (then as it changes), before the events.
      const snapshot = await index.snapshotOf(root);
      if (snapshot !== null) sendSnapshot(snapshot);
      let next = from;
      for (;;) {
        if (signal.aborted) return;
        const hub = hubs.hub(
          `events\0${key}`,
          eventPieces(ref),
          next,
          KEEP_EVENTS,
        );
        if (hub.covers(next)) {
          const fed = await feed(hub, out, next);
          if (fed === "gone") return;
          if (fed.reason !== null) throw new Error(fed.reason);
          break;
        }
        // Behind what the shared follower keeps: catch up alone.
        let joinable = false;
        for await (
          const batch of eventLineBatches(ref, { from: next, signal })
        ) {
          let text = "";
          for (const { line, event } of batch) {
            text += sseMessage(line, { id: event.seq });
          }
          out.send(text);
          next = batch.at(-1)!.event.seq + 1;
          // A slow client slows its own reader, never the server's memory.
          await out.ready();
          if (hub.ended || hub.covers(next)) {
            joinable = true;
            break;
          }
        }
        if (!joinable) break; // run_finished, read alone
      }
      if (signal.aborted) return;
      // The runner writes its last snapshot after run_finished: the page
      // closes its stream on run_finished, so that snapshot comes first.
      const last = await finalSnapshot(index, root, ref, signal);
      if (last !== null) sendSnapshot(last);
    } catch (error) {
      ending = (error as Error).message;
    }
    if (ending !== null && !out.closed) {
      out.send(
        sseMessage(JSON.stringify({ reason: ending }), { event: "end" }),
      );
    }
    out.close();
  })();
  return out.stream;
}

/** The runs page's stream: every root's row now, then each changed row. */
export function runsStream(
  index: RunIndex,
  stop: AbortSignal,
): ReadableStream<Uint8Array> {
  const out = new MessageStream(stop);
  const sendRow = async (root: WatchedRoot): Promise<void> => {
    const row = await index.sharedRow(root).catch(() => null);
    if (row !== null) {
      out.send(sseMessage(JSON.stringify(row), { event: "snapshot" }));
    }
  };
  // Rows are computed one at a time, and a root's pending change once.
  const pending = new Set<WatchedRoot>();
  let sending: Promise<void> = Promise.resolve();
  const schedule = (root: WatchedRoot): void => {
    if (pending.has(root)) return;
    pending.add(root);
    sending = sending.then(async () => {
      pending.delete(root);
      if (!out.closed) await sendRow(root);
    });
  };
  const unwatch = index.watch((root) => schedule(root));
  out.abort.signal.addEventListener("abort", unwatch, { once: true });
  for (const root of index.roots()) schedule(root);
  return out.stream;
}
