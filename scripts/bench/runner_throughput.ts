#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * What the control plane costs a run: the same 20,000-event simulated run
 * in memory (`stateRoot: null`, the baseline), with a state root, with a
 * busy follower (`control events --json` in a subprocess, to /dev/null),
 * and with a `control status --json` poller subprocess in a loop. Medians
 * of repeats, each case interleaved with the baseline in the same run.
 *
 * Each row's note gives the runner process's CPU time beside the
 * baseline's too (`process.cpuUsage()`), which neighbours on a shared
 * machine disturb less than wall time. Also prints where a plane run's time goes: the plane's hooks
 * (`observe`, `boundary`) timed with `performance.now()` around them, so
 * the plane's share can be told from the runner's (transcripts, renderer).
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/runner_throughput.ts [--json] [--repeats N]
 *
 * @module
 */

import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { ControlPlane } from "../../lib/control/plane.ts";
import { runPacket } from "../../lib/runner/mod.ts";
import type { RunHooks } from "../../lib/shared/run_hooks.ts";
import {
  benchDir,
  type BenchRow,
  CLI_PERMISSIONS,
  EVENTS_PER_ROUND,
  loadRound,
  MAIN,
  median,
  progress,
  ratio,
  report,
  simulatedPacket,
} from "./_bench.ts";

const EVENTS = 20_000;
// Six events per round (thinking, message delta + received, tool start +
// completion, usage), plus a few per run.
const ROUNDS = Math.ceil(EVENTS / EVENTS_PER_ROUND);

async function makePacket(): Promise<string> {
  return await simulatedPacket(await benchDir(), loadRound(ROUNDS));
}

type Load = "none" | "follower" | "poller";

/** Spans of the plane's hooks in one run, in ms. */
interface Spans {
  observe: number;
  boundary: number;
  other: number;
}

function cli(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, MAIN, ...args],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  });
}

/** Wraps a plane's hooks in timers. */
function timed(plane: ControlPlane, spans: Spans): RunHooks {
  const time = async <T>(bucket: keyof Spans, work: () => Promise<T>) => {
    const start = performance.now();
    try {
      return await work();
    } finally {
      spans[bucket] += performance.now() - start;
    }
  };
  return {
    open: (info) => time("other", () => plane.open(info)),
    promptStarted: (info) => time("other", () => plane.promptStarted(info)),
    observe: (event) => time("observe", () => plane.observe(event)),
    boundary: (context) => time("boundary", () => plane.boundary(context)),
    steerSettled: (result) => time("other", () => plane.steerSettled(result)),
    steerCount: (prompt) => plane.steerCount(prompt),
    viewChanged: (view) => time("other", () => plane.viewChanged(view)),
    close: (status) => time("other", () => plane.close(status)),
    abandon: () => time("other", () => plane.abandon()),
    linkRefused: (refusal) => time("other", () => plane.linkRefused(refusal)),
  };
}

async function timeRun(
  dir: string,
  stateRoot: string | null,
  load: Load,
  spans?: Spans,
): Promise<{ ms: number; cpuMs: number; events: number }> {
  let loadProcess: Deno.ChildProcess | null = null;
  let poller: Promise<void> = Promise.resolve();
  let polling = true;
  let count = 0;
  const onEvent = (): void => {
    count++;
    if (count === 1 && load === "follower") {
      loadProcess = cli([
        "control",
        "events",
        stateRoot!,
        "--from",
        "start",
        "--json",
      ]).spawn();
    }
  };
  if (load === "poller") {
    poller = (async () => {
      while (polling) {
        await cli(["control", "status", stateRoot!, "--json"]).output();
      }
    })();
  }
  let hooks: RunHooks | undefined;
  if (stateRoot !== null && spans !== undefined) {
    // The plane the runner would open, with its hooks timed.
    hooks = timed(new ControlPlane(stateRoot), spans);
  }
  const start = performance.now();
  const cpu = process.cpuUsage();
  const result = await runPacket(dir, {
    stateRoot,
    onEvent,
    ...(hooks === undefined ? {} : { hooks }),
  });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  polling = false;
  await poller;
  if (loadProcess !== null) {
    const follower = loadProcess as Deno.ChildProcess;
    const status = await follower.status;
    if (!status.success) throw new Error(`follower exited ${status.code}`);
  }
  if (result.status !== "completed") throw new Error(`run ${result.status}`);
  return { ms, cpuMs: (used.user + used.system) / 1000, events: count };
}

export async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: { json: { type: "boolean" }, repeats: { type: "string" } },
  });
  const repeats = Number(args.values.repeats ?? 5);
  const dir = await makePacket();
  const rows: BenchRow[] = [];
  try {
    // Warm up (JIT, page cache).
    await timeRun(dir, null, "none");
    await timeRun(dir, join(dir, "warm"), "none");
    const cases: [string, Load, string][] = [
      ["runner with the control plane vs in memory", "none", "≤ 1.25×"],
      ["… with a busy follower (control events --json)", "follower", "≤ 1.5×"],
      ["… with a control status --json poller", "poller", "≤ 1.5×"],
    ];
    let n = 0;
    for (const [measure, load, target] of cases) {
      const base: number[] = [];
      const ours: number[] = [];
      const baseCpu: number[] = [];
      const oursCpu: number[] = [];
      let events = 0;
      for (let i = 0; i < repeats; i++) {
        const memory = await timeRun(dir, null, "none");
        base.push(memory.ms);
        baseCpu.push(memory.cpuMs);
        const run = await timeRun(dir, join(dir, `root-${n++}`), load);
        ours.push(run.ms);
        oursCpu.push(run.cpuMs);
        events = run.events;
        progress(
          `${load}: in memory ${base.at(-1)!.toFixed(0)} ms, plane ${
            ours.at(-1)!.toFixed(0)
          } ms`,
        );
      }
      const b = median(base);
      const o = median(ours);
      const limit = Number(target.replace(/[^0-9.]/g, ""));
      rows.push({
        measure,
        baseline: `in memory: ${(events / b * 1000).toFixed(0)} events/s`,
        result: `${(events / o * 1000).toFixed(0)} events/s`,
        ratio: ratio(o, b),
        target,
        met: o / b <= limit,
        note: `${events} events, median of ${repeats}; the runner's CPU time ${
          ratio(median(oursCpu), median(baseCpu))
        } (${median(oursCpu).toFixed(0)} vs ${
          median(baseCpu).toFixed(0)
        } ms in memory: what a busy machine disturbs least)`,
      });
    }
    // Where the time goes: the plane's hooks, timed, in a run of their own.
    const spans: Spans = { observe: 0, boundary: 0, other: 0 };
    const total = (await timeRun(dir, join(dir, "spans"), "none", spans)).ms;
    const memory: number[] = [];
    for (let i = 0; i < 3; i++) {
      memory.push((await timeRun(dir, null, "none")).ms);
    }
    const inMemory = median(memory);
    const share = spans.observe + spans.boundary + spans.other;
    rows.push({
      measure: "the plane's share of a plane run (hooks timed)",
      baseline: `in memory: ${inMemory.toFixed(0)} ms`,
      result: `run ${total.toFixed(0)} ms, of which plane hooks ${
        share.toFixed(0)
      } ms (observe ${spans.observe.toFixed(0)}, boundary ${
        spans.boundary.toFixed(0)
      }, other ${spans.other.toFixed(0)})`,
      ratio: ratio(share, total),
      target: "—",
      met: true,
      note:
        "the rest of the difference from in memory is the runner's own state-root work (transcripts, state files)",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  report(rows);
}

if (import.meta.main) await main();
