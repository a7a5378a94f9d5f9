#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Cold start: `deno run` of an empty script (the baseline) beside
 * `main.ts control status --json` on a state root with a finished run,
 * `main.ts --help` and `main.ts control status --help`. Each is a fresh
 * process; medians of {@linkcode REPEATS} runs, interleaved so the machine's
 * noise falls on all of them alike.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/cold_start.ts [--json]
 *
 * @module
 */

import { join } from "node:path";
import {
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  progress,
  ratio,
  report,
} from "./_bench.ts";

const REPEATS = 15;
/** The `--help` lines start no worker. */
const TARGET = 1.5;
/** A confined control command starts a worker too (issue 20 §6). */
const CONFINED_TARGET = 2;

async function timeProcess(args: string[], cwd: string): Promise<number> {
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const elapsed = performance.now() - started;
  if (!output.success) {
    throw new Error(`deno ${args.join(" ")} exited ${output.code}`);
  }
  return elapsed;
}

/** A packet with one finished simulated run, so its state root has a snapshot. */
async function makeRunPacket(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_cold_" });
  await Deno.mkdir(join(dir, "prompts"));
  await Deno.writeTextFile(
    join(dir, "prompt_runner_packet.md"),
    "---\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "01_a.prompt.md"),
    '---\nsimulate:\n  attempts:\n    - messages: ["done"]\n---\nWork.\n',
  );
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, MAIN, "run", dir],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `The setup run failed: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return dir;
}

const dir = await makeRunPacket();
const empty = join(dir, "empty.ts");
await Deno.writeTextFile(empty, "");
try {
  const cases: Record<string, string[]> = {
    empty: ["run", ...CLI_PERMISSIONS, empty],
    "control status --json": [
      "run",
      ...CLI_PERMISSIONS,
      MAIN,
      "control",
      "status",
      "--json",
    ],
    "--help": ["run", ...CLI_PERMISSIONS, MAIN, "--help"],
    "control status --help": [
      "run",
      ...CLI_PERMISSIONS,
      MAIN,
      "control",
      "status",
      "--help",
    ],
  };
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(cases)) {
    times[name] = [];
    await timeProcess(cases[name]!, dir); // warm the module cache
  }
  for (let round = 1; round <= REPEATS; round++) {
    for (const [name, args] of Object.entries(cases)) {
      times[name]!.push(await timeProcess(args, dir));
    }
    progress(`round ${round}/${REPEATS}`);
  }
  const baseline = median(times.empty!);
  const rows: BenchRow[] = [];
  for (const name of Object.keys(cases)) {
    if (name === "empty") continue;
    const figure = median(times[name]!);
    const target = name.endsWith("--help") ? TARGET : CONFINED_TARGET;
    progress(
      `${name}: ${figure.toFixed(0)} ms (empty: ${baseline.toFixed(0)} ms)`,
    );
    rows.push({
      measure: `cold start: main.ts ${name}`,
      baseline: `deno run of an empty script: ${baseline.toFixed(0)} ms`,
      result: `${figure.toFixed(0)} ms`,
      ratio: ratio(figure, baseline),
      target: `≤ ${target}×`,
      met: figure / baseline <= target,
    });
  }
  report(rows);
} finally {
  await Deno.remove(dir, { recursive: true });
}
