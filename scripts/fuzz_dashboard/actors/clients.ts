/**
 * The dashboard fuzz's clients: requesters, half-senders, the flood
 * worker's driver, a poller of the runs page, and followers of the run's
 * event stream as browsers read it.
 *
 * @module
 */

import { isEvent } from "../../_audit/mod.ts";
import { type Rng, sleep, type Violations } from "../../_harness/mod.ts";
import { checkAnswer } from "../audits.ts";
import type { FloodTally } from "./flood_worker.ts";
import {
  encoder,
  exchange,
  oversizedRequest,
  randomRequest,
  type Target,
} from "./requests.ts";

/** The dashboard's documented limits (README "Dashboard"). */
const HEADERS_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 10_000;

/** What the fuzz did, for the summary. */
export interface Tally {
  requests: number;
  byKind: Map<string, number>;
  byStatus: Map<number, number>;
  /** The requests over a limit, by kind: how many, and how many got its status. */
  limited: Map<string, { sent: number; enforced: number }>;
  halfSent: number;
  floods: number;
  flooded: number;
  refused: number;
  polls: number;
}

function count<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export interface Fuzz {
  target: Target;
  rng: Rng;
  violations: Violations;
  tally: Tally;
  stop: boolean;
}

export async function requester(fuzz: Fuzz, oversized: boolean): Promise<void> {
  while (!fuzz.stop) {
    const sent = oversized
      ? oversizedRequest(fuzz.rng, fuzz.target)
      : randomRequest(fuzz.rng, fuzz.target);
    const got = await exchange(fuzz.target.port, sent.bytes);
    fuzz.tally.requests++;
    count(fuzz.tally.byKind, sent.kind);
    count(fuzz.tally.byStatus, got.status);
    checkAnswer(sent, got, fuzz.violations);
    if (sent.expect !== undefined) {
      const limit = fuzz.tally.limited.get(sent.kind) ??
        { sent: 0, enforced: 0 };
      limit.sent++;
      if (sent.expect.includes(got.status)) limit.enforced++;
      fuzz.tally.limited.set(sent.kind, limit);
    }
    await sleep(oversized ? 200 : 10);
  }
}

/** Half-sent heads and stalled bodies: each closed by the server in time. */
export async function halfSender(fuzz: Fuzz): Promise<void> {
  const { port, cookie, origin } = fuzz.target;
  while (!fuzz.stop) {
    const tries = Array.from({ length: 10 }, async (_, i) => {
      const stalledBody = i % 3 === 2;
      const text = stalledBody
        ? `POST ${
          fuzz.target.run ?? "/"
        }/steer HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nOrigin: ${origin}\r\nContent-Length: 100\r\n\r\ntext=`
        : `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`.slice(
          0,
          fuzz.rng.int(1, 30),
        );
      const limit = (stalledBody ? IDLE_TIMEOUT_MS : HEADERS_TIMEOUT_MS) +
        5_000;
      const got = await exchange(port, encoder.encode(text), limit);
      fuzz.tally.halfSent++;
      if (got.status === -1) return;
      if (!got.closed) {
        fuzz.violations.add(
          "half-sent requests closed in time",
          `${JSON.stringify(text.slice(0, 60))} still open after ${limit} ms`,
        );
      }
    });
    await Promise.all(tries);
  }
}

/**
 * Floods of connections, held a moment and dropped, from a worker (a burst
 * of connects here would delay the other clients' requests).
 */
export async function flooder(fuzz: Fuzz): Promise<void> {
  const worker = new Worker(
    new URL("./flood_worker.ts", import.meta.url),
    { type: "module" },
  );
  const done = new Promise<FloodTally>((resolve) =>
    worker.onmessage = (event) => resolve(event.data as FloodTally)
  );
  worker.postMessage({
    port: fuzz.target.port,
    seed: fuzz.rng.int(0, 2 ** 31),
  });
  while (!fuzz.stop) await sleep(100);
  worker.postMessage("stop");
  const tally = await done;
  worker.terminate();
  fuzz.tally.floods += tally.floods;
  fuzz.tally.flooded += tally.flooded;
  fuzz.tally.refused += tally.refused;
}

/** The runs page on a fresh connection, four times a second: always answered. */
export async function poller(fuzz: Fuzz): Promise<void> {
  const { port, cookie } = fuzz.target;
  const request = encoder.encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
  );
  while (!fuzz.stop) {
    const got = await exchange(port, request, 10_000);
    fuzz.tally.polls++;
    if (got.status !== 200) {
      fuzz.violations.add(
        "a normal client is answered",
        `the runs page got ${got.status === -1 ? "no connection" : got.status}`,
      );
    }
    await sleep(250);
  }
}

/** Follows the run's events as a browser does (reconnecting with Last-Event-ID). */
export async function follower(
  target: Target,
  url: string,
): Promise<{ id: number; data: string }[]> {
  const received: { id: number; data: string }[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    const last = received.at(-1)?.id;
    const response = await fetch(url, {
      headers: {
        cookie: target.cookie,
        ...(last === undefined ? {} : { "last-event-id": String(last) }),
      },
    }).catch(() => null);
    if (response === null || response.status !== 200) {
      await response?.body?.cancel();
      await sleep(500);
      continue;
    }
    const reader = response.body!.pipeThrough(new TextDecoderStream())
      .getReader();
    let buffer = "";
    let finished = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          let id: number | null = null;
          let event: string | null = null;
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (event !== null || id === null) continue;
          received.push({ id, data: data.join("\n") });
          if (isEvent(JSON.parse(data.join("\n")), "run_finished")) {
            finished = true;
          }
        }
      }
    } catch {
      // Cut off: come back with Last-Event-ID.
    } finally {
      await reader.cancel().catch(() => {});
    }
    if (finished) return received;
  }
  return received;
}
