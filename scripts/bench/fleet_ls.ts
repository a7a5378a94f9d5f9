#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * `fleet ls` of a big fleet (issue 21): 1,000 runs' snapshots in `PR_RUNS`
 * (one run's real snapshot, from a simulated `run --fleet`, and 999 copies
 * of it under other keys, put straight into the bucket: ten nodes, a
 * hundred runs each), then `prompt_runner fleet ls --fleet URL --json`,
 * spawn to exit, its lines counted, against `fleet ls` of an empty fleet
 * (its bucket made, no key) on a second server in the same run,
 * interleaved, medians of repeats.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/fleet_ls.ts [--json] [--repeats N] [--runs N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { RUNS_BUCKET } from "../../lib/fleet/fleet_names.ts";
import { NatsServers } from "../_harness/nats.ts";
import {
  benchDir,
  type BenchRow,
  median,
  progress,
  ratio,
  report,
  simulatedPacket,
} from "./_bench.ts";
import {
  benchLink,
  fleetKey,
  natsInstalled,
  NODE,
  ok,
  spread,
  timeCli,
} from "./_fleet.ts";

const TARGET_MS = 1_000;
const encoder = new TextEncoder();

/** Fills the fleet at `url` with `runs` runs: one real, the rest its copies. */
async function fill(url: string, runs: number): Promise<void> {
  const dir = await simulatedPacket(await benchDir(), ["messages: [done]"]);
  try {
    const root = join(dir, "state");
    const runId = `${Date.now().toString(36)}-ls`;
    ok(
      "the first run",
      await timeCli([
        "run",
        dir,
        "--state-root",
        root,
        "--run-id",
        runId,
        "--fleet",
        url,
        "--fleet-node",
        NODE,
      ]),
    );
    const link = await benchLink(url);
    try {
      const first = await link.kvGet(RUNS_BUCKET, await fleetKey(root, runId));
      if (first === null) {
        throw new Error("the run's snapshot is not in PR_RUNS");
      }
      const snapshot = JSON.parse(new TextDecoder().decode(first.value));
      const puts: Promise<void>[] = [];
      for (let n = 1; n < runs; n++) {
        const copy = { ...snapshot, run_id: `${runId}-${n}` };
        const key = `m${n % 10}.r-bench${n % 3}.${copy.run_id}`;
        puts.push(
          link.kvPut(RUNS_BUCKET, key, encoder.encode(JSON.stringify(copy))),
        );
        if (puts.length >= 100) await Promise.all(puts.splice(0));
      }
      await Promise.all(puts);
    } finally {
      await link.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      repeats: { type: "string" },
      runs: { type: "string" },
    },
  });
  const repeats = Number(args.values.repeats ?? 7);
  const runs = Number(args.values.runs ?? 1_000);
  const measure = `\`fleet ls --json\` with ${
    runs.toLocaleString("en")
  } runs in the bucket, spawn → exit`;
  const target = `< ${TARGET_MS / 1000} s`;
  if (!natsInstalled(measure, target)) return;
  await using full = await NatsServers.start(1);
  await using empty = await NatsServers.start(1);
  await fill(full.url(), runs);
  const link = await benchLink(empty.url());
  try {
    await link.ensureBucket(RUNS_BUCKET, 1);
  } finally {
    await link.close();
  }
  const ls = async (url: string) =>
    ok(
      "fleet ls",
      await timeCli(["fleet", "ls", "--fleet", url, "--json"], { keep: true }),
    );
  const lines = (bytes: Uint8Array) =>
    bytes.reduce((n, byte) => n + (byte === 0x0a ? 1 : 0), 0);
  // Warm up (the module cache).
  await ls(empty.url());
  const base: number[] = [];
  const ours: number[] = [];
  let listed = 0;
  for (let i = 0; i < repeats; i++) {
    const none = await ls(empty.url());
    if (lines(none.stdout) !== 0) throw new Error("the empty fleet lists runs");
    base.push(none.ms);
    const all = await ls(full.url());
    listed = lines(all.stdout);
    ours.push(all.ms);
    progress(
      `empty ${none.ms.toFixed(0)} ms, ${listed} runs ${all.ms.toFixed(0)} ms`,
    );
  }
  const rows: BenchRow[] = [{
    measure,
    baseline: `an empty fleet: ${spread(base)} ms`,
    result: `${spread(ours)} ms, ${listed} lines`,
    ratio: ratio(median(ours), median(base)),
    target,
    met: median(ours) < TARGET_MS && listed === runs,
    note: `medians (min–max) of ${repeats}, interleaved; ${
      (median(ours) - median(base)).toFixed(0)
    } ms more than listing nothing`,
  }];
  report(rows);
}

if (import.meta.main) await main();
