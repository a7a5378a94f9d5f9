#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * What a big state root costs a run's start: `main.ts run` of a one-event
 * packet, spawn → exit, on a state root holding 100,000 log entries, 100
 * archived runs' event streams and the previous run's stream (generated
 * here), against the same on a fresh state root. Medians of repeats,
 * interleaved.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/run_start.ts [--json] [--repeats N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  progress,
  ratio,
  report,
  simulatedPacket,
} from "./_bench.ts";

const LOG_ENTRIES = 100_000;
const ARCHIVED_RUNS = 100;
const EVENTS_PER_ARCHIVED_RUN = 1_000;

async function makePacket(dir: string): Promise<void> {
  await simulatedPacket(dir, ['messages: ["done"]']);
}

function runId(n: number): string {
  const t = new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString()
    .replace(/[-:.]/g, "");
  return `${t}-bench${String(n).padStart(5, "0")}`;
}

function event(run: string, seq: number): string {
  return JSON.stringify({
    v: 1,
    seq,
    at: "2026-01-01T00:00:00.000Z",
    run_id: run,
    prompt_id: "01",
    attempt: 1,
    type: "message_streamed",
    data: { delta: "working on it", kind: "text" },
  });
}

/** A state root as a long-lived packet leaves it. */
export async function makeBigRoot(root: string): Promise<void> {
  const control = join(root, "control");
  const archive = join(control, "events");
  await Deno.mkdir(archive, { recursive: true, mode: 0o700 });
  await Deno.mkdir(join(control, "requests"), { mode: 0o700 });
  await Deno.mkdir(join(control, "outcomes"), { mode: 0o700 });
  await Deno.chmod(root, 0o700);
  await Deno.chmod(control, 0o700);
  const lines: string[] = [];
  for (let i = 0; i < LOG_ENTRIES; i++) {
    const run = runId(i % ARCHIVED_RUNS);
    const steer = i % 3 === 0;
    lines.push(JSON.stringify({
      v: 1,
      at: "2026-01-01T00:00:00.000Z",
      run_id: run,
      request_id: `20260101T000000000Z-r${String(i).padStart(8, "0")}`,
      command: steer ? "steer" : "set_view",
      params: steer ? { text: "keep it short" } : { thinking: "hide" },
      author: "bench",
      outcome: steer ? (i % 2 === 0 ? "accepted" : "applied") : "applied",
      reason: null,
      prompt_id: "01",
      attempt: 1,
    }));
    if (steer && i % 2 === 0) {
      // Its final entry, as a finished steer has.
      lines.push(JSON.stringify({
        v: 1,
        at: "2026-01-01T00:00:00.000Z",
        run_id: run,
        request_id: `20260101T000000000Z-r${String(i).padStart(8, "0")}`,
        command: "steer",
        params: { text: "keep it short", delivery: "interrupt_and_resume" },
        author: "bench",
        outcome: "applied",
        reason: null,
        prompt_id: "01",
        attempt: 1,
      }));
      i++;
    }
  }
  await Deno.writeTextFile(
    join(control, "log.jsonl"),
    lines.join("\n") + "\n",
    {
      mode: 0o600,
    },
  );
  for (let n = 0; n < ARCHIVED_RUNS; n++) {
    const run = runId(n);
    const stream: string[] = [];
    for (let seq = 1; seq <= EVENTS_PER_ARCHIVED_RUN; seq++) {
      stream.push(event(run, seq));
    }
    const path = n === ARCHIVED_RUNS - 1
      ? join(control, "events.jsonl")
      : join(archive, `${run}.jsonl`);
    await Deno.writeTextFile(path, stream.join("\n") + "\n", { mode: 0o600 });
  }
}

async function timeStart(packet: string, root: string): Promise<number> {
  const start = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...CLI_PERMISSIONS,
      MAIN,
      "run",
      packet,
      "--state-root",
      root,
      "--json",
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (!output.success) {
    throw new Error(
      `run exited ${output.code}: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return ms;
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: { json: { type: "boolean" }, repeats: { type: "string" } },
  });
  const repeats = Number(args.values.repeats ?? 7);
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_bench_" });
  const rows: BenchRow[] = [];
  try {
    const packet = join(dir, "packet");
    await makePacket(packet);
    const big = join(dir, "big");
    progress(
      `generating ${LOG_ENTRIES} log entries and ${ARCHIVED_RUNS} archived runs…`,
    );
    await makeBigRoot(big);
    await timeStart(packet, join(dir, "warm")); // Warm the module cache.
    const fresh: number[] = [];
    const loaded: number[] = [];
    for (let i = 0; i < repeats; i++) {
      fresh.push(await timeStart(packet, join(dir, `fresh-${i}`)));
      loaded.push(await timeStart(packet, big));
      progress(
        `${i + 1}/${repeats}: fresh ${fresh.at(-1)!.toFixed(0)} ms, big ${
          loaded.at(-1)!.toFixed(0)
        } ms`,
      );
    }
    const f = median(fresh);
    const b = median(loaded);
    rows.push({
      measure:
        "run start (spawn → exit, 1-event packet) on a big root (100k log entries + 100 archived runs)",
      baseline: `fresh root: ${f.toFixed(0)} ms`,
      result: `${b.toFixed(0)} ms`,
      ratio: ratio(b, f),
      target: "≤ 1.2×",
      met: b / f <= 1.2,
      note: `median of ${repeats}`,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  report(rows);
}

if (import.meta.main) await main();
