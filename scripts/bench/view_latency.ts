#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * How long a view change takes to land in a live run: a run streams about
 * 100 events/s (simulated provider, `delay_ms: 10`) in a subprocess, and
 * `control view TARGET --thinking hide|show` is run against it again and
 * again; each is timed to the moment its `applied` line appears in
 * `control/log.jsonl`. Four figures, medians and p99:
 *
 * - baseline: a request file written directly by this process → applied;
 * - the command: its spawn → applied (includes the runtime's cold start);
 * - the command from its own start: a `--preload` module stamps the clock
 *   once the runtime is up and before `main.ts` loads → applied;
 * - the plane's share: the request's `issued_at` (set by the client just
 *   before it writes the file) → the `at` of its `applied` log line.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/view_latency.ts [--json] [--repeats N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  benchDir,
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  percentile,
  progress,
  report,
  simulatedPacket,
} from "./_bench.ts";

/** The target, from the command's own start to its applied line (issue 20 §6). */
const FROM_START = 45;

async function makePacket(): Promise<string> {
  return await simulatedPacket(await benchDir(), [
    "delay_ms: 10",
    "repeat: 100000",
    'messages: ["streaming"]',
  ]);
}

/** Reads `log.jsonl` as it grows and resolves when a request's applied line lands. */
class LogWatch {
  #path: string;
  #offset = 0;
  #rest = "";
  #seen = new Map<string, { at: number; seenAt: number }>();

  constructor(path: string) {
    this.#path = path;
  }

  async #poll(): Promise<void> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path, { read: true });
    } catch {
      return;
    }
    try {
      await file.seek(this.#offset, Deno.SeekMode.Start);
      const buffer = new Uint8Array(256 * 1024);
      for (;;) {
        const n = await file.read(buffer);
        if (n === null || n === 0) break;
        this.#offset += n;
        const text = this.#rest +
          new TextDecoder().decode(buffer.subarray(0, n));
        const lines = text.split("\n");
        this.#rest = lines.pop()!;
        const now = performance.timeOrigin + performance.now();
        for (const line of lines) {
          try {
            const entry = JSON.parse(line);
            if (entry.outcome === "applied" && entry.request_id) {
              this.#seen.set(entry.request_id, {
                at: Date.parse(entry.at),
                seenAt: now,
              });
            }
          } catch {
            // Not ours.
          }
        }
      }
    } finally {
      file.close();
    }
  }

  /** Waits for the applied line of a request matching `match`. */
  async applied(
    match: (id: string) => boolean,
  ): Promise<{ id: string; at: number; seenAt: number }> {
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline) {
      await this.#poll();
      for (const [id, value] of this.#seen) {
        if (match(id)) {
          this.#seen.delete(id);
          return { id, ...value };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    throw new Error("no applied line within 10 s");
  }
}

function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

function figures(values: number[]): string {
  return `median ${median(values).toFixed(1)} ms, p99 ${
    percentile(values, 99).toFixed(1)
  } ms`;
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: { json: { type: "boolean" }, repeats: { type: "string" } },
  });
  const repeats = Number(args.values.repeats ?? 30);
  const dir = await makePacket();
  const stateRoot = join(dir, ".prompt_runner");
  const preload = join(dir, "stamp.js");
  await Deno.writeTextFile(
    preload,
    "console.error(`bench-start ${performance.timeOrigin + performance.now()}`);\n",
  );
  const runner = new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, MAIN, "run", dir, "--json"],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const rows: BenchRow[] = [];
  try {
    const watch = new LogWatch(join(stateRoot, "control", "log.jsonl"));
    // Wait for the run to stream.
    let runId = "";
    for (let look = 0; look < 400 && runId === ""; look++) {
      try {
        const snap = JSON.parse(
          await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
        );
        if (snap.prompt_id !== null && snap.event_count > 5) {
          runId = snap.run_id;
        }
      } catch {
        // Not yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (runId === "") throw new Error("the run never started streaming");
    const direct: number[] = [];
    const spawned: number[] = [];
    const fromStart: number[] = [];
    const plane: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const thinking = i % 2 === 0 ? "hide" : "show";
      // Baseline: a request file written directly (temp file, then linked).
      const id = `${new Date().toISOString().replace(/[-:.]/g, "")}-bench${i}`;
      const requests = join(stateRoot, "control", "requests");
      const temp = join(requests, `.${id}.tmp`);
      const started = wallNow();
      await Deno.writeTextFile(
        temp,
        JSON.stringify({
          v: 1,
          id,
          command: "set_view",
          params: { thinking },
          run_id: runId,
          author: "bench",
          issued_at: new Date().toISOString(),
        }) + "\n",
      );
      await Deno.rename(temp, join(requests, `${id}.json`));
      const base = await watch.applied((seen) => seen === id);
      direct.push(base.seenAt - started);

      // The command.
      const spawnAt = wallNow();
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...CLI_PERMISSIONS,
          "--preload",
          preload,
          MAIN,
          "control",
          "view",
          dir,
          "--thinking",
          thinking === "hide" ? "show" : "hide",
        ],
        env: { NO_COLOR: "1" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const landed = await watch.applied((seen) => !seen.includes("-bench"));
      const output = await child.output();
      const stderr = new TextDecoder().decode(output.stderr);
      const stamp = Number(/bench-start (\S+)/.exec(stderr)?.[1]);
      const stdout = new TextDecoder().decode(output.stdout);
      const sent = /\(request (\S+)\)/.exec(stdout)?.[1];
      if (!output.success || sent !== landed.id) {
        throw new Error(`control view: ${stdout}${stderr}`);
      }
      spawned.push(landed.seenAt - spawnAt);
      fromStart.push(landed.seenAt - stamp);
      const request = /^(\d{8}T\d{9}Z)/.exec(sent)?.[1] ?? "";
      const issued = Date.parse(
        request.replace(
          /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/,
          "$1-$2-$3T$4:$5:$6.$7Z",
        ),
      );
      plane.push(landed.at - issued);
      progress(
        `${i + 1}/${repeats}: direct ${direct.at(-1)!.toFixed(1)} ms, spawn ${
          spawned.at(-1)!.toFixed(1)
        } ms, from start ${fromStart.at(-1)!.toFixed(1)} ms, plane ${
          plane.at(-1)!.toFixed(1)
        } ms`,
      );
    }
    const baseline = `direct request file: ${figures(direct)}`;
    const directMedian = median(direct);
    rows.push({
      measure: "control view → its applied line, run streaming 100 events/s",
      baseline,
      result: `from the spawn: ${figures(spawned)}`,
      ratio: `${(median(spawned) / directMedian).toFixed(2)}×`,
      target: `median ≤ ${FROM_START} ms from the command's start`,
      met: median(spawned) <= FROM_START,
      note:
        "includes the runtime's cold start (an empty deno run is ~30 ms here)",
    });
    rows.push({
      measure: "… from the command's own start (--preload stamp)",
      baseline,
      result: figures(fromStart),
      ratio: `${(median(fromStart) / directMedian).toFixed(2)}×`,
      target: `median ≤ ${FROM_START} ms from the command's start`,
      met: median(fromStart) <= FROM_START,
      note:
        "module loading and the command's own work, without the runtime's boot",
    });
    rows.push({
      measure:
        "… the plane's share: request written (issued_at) → applied (log at)",
      baseline,
      result: figures(plane),
      ratio: `${(median(plane) / directMedian).toFixed(2)}×`,
      target: "—",
      met: true,
      note: "millisecond clock stamps of the client and the runner",
    });
  } finally {
    try {
      runner.kill("SIGTERM");
    } catch {
      // Ended.
    }
    await runner.status;
    await Deno.remove(dir, { recursive: true });
  }
  report(rows);
}

if (import.meta.main) await main();
