#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Follow latency: the time from appending an event line to the file until
 * the line is read from the follower's stdout, for `control events ROOT
 * --from current --json` against `tail -F -n0` on the same file in the same
 * run (median and p99 of 200 appends each). This process holds the run
 * lock, as a live runner does, and appends whole lines itself.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/follow_latency.ts [--json]
 *
 * @module
 */

import { controlEvents } from "./_event_stream.ts";
import { join } from "node:path";
import { acquireRunLock } from "../../lib/shared/run_lock.ts";
import {
  type BenchRow,
  median,
  percentile,
  progress,
  report,
} from "./_bench.ts";

const APPENDS = 200;
const WARMUP = 20;
/** The run id of the run this benchmark plays. */
export const RUN_ID = "20261130T000000000Z-benchfollo";

/** Reads a child's stdout, noting when each line with a seq arrived. */
class Arrivals {
  readonly #waiting = new Map<number, (at: number) => void>();
  readonly #arrived = new Map<number, number>();
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of stream) {
        const at = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const seq = Number(/"seq":(\d+)/.exec(buffer.slice(0, newline))?.[1]);
          buffer = buffer.slice(newline + 1);
          const waiter = this.#waiting.get(seq);
          if (waiter) waiter(at);
          else this.#arrived.set(seq, at);
        }
      }
    })();
  }

  /** When the line with `seq` arrived (waits for it, up to 5 s). */
  when(seq: number): Promise<number | null> {
    const seen = this.#arrived.get(seq);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(seq);
        resolve(null);
      }, 5000);
      this.#waiting.set(seq, (at) => {
        clearTimeout(timer);
        this.#waiting.delete(seq);
        resolve(at);
      });
    });
  }
}

/** One stored event line of the played run. */
export function eventLine(seq: number): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      v: 1,
      seq,
      at: new Date().toISOString(),
      run_id: RUN_ID,
      prompt_id: "01",
      attempt: 1,
      type: "message_streamed",
      data: { delta: "Reading the ADR first, then the tests.", kind: "text" },
    }) + "\n",
  );
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The latencies, append → a line on the follower's stdout, of a follower
 * started with `argv` on the file `file` appends to; `next` is the next seq.
 */
export async function measureFollower(
  name: string,
  argv: string[],
  file: Deno.FsFile,
  next: { seq: number },
): Promise<number[]> {
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited: Deno.CommandStatus | null = null;
  child.status.then((status) => exited = status);
  const arrivals = new Arrivals(child.stdout);
  // Ready once a line gets through; then warm up.
  for (let ready = false; !ready;) {
    if (exited !== null) {
      throw new Error(
        `${name} exited (${
          (exited as Deno.CommandStatus).code
        }) before following: ${await stderr}`,
      );
    }
    const seq = next.seq++;
    file.writeSync(eventLine(seq));
    ready = (await arrivals.when(seq)) !== null;
  }
  const latencies: number[] = [];
  for (let n = 0; n < WARMUP + APPENDS; n++) {
    const seq = next.seq++;
    const line = eventLine(seq);
    const start = performance.now();
    file.writeSync(line);
    const at = await arrivals.when(seq);
    if (at === null) throw new Error(`${name}: seq ${seq} never arrived`);
    if (n >= WARMUP) latencies.push(at - start);
    await sleep(5 + Math.random() * 10);
  }
  child.kill("SIGTERM");
  await child.status;
  await arrivals.done.catch(() => {});
  progress(
    `${name}: median ${median(latencies).toFixed(2)} ms, p99 ${
      percentile(latencies, 99).toFixed(2)
    } ms`,
  );
  return latencies;
}

/**
 * A state root with a live-looking run: this process holds its lock, its
 * snapshot says running, and events are appended to its stream by hand.
 */
export async function playedRun(): Promise<
  { root: string; path: string; release: () => Promise<void> }
> {
  const root = await Deno.makeTempDir({ prefix: "prompt_runner_follow_" });
  const lock = await acquireRunLock(root, RUN_ID);
  await Deno.mkdir(join(root, "control", "events"), {
    recursive: true,
    mode: 0o700,
  });
  await Deno.writeTextFile(
    join(root, "control", "snapshot.json"),
    JSON.stringify({
      v: 1,
      run_id: RUN_ID,
      status: "running",
      updated_at: new Date().toISOString(),
      pid: Deno.pid,
    }),
    { mode: 0o600 },
  );
  return {
    root,
    path: join(root, "control", "events.jsonl"),
    release: async () => {
      await lock.release();
      await Deno.remove(root, { recursive: true });
    },
  };
}

async function main(): Promise<void> {
  const { root, path, release } = await playedRun();
  try {
    using file = await Deno.open(path, {
      append: true,
      create: true,
      mode: 0o600,
    });
    const next = { seq: 1 };
    const tail = await measureFollower(
      "tail -F -n0",
      ["tail", "-F", "-n0", path],
      file,
      next,
    );
    const ours = await measureFollower(
      "control events --from current --json",
      controlEvents(root, "--from", "current", "--json"),
      file,
      next,
    );
    const [tm, tp] = [median(tail), percentile(tail, 99)];
    const [om, op] = [median(ours), percentile(ours, 99)];
    const rows: BenchRow[] = [{
      measure: "follow latency, append → stdout",
      baseline: `tail -F -n0: ${tm.toFixed(2)} / ${tp.toFixed(2)} ms`,
      result: `${om.toFixed(2)} / ${op.toFixed(2)} ms (median / p99)`,
      ratio: `${om - tm >= 0 ? "+" : ""}${(om - tm).toFixed(2)} ms`,
      target: "≤ tail + 1 ms median, p99 < 5 ms",
      met: om <= tm + 1 && op < 5,
      note: `${APPENDS} appends each, 5–15 ms apart, after ${WARMUP} warm-up`,
    }];
    report(rows);
  } finally {
    await release();
  }
}

if (import.meta.main) await main();
