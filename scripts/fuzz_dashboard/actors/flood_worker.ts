/**
 * The dashboard fuzzer's connection floods, in a worker of their own: a
 * burst of hundreds of connects would otherwise hold up the fuzzer's other
 * clients (their requests sent late, as no browser sends them), which is
 * not what a flood does to a server.
 *
 * Messages in: `{port, seed}` to start, `"stop"` to finish. Out, when
 * stopped: `{floods, flooded, refused}`.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { Rng, sleep } from "../../_harness/mod.ts";

/** What the worker reports when it stops. */
export interface FloodTally {
  /** Floods made. */
  floods: number;
  /** Connections opened in them. */
  flooded: number;
  /** Connects the server refused (its backlog full). */
  refused: number;
}

const encoder = new TextEncoder();
let stopped = false;
const tally: FloodTally = { floods: 0, flooded: 0, refused: 0 };

async function flood(port: number, rng: Rng): Promise<void> {
  while (!stopped) {
    await sleep(rng.int(2_000, 4_000));
    if (stopped) break;
    const conns: Deno.Conn[] = [];
    const size = rng.int(200, 400);
    await Promise.all(Array.from({ length: size }, async (_, i) => {
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        conns.push(conn);
        // Half of them begin a request and send no more.
        if (i % 2 === 0) {
          await conn.write(encoder.encode("GET / HTTP/1.1\r\nHo")).catch(
            () => {},
          );
        }
      } catch {
        tally.refused++;
      }
    }));
    tally.floods++;
    tally.flooded += conns.length;
    await sleep(1_500);
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Closed by the server.
      }
    }
  }
}

let running: Promise<void> | null = null;
self.onmessage = async (event: MessageEvent) => {
  if (event.data === "stop") {
    stopped = true;
    await running;
    self.postMessage(tally);
    self.close();
    return;
  }
  const { port, seed } = event.data as { port: number; seed: number };
  running = flood(port, new Rng(seed));
};
