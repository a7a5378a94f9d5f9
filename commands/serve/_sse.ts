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
import type { RunIndex, WatchedRoot } from "./_runs.ts";

/** How often an idle stream sends a comment, so proxies keep it open. */
const KEEP_ALIVE_MS = 15_000;

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
  readonly #encoder = new TextEncoder();
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
    }, new CountQueuingStrategy({ highWaterMark: 16 }));
    this.#keepAlive = setInterval(
      () => this.send(": keep-alive\n\n"),
      KEEP_ALIVE_MS,
    );
    if (stop.aborted) this.close();
    else stop.addEventListener("abort", () => this.close(), { once: true });
    this.abort.signal.addEventListener("abort", () => this.close(), {
      once: true,
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(text: string): void {
    if (this.#closed) return;
    try {
      this.#controller?.enqueue(this.#encoder.encode(text));
    } catch {
      this.close();
    }
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

/**
 * A run's live stream: its events from `from` (each `id: seq`, `data:` the
 * stored line, byte for byte), its snapshot whenever it changes, and its
 * control log; ends after `run_finished` (or with an `end` event when the
 * run is lost).
 */
export function runEventStream(
  index: RunIndex,
  root: WatchedRoot,
  ref: RunRef,
  from: number,
  stop: AbortSignal,
): ReadableStream<Uint8Array> {
  const out = new MessageStream(stop);
  const signal = out.abort.signal;
  const sendSnapshot = (snapshot: Snapshot): void => {
    if (snapshot.run_id === ref.run_id) {
      out.send(sseMessage(JSON.stringify(snapshot), { event: "snapshot" }));
    }
  };
  const unwatch = index.watch((changed, snapshot) => {
    if (changed.key === root.key) sendSnapshot(snapshot);
  });
  signal.addEventListener("abort", unwatch, { once: true });
  // The log follows on its own: an entry is sent as soon as it is written.
  void (async () => {
    try {
      for await (const entry of followLog(ref, { signal })) {
        out.send(sseMessage(JSON.stringify(entry), { event: "log" }));
      }
    } catch {
      // The run was lost; the events say so.
    }
  })();
  void (async () => {
    let ending: string | null = null;
    try {
      // The snapshot as it is now (then as it changes), before the events.
      const snapshot = await index.snapshotOf(root);
      if (snapshot !== null) sendSnapshot(snapshot);
      for await (
        const batch of eventLineBatches(ref, { from, signal })
      ) {
        let text = "";
        for (const { line, event } of batch) {
          text += sseMessage(line, { id: event.seq });
        }
        out.send(text);
        // A slow client slows its own reader, never the server's memory.
        await out.ready();
      }
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
