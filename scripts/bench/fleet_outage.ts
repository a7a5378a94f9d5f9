#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * Catch-up after a fleet outage (issue 21): a live run writing 1,000
 * events/s, published to a one-node `nats-server` on loopback by its bridge
 * in a worker as `run --fleet` publishes one (`_fleet.ts`'s `playFleetRun`:
 * a simulated packet cannot be paced that fast, its provider sleeps at
 * least a timer tick, 2–3 ms here, between events). Once the fleet has the
 * run, the only server is killed (SIGKILL) for 30 s and started again on
 * its store. From the moment the server is healthy again, this polls the
 * run's last message in the fleet (over a connection opened then, so its
 * own reconnect delay is not counted) until the fleet holds the event that
 * was the file's last when the server came back (the backlog), and then the
 * live edge. The run then finishes, and the fleet's copy is checked byte
 * for byte against events.jsonl (gap-free, duplicate-free). Each repeat
 * has a server of its own; one that ends by itself (a neighbour's kill on a
 * shared machine) has its repeat done again, at most twice.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/fleet_outage.ts [--json] [--outage S] [--repeats N]
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { FleetLink } from "../../lib/fleet/_link.ts";
import { NatsServers } from "../_harness/nats.ts";
import { sleep } from "../_harness/mod.ts";
import { type BenchRow, median, progress, report } from "./_bench.ts";
import {
  benchLink,
  eventsFile,
  fleetLast,
  lastEvent,
  natsInstalled,
  ok,
  type PlayedRun,
  playFleetRun,
  sameBytes,
  spread,
  timeCli,
  waitFor,
} from "./_fleet.ts";

const TARGET_MS = 5_000;
/** Events per second the run writes. */
const RATE = 1_000;
/** Publishing before the outage, and the most a catch-up may take here. */
const LEAD_MS = 5_000;
const GIVE_UP_MS = 60_000;

interface Outage {
  rate: number;
  backlog: number;
  caughtUpMs: number;
  liveMs: number;
  identical: boolean;
}

async function seqOf(file: string): Promise<number> {
  return (await lastEvent(file))?.seq ?? 0;
}

/** Appends to a played run at `rate` events/s until stopped. */
function pace(run: PlayedRun, rate: number): () => void {
  const start = performance.now();
  let appended = 0;
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - start) / 1000 * rate);
    if (due > appended) run.append(due - appended);
    appended = Math.max(due, appended);
  }, 5);
  return () => clearInterval(timer);
}

/** The server ended when this script did not end it. */
class ServerGone extends Error {}

/**
 * A check that throws {@linkcode ServerGone} once the server's current
 * process has ended by itself (a neighbour's kill, say; seen on a shared
 * machine), so the repeat is done again instead of waiting for nothing.
 */
function watchServer(servers: NatsServers): () => void {
  const process = servers.nodes[0]!.process!;
  let gone: string | null = null;
  process.status.then((status) => {
    if (servers.nodes[0]!.process !== process) return;
    gone = `nats-server ended by itself (${
      status.signal ?? `exit ${status.code}`
    })`;
  });
  return () => {
    if (gone !== null) throw new ServerGone(gone);
  };
}

