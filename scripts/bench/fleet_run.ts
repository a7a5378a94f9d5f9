#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * What joining a fleet costs a run (issue 21): whole `prompt_runner run`
 * processes (spawn → exit) of the same 20,000-event flat-out simulated
 * packet, with `--fleet` to a one-node `nats-server` on loopback and
 * without (the baseline), interleaved, medians of repeats. For each fleet
 * run it also reports how long after the run's `run_finished` the fleet
 * held it (the server's time of storing it, beside the event's `at`), how
 * long after it the process exited (the runner waits for its bridge), and
 * whether the fleet's copy (`control events fleet:… --from start --json`)
 * is byte for byte the run's events.jsonl.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/fleet_run.ts [--json] [--repeats N] [--events N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { NatsServers } from "../_harness/nats.ts";
import { cpuSeconds } from "../_harness/proc.ts";
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
import {
  benchLink,
  eventsFile,
  fleetKey,
  fleetLast,
  lastEvent,
  natsInstalled,
  NODE,
  ok,
  sameBytes,
  spread,
  timeCli,
} from "./_fleet.ts";

const TARGET = 1.15;

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      repeats: { type: "string" },
      events: { type: "string" },
    },
  });
  const repeats = Number(args.values.repeats ?? 5);
  const events = Number(args.values.events ?? 20_000);
  const measure = `a flat-out simulated run (${
    events / 1000
  }k events), \`run --fleet\` (one node, loopback) vs without, spawn → exit`;
  const target = `≤ ${TARGET}×`;
  if (!natsInstalled(measure, target)) return;
  const dir = await simulatedPacket(
    await benchDir(),
    loadRound(Math.ceil(events / EVENTS_PER_ROUND)),
  );
  await using servers = await NatsServers.start(1);
  const url = servers.url();
  const link = await benchLink(url);
  const stamp = Date.now().toString(36);
  try {
    const run = (name: string, fleet: boolean) =>
      timeCli([
        "run",
        dir,
        "--json",
        "--state-root",
        join(dir, name),
        "--run-id",
        `${stamp}-${name}`,
        ...(fleet ? ["--fleet", url, "--fleet-node", NODE] : []),
      ]);
    // Warm up (the module cache, the page cache, the fleet's streams).
    ok("warm-up run", await run("warm-plain", false));
    ok("warm-up fleet run", await run("warm-fleet", true));
    const plain: number[] = [];
    const fleet: number[] = [];
    const plainCpu: number[] = [];
    const fleetCpu: number[] = [];
    const serverCpu: number[] = [];
    const serverPid = servers.nodes[0]!.process!.pid;
    const stored: number[] = [];
    const exitLag: number[] = [];
    const plainExitLag: number[] = [];
    let identical = 0;
    let count = 0;
    for (let i = 0; i < repeats; i++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      for (const withFleet of i % 2 === 0 ? [false, true] : [true, false]) {
        const name = `${withFleet ? "fleet" : "plain"}-${i}`;
        const serverBefore = await cpuSeconds([serverPid]);
        const timed = ok(`run ${name}`, await run(name, withFleet));
        const serverMs = (await cpuSeconds([serverPid]) - serverBefore) * 1000;
        const root = join(dir, name);
        const last = await lastEvent(eventsFile(root));
        if (last?.type !== "run_finished") throw new Error(`${name}: no end`);
        count = last.seq;
        const lag = timed.exitedAt - Date.parse(last.at);
        if (!withFleet) {
          plain.push(timed.ms);
          plainCpu.push(timed.cpuMs);
          plainExitLag.push(lag);
          continue;
        }
        fleet.push(timed.ms);
        fleetCpu.push(timed.cpuMs);
        serverCpu.push(serverMs);
        exitLag.push(lag);
        const key = await fleetKey(root, `${stamp}-${name}`);
        const held = await fleetLast(link, key);
        if (held?.seq !== last.seq) {
          throw new Error(
            `${name}: the fleet holds ${held?.seq} of ${last.seq}`,
          );
        }
        stored.push(held.time - Date.parse(last.at));
        const copy = ok(
          "fleet replay",
          await timeCli([
            "control",
            "events",
            `fleet:${stamp}-${name}`,
            "--fleet",
            url,
            "--from",
            "start",
            "--json",
          ], { keep: true }),
        );
        if (sameBytes(copy.stdout, await Deno.readFile(eventsFile(root)))) {
          identical++;
        }
      }
      progress(
        `without ${plain.at(-1)!.toFixed(0)} ms, --fleet ${
          fleet.at(-1)!.toFixed(0)
        } ms (run_finished stored ${
          stored.at(-1)!.toFixed(0)
        } ms after its at)`,
      );
    }
    const factor = median(fleet) / median(plain);
    const rows: BenchRow[] = [{
      measure,
      baseline: `without --fleet: ${spread(plain)} ms`,
      result: `${spread(fleet)} ms; the fleet held run_finished ${
        spread(stored)
      } ms after its \`at\`; copy identical to events.jsonl in ${identical}/${fleet.length}`,
      ratio: ratio(median(fleet), median(plain)),
      target,
      met: factor <= TARGET && identical === fleet.length,
      note:
        `${count} events; medians (min–max) of ${repeats}, interleaved; CPU time ${
          ratio(median(fleetCpu), median(plainCpu))
        } (${median(fleetCpu).toFixed(0)} vs ${
          median(plainCpu).toFixed(0)
        } ms; the bridge runs in a worker of the runner) and nats-server's ${
          median(serverCpu).toFixed(0)
        } ms: three busy threads for two cores; exit ${
          spread(exitLag)
        } ms after run_finished's \`at\` (without: ${
          spread(plainExitLag)
        } ms): the runner waits for its bridge`,
    }];
    report(rows);
  } finally {
    await link.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
