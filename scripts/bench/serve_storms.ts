#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * The dashboard's memory across reconnect storms: `prompt_runner serve` on
 * a finished run of 12,000 events, then storm after storm of clients that
 * connect at once (every one's event stream from seq 1, as browsers do
 * after a restart; a quarter of them leave halfway; a quarter open the run
 * page and the runs stream and leave) and are gone. After each storm the
 * server's V8 heap is collected and measured through its inspector
 * (`--inspect`, `HeapProfiler.collectGarbage`, `Runtime.getHeapUsage`) and
 * its VmRSS read from /proc: a leak shows as a heap that grows storm after
 * storm; memory the allocator keeps shows as RSS that stays up while the
 * heap does not.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 scripts/bench/serve_storms.ts [--json] [--storms N] [--clients N] [--main PATH]
 *
 * `--main` runs another checkout's `main.ts` (to compare revisions).
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  benchDir,
  type BenchRow,
  CLI_PERMISSIONS,
  loadRound,
  MAIN,
  progress,
  report,
  simulatedPacket,
} from "./_bench.ts";
import { freePort, Inspector, rootKey } from "../_harness/serve.ts";
import { vmRssMib } from "../_harness/proc.ts";

/** One storm's aftermath. */
export interface StormFigure {
  /** The storm's number, from 1 (0: before the first). */
  storm: number;
  /** VmRSS after it (MiB). */
  rss_mib: number;
  /** V8 heap in use after a full collection, data only (MiB). */
  heap_mib: number;
  /** V8 heap the engine keeps (committed, code included) (MiB). */
  committed_mib: number;
  /** Events the clients received in it. */
  events: number;
}

/** Reads a response to its end, or cancels it after `limit` bytes. */
async function drain(response: Response, limit = Infinity): Promise<number> {
  const reader = response.body!.getReader();
  let bytes = 0;
  let events = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (const byte of value) if (byte === 0x0a) events++;
      if (bytes >= limit) break;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

/** One storm: `clients` at once, each doing its part, all gone at the end. */
async function storm(
  origin: string,
  cookie: string,
  run: string,
  clients: number,
  fileBytes: number,
): Promise<number> {
  const headers = { cookie };
  const parts = Array.from({ length: clients }, async (_, i) => {
    const kind = i % 4;
    if (kind === 3) {
      const page = await fetch(`${origin}${run}`, { headers });
      await page.text();
      const rows = await fetch(`${origin}/runs/stream`, { headers });
      return await drain(rows, 1);
    }
    const events = await fetch(`${origin}${run}/events`, { headers });
    // Each SSE line is ~ a stored line plus its framing: half the file.
    return await drain(events, kind === 2 ? fileBytes / 2 : Infinity);
  });
  let lines = 0;
  for (const n of await Promise.all(parts)) lines += n;
  return lines;
}

/** Runs the storms and returns what the server held after each. */
export async function measureStorms(options: {
  storms: number;
  clients: number;
  main?: string;
}): Promise<StormFigure[]> {
  const dir = await benchDir();
  const packet = await simulatedPacket(join(dir, "packet"), loadRound(2_000));
  const main = options.main ?? MAIN;
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, main, "run", packet],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!ran.success) {
    throw new Error(`the run failed: ${new TextDecoder().decode(ran.stderr)}`);
  }
  const stateRoot = join(packet, ".prompt_runner");
  const snapshot = JSON.parse(
    await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
  );
  const fileBytes =
    (await Deno.stat(join(stateRoot, "control", "events.jsonl"))).size;
  const inspect = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--inspect=127.0.0.1:${inspect}`,
      ...CLI_PERMISSIONS,
      main,
      "serve",
      packet,
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const figures: StormFigure[] = [];
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let inspector: Inspector | null = null;
  try {
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`serve printed no URL: ${text}`);
      text += value;
    }
    const match = /^dashboard: (http:\/\/[^/]+)\/\?token=([\w-]+)$/m.exec(text);
    if (match === null) throw new Error(`no URL line: ${text}`);
    const [, origin, token] = match;
    const port = new URL(origin!).port;
    // The cookie of the revision measured: per port now, one name before.
    const cookie = `pr_token_${port}=${token}; pr_token=${token}`;
    void (async () => {
      while (!(await lines.read()).done);
    })().catch(() => {});
    inspector = await Inspector.open(inspect);
    const measure = async (n: number, events: number): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const heap = await inspector!.heapAfterGc();
      const usage = await inspector!.send<{ totalSize: number }>(
        "Runtime.getHeapUsage",
      );
      const figure = {
        storm: n,
        rss_mib: await vmRssMib(child.pid) ?? NaN,
        heap_mib: heap / 1024 / 1024,
        committed_mib: usage.totalSize / 1024 / 1024,
        events,
      };
      figures.push(figure);
      progress(
        `storm ${n}: RSS ${figure.rss_mib.toFixed(1)} MiB, heap ${
          figure.heap_mib.toFixed(1)
        } MiB (V8 keeps ${
          figure.committed_mib.toFixed(1)
        }), ${events} SSE lines`,
      );
    };
    await measure(0, 0);
    const run = `/run/${rootKey(stateRoot)}/${snapshot.run_id}`;
    for (let n = 1; n <= options.storms; n++) {
      const events = await storm(
        origin!,
        cookie,
        run,
        options.clients,
        fileBytes,
      );
      await measure(n, events);
    }
  } finally {
    await inspector?.close();
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
  return figures;
}

/** The table row for the README. */
export function stormRow(figures: StormFigure[], clients: number): BenchRow {
  const first = figures[1] ?? figures[0]!;
  const last = figures.at(-1)!;
  const before = figures[0]!;
  const peak = Math.max(...figures.map((f) => f.rss_mib));
  const heapGrowth = last.heap_mib - first.heap_mib;
  return {
    measure: `dashboard: memory after ${last.storm} reconnect storms`,
    baseline: `before: RSS ${before.rss_mib.toFixed(0)} MiB, heap ${
      before.heap_mib.toFixed(1)
    } MiB`,
    result: `RSS ${first.rss_mib.toFixed(0)} → ${
      last.rss_mib.toFixed(0)
    } MiB (peak ${peak.toFixed(0)}), heap ${first.heap_mib.toFixed(1)} → ${
      last.heap_mib.toFixed(1)
    } MiB`,
    ratio: `heap ${heapGrowth >= 0 ? "+" : ""}${heapGrowth.toFixed(1)} MiB`,
    target: "heap after storm N ≤ after storm 1 + 2 MiB",
    met: heapGrowth <= 2,
    note:
      `${clients} clients a storm, every stream from seq 1 of 12,000 events; after a full GC`,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      storms: { type: "string", default: "10" },
      clients: { type: "string", default: "100" },
      main: { type: "string" },
    },
  });
  const clients = Number(values.clients);
  const figures = await measureStorms({
    storms: Number(values.storms),
    clients,
    ...(values.main === undefined ? {} : { main: values.main }),
  });
  report([stormRow(figures, clients)]);
}