async function outage(
  dir: string,
  name: string,
  outageMs: number,
): Promise<Outage> {
  await using servers = await NatsServers.start(1);
  let alive = watchServer(servers);
  const url = servers.url();
  const run = await playFleetRun(
    dir,
    url,
    `${Date.now().toString(36)}-${name}`,
  );
  const file = eventsFile(run.root);
  const stop = pace(run, RATE);
  // Closed however this ends: an open one reconnects forever.
  let link: FleetLink | null = null;
  try {
    link = await benchLink(url);
    await waitFor(
      "the fleet holding the run's first event",
      async () => {
        alive();
        return await fleetLast(link!, run.key).catch(() => null) !== null;
      },
    );
    const [startSeq, startAt] = [await seqOf(file), performance.now()];
    await sleep(LEAD_MS);
    alive();
    const rate = (await seqOf(file) - startSeq) /
      ((performance.now() - startAt) / 1000);
    const before = (await fleetLast(link, run.key))!.seq;
    await link.close();
    link = null;
    await servers.kill(0);
    progress(
      `${name}: ${
        rate.toFixed(0)
      } events/s; the fleet held ${before}, the file ${await seqOf(
        file,
      )}; the server killed for ${outageMs / 1000} s`,
    );
    await sleep(outageMs);
    await servers.restart(0);
    const back = performance.now();
    alive = watchServer(servers);
    const target = await seqOf(file);
    link = await benchLink(url);
    let caughtUpMs = NaN;
    let liveMs = NaN;
    while (performance.now() - back < GIVE_UP_MS) {
      alive();
      const held = (await fleetLast(link, run.key).catch(() => null))?.seq ??
        0;
      const now = performance.now() - back;
      if (Number.isNaN(caughtUpMs) && held >= target) caughtUpMs = now;
      if (!Number.isNaN(caughtUpMs) && held >= await seqOf(file)) {
        liveMs = now;
        break;
      }
      await sleep(10);
    }
    await link.close();
    link = null;
    progress(
      `${name}: backlog ${target - before} events; caught up ${
        caughtUpMs.toFixed(0)
      } ms after the server was back, live edge at ${liveMs.toFixed(0)} ms`,
    );
    stop();
    const report = await run.finish();
    if (!report?.complete) {
      throw new Error(`${name}: the bridge left the copy incomplete`);
    }
    const copy = ok(
      "fleet replay",
      await timeCli([
        "control",
        "events",
        `fleet:${run.key.split(".").at(-1)}`,
        "--fleet",
        url,
        "--from",
        "start",
        "--json",
      ], { keep: true }),
    );
    return {
      rate,
      backlog: target - before,
      caughtUpMs,
      liveMs,
      identical: sameBytes(copy.stdout, await Deno.readFile(file)),
    };
  } finally {
    stop();
    await link?.close();
    await run.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      outage: { type: "string" },
      repeats: { type: "string" },
    },
  });
  const outageMs = Number(args.values.outage ?? 30) * 1000;
  const repeats = Number(args.values.repeats ?? 3);
  const measure = `catch-up after a ${
    outageMs / 1000
  } s outage (the only server SIGKILLed) of a run at 1,000 events/s`;
  const target = `within ${TARGET_MS / 1000} s of the server's return`;
  if (!natsInstalled(measure, target)) return;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fleet_" });
  try {
    const results: Outage[] = [];
    let again = 0;
    for (let i = 0; results.length < repeats; i++) {
      try {
        results.push(await outage(dir, `outage-${i}`, outageMs));
      } catch (error) {
        if (!(error instanceof ServerGone) || ++again > 2) throw error;
        progress(`outage-${i}: ${error.message}; again, on a new server`);
      }
    }
    const caughtUp = results.map((r) => r.caughtUpMs);
    const met = results.every((r) => r.caughtUpMs <= TARGET_MS && r.identical);
    const rows: BenchRow[] = [{
      measure,
      baseline: `backlog ${spread(results.map((r) => r.backlog))} events at ${
        spread(results.map((r) => r.rate))
      } events/s`,
      result: `the fleet held the backlog ${
        spread(caughtUp)
      } ms after the server was back; the live edge at ${
        spread(results.map((r) => r.liveMs))
      } ms; copy identical to events.jsonl in ${
        results.filter((r) => r.identical).length
      }/${results.length}`,
      ratio: `${
        (median(results.map((r) => r.backlog)) / (median(caughtUp) / 1000))
          .toFixed(0)
      } events/s caught up`,
      target,
      met,
      note:
        `medians (min–max) of ${repeats} outages; "back" is when the server's /healthz answers`,
    }];
    report(rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
