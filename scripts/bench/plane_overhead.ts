#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * What the control plane costs a run, and what readers cost it: the same
 * 3,000-event simulated packet run in memory (no plane), with a state root
 * (snapshot, events.jsonl, request polling), and with a state root while
 * another process-like loop reads the snapshot and replays the events
 * as fast as it can. Prints the median of each (5 runs) and the ratios to the
 * in-memory baseline, side by side.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/plane_overhead.ts
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { currentRun, snapshot } from "../../lib/control/mod.ts";
import { runPacket } from "../../lib/runner/mod.ts";

const ROUNDS = 5;
const REPEAT = 500; // 6 events per round: 3,000 events.

async function makePacket(): Promise<string> {
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
      `    - repeat: ${REPEAT}`,
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timeRun(
  dir: string,
  stateRoot: string | null,
  reader: boolean,
): Promise<number> {
  let reading = true;
  let reads = 0;
  const readerLoop = reader
    ? (async () => {
      while (reading) {
        try {
          const ref = await currentRun(stateRoot!);
          await snapshot(ref);
          await Deno.readTextFile(join(stateRoot!, "control", "events.jsonl"));
          reads++;
        } catch {
          // Not started yet.
        }
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })()
    : Promise.resolve();
  const start = performance.now();
  const result = await runPacket(dir, { stateRoot });
  const elapsed = performance.now() - start;
  reading = false;
  await readerLoop;
  if (result.status !== "completed") throw new Error(`run ${result.status}`);
  if (reader && reads === 0) throw new Error("the reader never read");
  return elapsed;
}

async function main(): Promise<void> {
  const dir = await makePacket();
  try {
    const cases: [string, (i: number) => Promise<number>][] = [
      ["in memory (baseline)", () => timeRun(dir, null, false)],
      [
        "state root + plane",
        (i) => timeRun(dir, join(dir, `state-${i}`), false),
      ],
      [
        "state root + plane + busy reader",
        (i) => timeRun(dir, join(dir, `read-${i}`), true),
      ],
    ];
    const medians: number[] = [];
    for (const [, run] of cases) {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) times.push(await run(i));
      medians.push(median(times));
    }
    console.log(`${REPEAT * 6} events per run, median of ${ROUNDS} runs`);
    cases.forEach(([name], i) => {
      console.log(
        `${name.padEnd(34)} ${medians[i]!.toFixed(0).padStart(6)} ms   ${
          (medians[i]! / medians[0]!).toFixed(2)
        }x baseline`,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
