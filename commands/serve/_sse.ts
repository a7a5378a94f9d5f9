/**
 * Server-Sent Events (DESIGN §10): the framing, where a run's stream starts
 * (`Last-Event-ID`), a stream that stops its work when the client goes away
 * or the server closes, and the runs page's rows. A run's own stream is
 * `_run_stream.ts`'s.
 *
 * @module
 */

import type { RunRow } from "./_model.ts";
import type { RunIndex, WatchedRoot } from "./_runs.ts";

/** How often an idle stream sends a comment, so proxies keep it open. */
const KEEP_ALIVE_MS = 15_000;

/** What a connection may have queued before it is told to come back. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/** Encodes SSE text. */
export const encoder: TextEncoder = new TextEncoder();

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
export class MessageStream {
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

/**
 * The runs page's stream: every root's row now (and every fleet run's),
 * then each changed row.
 */
export function runsStream(
  index: RunIndex,
  stop: AbortSignal,
): ReadableStream<Uint8Array> {
  const out = new MessageStream(stop);
  const sendRow = (row: RunRow | null): void => {
    if (row !== null) {
      out.send(sseMessage(JSON.stringify(row), { event: "snapshot" }));
    }
  };
  // Rows are computed one at a time, and a row's pending change once.
  const pending = new Set<string>();
  let sending: Promise<void> = Promise.resolve();
  const schedule = (root: WatchedRoot, runId?: string): void => {
    // A root has one row (its newest run's); a fleet home one per run.
    const key = root.fleet === null ? root.key : `${root.key}/${runId}`;
    if (pending.has(key)) return;
    pending.add(key);
    sending = sending.then(async () => {
      pending.delete(key);
      if (!out.closed) {
        sendRow(await index.sharedRow(root, runId).catch(() => null));
      }
    });
  };
  const unwatch = index.watch((root, snapshot) =>
    schedule(root, snapshot.run_id)
  );
  out.abort.signal.addEventListener("abort", unwatch, { once: true });
  for (const root of index.roots()) schedule(root);
  const fleet = index.fleet;
  if (fleet !== null) {
    sending = sending.then(async () => {
      if (out.closed) return;
      for (const row of await fleet.rows().catch(() => [])) sendRow(row);
    });
  }
  return out.stream;
}
