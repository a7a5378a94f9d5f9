/**
 * Reading a stream's messages on one subject in stream order, each once,
 * through an ephemeral push consumer the reader keeps whole: a gap in the
 * deliveries, missing heartbeats or a reconnect make it start a new
 * consumer after the last message it delivered. Flow control is answered
 * only once the caller took what was delivered, so a slow caller (a pipe
 * to a slow reader) holds the server back instead of filling memory.
 *
 * @module
 */

import type {
  FleetLink,
  LinkMessage,
  LinkSubscription,
  ReaderSpec,
} from "./_link.ts";

/** One delivered message. */
export interface ReadMessage {
  /** The subject it was published to. */
  subject: string;
  /** Its body. */
  data: Uint8Array;
  /** Its sequence in the stream. */
  seq: number;
  /** When the server stored it (ms since the epoch). */
  time: number;
  /** Its `KV-Operation` header (`DEL`, `PURGE`), or `undefined`. */
  operation: string | undefined;
}

/** A batch of messages, and whether it reaches what the stream held. */
export interface ReadBatch {
  /** The messages, in stream order (possibly none). */
  messages: ReadMessage[];
  /** Whether nothing more was pending when the last one was delivered. */
  caughtUp: boolean;
}

/** What to read. */
export interface ReadOptions {
  /** The stream. */
  stream: string;
  /** The subject (or pattern). */
  subject: string;
  /** Where to start. */
  from: ReaderSpec["from"];
  /** Aborting it ends the reading quietly. */
  signal?: AbortSignal;
  /** Seconds between the server's heartbeats (default 2). */
  heartbeatSeconds?: number;
  /**
   * While caught up and idle, an empty batch this often (so a follower
   * can look at how its run stands); by default only once, when first
   * caught up.
   */
  idleTickMs?: number;
}

/** Where the dots of a reply subject are (reused: one delivery at a time). */
const DOTS = new Int32Array(16);

/** The number between two dots of `text`, or `NaN`. */
function numberAt(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return NaN;
    value = value * 10 + digit;
  }
  return to > from ? value : NaN;
}

/** The number that is token `n` of a subject whose `dots` dots are in {@linkcode DOTS}. */
function tokenAt(text: string, n: number, dots: number): number {
  return numberAt(text, DOTS[n - 1]! + 1, n < dots ? DOTS[n]! : text.length);
}

/**
 * The stream seq, consumer seq, time and pending count in a delivery's
 * reply subject, read in place (a split of every delivery's subject was a
 * twelfth of a replay's time).
 */
function placeOf(
  reply: string,
): { sseq: number; cseq: number; time: number; pending: number } | null {
  if (!reply.startsWith("$JS.ACK.")) return null;
  let dots = 0;
  for (let i = 0; i < reply.length && dots < DOTS.length; i++) {
    if (reply.charCodeAt(i) === 0x2e) DOTS[dots++] = i;
  }
  // $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>, or
  // with a domain and account hash first and a token last (12 tokens).
  const at = dots + 1 >= 12 ? 6 : 4;
  if (dots < at + 4) return null;
  const sseq = tokenAt(reply, at + 1, dots);
  const cseq = tokenAt(reply, at + 2, dots);
  if (!Number.isInteger(sseq) || !Number.isInteger(cseq)) return null;
  return {
    sseq,
    cseq,
    time: tokenAt(reply, at + 3, dots) / 1e6,
    pending: tokenAt(reply, at + 4, dots),
  };
}

/**
 * Reads a subject's messages in stream order, as batches, until `signal`
 * aborts (or the caller stops iterating).
 */
