#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * The runner's own speed: an in-memory run (`runPacket(dir, {stateRoot:
 * null})`) of one simulated prompt streaming 20,000 events, beside the same
 * run with 100,000 events. The per-event cost of the long run against the
 * short one shows whether the runner (and the simulated provider feeding
 * it) stays linear: a queue shifted from the front, or any per-event work
 * that grows with the run, shows as a ratio well above 1. Medians of 5
 * runs each; figures in events per second.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/simulated_run.ts [--json]
 *
 * @module
 */

import { join } from "node:path";
import { runPacket } from "../../lib/runner/mod.ts";
import type { RunEvent } from "../../lib/shared/mod.ts";
import { type BenchRow, median, progress, ratio, report } from "./_bench.ts";

const ROUNDS = 5;
/** Events per round of the script: a thought, a message (delta + whole), a tool call (start + end), usage. */
const PER_ROUND = 6;

async function makePacket(events: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_bench_" });
  await Deno.mkdir(join(dir, "prompts"));
  await Deno.writeTextFile(
    join(dir, "prompt_runner_packet.md"),
    "---\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "01_load.prompt.md"),
    [
      "---",
      "simulate:",
      "  attempts:",
      `    - repeat: ${Math.round(events / PER_ROUND)}`,
      '      thinking: ["thinking it over"]',
      '      messages: ["working on it"]',
      "      tools: [{name: Bash, input: {command: ls}, output: a.md}]",
      "      usage: {input_tokens: 100, output_tokens: 10}",
      "---",
      "Work.",
    ].join("\n"),
  );
  return dir;
}

/** One in-memory run: its events and how long it took, in ms. */
async function timeRun(dir: string): Promise<{ events: number; ms: number }> {
  let events = 0;
  const start = performance.now();
  const result = await runPacket(dir, {
    stateRoot: null,
    onEvent: (_event: RunEvent) => {
      events++;
    },
  });
  const ms = performance.now() - start;
  if (result.status !== "completed") throw new Error(`run ${result.status}`);
  return { events, ms };
}

async function measure(
  events: number,
): Promise<{ events: number; perSecond: number }> {
  const dir = await makePacket(events);
  try {
    await timeRun(dir); // warm-up: compile the hot paths
    const rates: number[] = [];
    let count = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const run = await timeRun(dir);
      count = run.events;
      rates.push(run.events / (run.ms / 1000));
      progress(
        `  ${run.events} events: ${run.ms.toFixed(0)} ms (${
          Math.round(rates.at(-1)!)
        } events/s)`,
      );
    }
    return { events: count, perSecond: median(rates) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  progress("simulated run in memory, 20k events (baseline)");
  const short = await measure(20_000);
  progress("simulated run in memory, 100k events");
  const long = await measure(100_000);
  // Per-event cost of the long run over the short one: 1.00× is linear.
  const perEvent = short.perSecond / long.perSecond;
  const rows: BenchRow[] = [{
    measure:
      `runner in memory, simulated provider: per-event cost at ${long.events} vs ${short.events} events`,
    baseline: `${short.events} events: ${Math.round(short.perSecond)} events/s`,
    result: `${long.events} events: ${Math.round(long.perSecond)} events/s`,
    ratio: ratio(short.perSecond, long.perSecond),
    target: "linear: ≤ 1.25× per-event cost",
    met: perEvent <= 1.25,
    note: `median of ${ROUNDS} runs each, after a warm-up run`,
  }];
  report(rows);
}

if (import.meta.main) await main();
