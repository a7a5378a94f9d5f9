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

import { runPacket } from "../../lib/runner/mod.ts";
import type { RunEvent } from "../../lib/shared/mod.ts";
import {
  benchDir,
  type BenchRow,
  EVENTS_PER_ROUND,
  loadRound,
  median,
  progress,
  ratio,
  report,
  simulatedPacket,
} from "./_bench.ts";

const ROUNDS = 5;

async function makePacket(events: number): Promise<string> {
  return await simulatedPacket(
    await benchDir(),
    loadRound(Math.round(events / EVENTS_PER_ROUND)),
  );
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