export async function* readSubject(
  link: FleetLink,
  options: ReadOptions,
): AsyncGenerator<ReadBatch> {
  const heartbeat = options.heartbeatSeconds ?? 2;
  const queue: ReadMessage[] = [];
  let caughtUp = false;
  let lastSeq = 0;
  let expectCseq = 1;
  let restart = false;
  /** No stream yet: when to look again. */
  let retryAt = 0;
  let lastSign = Date.now();
  let deferred: string[] = [];
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  let sub: LinkSubscription | null = null;
  let consumer: string | null = null;
  let startAfter: number | null = null;

  const onMessage = (message: LinkMessage) => {
    lastSign = Date.now();
    if (message.status === 100) {
      const stalled = message.header("Nats-Consumer-Stalled");
      if (message.reply !== "") deferred.push(message.reply);
      if (stalled !== undefined) deferred.push(stalled);
      const last = Number(message.header("Nats-Last-Consumer") ?? NaN);
      if (Number.isInteger(last) && last !== expectCseq - 1) restart = true;
      poke();
      return;
    }
    if (message.status !== 0) {
      restart = true;
      poke();
      return;
    }
    const place = placeOf(message.reply);
    if (place === null) return;
    if (place.cseq !== expectCseq) {
      restart = true;
      poke();
      return;
    }
    expectCseq++;
    lastSeq = place.sseq;
    caughtUp = place.pending === 0;
    queue.push({
      subject: message.subject,
      data: message.data,
      seq: place.sseq,
      time: place.time,
      operation: message.data.length === 0
        ? message.header("KV-Operation")
        : undefined,
    });
    poke();
  };

  const start = async () => {
    sub?.unsubscribe();
    if (consumer !== null) {
      link.deleteConsumer(options.stream, consumer).catch(() => {});
    }
    deferred = [];
    expectCseq = 1;
    restart = false;
    const deliver = link.inbox();
    sub = link.subscribe(deliver, onMessage);
    const from = startAfter === null
      ? options.from
      : { seq: Math.max(lastSeq, startAfter) + 1 };
    const created = await link.addReader({
      stream: options.stream,
      filter: options.subject,
      from,
      deliver,
      heartbeatSeconds: heartbeat,
    });
    lastSign = Date.now();
    if (created === null) {
      // No stream yet (no bridge made it): nothing to read, for now.
      consumer = null;
      caughtUp = true;
      restart = true;
      retryAt = Date.now() + 1_000;
      return;
    }
    consumer = created.name;
    startAfter ??= created.after;
    if (created.pending === 0) caughtUp = true;
    lastSign = Date.now();
  };

  const unlisten = link.onState((state) => {
    if (state === "connected") restart = true;
    poke();
  });
  const onAbort = () => poke();
  options.signal?.addEventListener("abort", onAbort);
  try {
    await start();
    let toldCaughtUp = false;
    let lastYield = Date.now();
    const tick = options.idleTickMs ?? Infinity;
    for (;;) {
      // Flow control is answered once the caller took the last batch.
      for (const reply of deferred.splice(0)) {
        link.publish(reply, new Uint8Array());
      }
      if (options.signal?.aborted) return;
      if (link.state === "closed") {
        throw new Error("the connection to the fleet closed");
      }
      if (queue.length > 0) {
        toldCaughtUp = caughtUp;
        lastYield = Date.now();
        yield { messages: queue.splice(0, queue.length), caughtUp };
        continue;
      }
      if (
        caughtUp && (!toldCaughtUp || Date.now() - lastYield >= tick)
      ) {
        toldCaughtUp = true;
        lastYield = Date.now();
        yield { messages: [], caughtUp };
        continue;
      }
      if (
        link.state === "connected" &&
        Date.now() >= retryAt &&
        (restart || Date.now() - lastSign > heartbeat * 3_000)
      ) {
        try {
          await start();
        } catch {
          // The stream has no leader yet, or the link is down: try again.
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(poke, Math.min(heartbeat * 1_000, tick));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    unlisten();
    (sub as LinkSubscription | null)?.unsubscribe();
    if (consumer !== null && link.state === "connected") {
      await link.deleteConsumer(options.stream, consumer);
    }
  }
}
