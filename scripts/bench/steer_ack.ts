#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * Steer latency on every live lane: the real `main.ts run` against a held
 * loopback stand-in (claude, `codex app-server`, `gemini --acp`,
 * `claude-code-acp` as `provider: acp`; the simulated `stdin` lane as the
 * no-agent baseline), steered with `steer()` one steer after the other. Per
 * steer, from the runner's files: placed (its `accepted` log entry),
 * acknowledged (`acknowledged_at` in `interventions/01.jsonl`), applied (its
 * `applied` log entry). One row per lane: placed → acknowledged (the
 * agent's time, mostly the stand-in's 2 s hold) as the baseline,
 * acknowledged → applied (the runner's) as the figure; met when every steer
 * was applied within 1 s of its acknowledgement by the lane's own
 * mechanism. A lane whose CLI is missing, or that fails, is a row saying so.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/steer_ack.ts [--json] [--steers N] [--lanes simulated,claude,…]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { currentRun, type RunRef, steer } from "../../mod.ts";
import { errorText } from "../../lib/shared/errors.ts";
import { agentBin } from "../_harness/agent_cli.ts";
import { makeAgentPacket } from "../_harness/agents/packet.ts";
import { type Lane, type LaneRig, LANES } from "./_steer_lanes.ts";
import {
  benchDir,
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  percentile,
  progress,
  report,
} from "./_bench.ts";

/** Steers per lane, unless `--steers` says otherwise. */
const STEERS = 5;
/** A steer is sent only while a held reply has this long still to go. */
const HOLD_LEFT_MS = 1200;
/** How long one step (the session's start, a steer's fate) may take. */
const STEP_TIMEOUT_MS = 60_000;
/** How long the run has to end by itself once the steers are done. */
const FINISH_TIMEOUT_MS = 30_000;
/** The target: applied within this long of the agent's acknowledgement. */
const TARGET_MS = 1000;

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

type Json = Record<string, unknown>;

/** A JSONL file's objects (none when it does not exist yet). */
async function readJsonl(path: string): Promise<Json[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const lines: Json[] = [];
  for (const line of text.split("\n")) {
    // The last line may be half written.
    try {
      if (line.trim()) lines.push(JSON.parse(line));
    } catch { /* written next time */ }
  }
  return lines;
}

/** The runner process and what it has said on stderr. */
interface Runner {
  child: Deno.ChildProcess;
  exited: Deno.CommandStatus | null;
  stderr: Promise<string>;
}

function startRunner(packetDir: string, env: Record<string, string>): Runner {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...CLI_PERMISSIONS,
      MAIN,
      "run",
      packetDir,
      "--json",
    ],
    env: { ...env, NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const runner: Runner = {
    child,
    exited: null,
    stderr: new Response(child.stderr).text(),
  };
  child.status.then((status) => runner.exited = status);
  return runner;
}

/** Why the runner is gone, with the end of its stderr. */
async function exitedText(runner: Runner): Promise<string> {
  const tail = (await runner.stderr).trim().split("\n").slice(-5).join(" | ");
  return `the runner exited (${runner.exited!.code})${tail ? `: ${tail}` : ""}`;
}

/** Polls `check` until it returns non-null; fails on the runner's exit. */
async function until<T>(
  what: string,
  runner: Runner,
  check: () => Promise<T | null> | T | null,
): Promise<T> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (runner.exited !== null) {
      throw new Error(`${what}: ${await exitedText(runner)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: nothing after ${STEP_TIMEOUT_MS / 1000} s`);
    }
    await sleep(10);
  }
}

/** Stops the runner: it ends by itself within `wait` ms, or SIGTERM, then SIGKILL. */
async function stopRunner(runner: Runner, wait: number): Promise<void> {
  const gone = runner.child.status.then(() => true);
  const within = async (ms: number): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const result = await Promise.race([gone, late]);
    clearTimeout(timer);
    return result;
  };
  if (await within(wait)) return;
  progress("  the run did not end by itself: SIGTERM");
  runner.child.kill("SIGTERM");
  if (await within(10_000)) return;
  runner.child.kill("SIGKILL");
  await gone;
}

/** One steer's times, from the runner's files. */
interface SteerTimes {
  outcome: "applied" | "rejected";
  reason: string | null;
  mechanism: string | null;
  /** placed → acknowledged, ms. */
  toAck: number | null;
  /** acknowledged → applied, ms. */
  toApplied: number | null;
}

/** What one lane measured. */
interface LaneResult {
  steers: SteerTimes[];
  seconds: number;
}

const ms = (iso: unknown): number => Date.parse(String(iso));

/** A steer's times from its log entries and its intervention record. */
function steerTimes(entries: Json[], record: Json | undefined): SteerTimes {
  const accepted = entries.find((e) => e.outcome === "accepted");
  const final = entries.find((e) =>
    e.outcome === "applied" || e.outcome === "rejected"
  )!;
  const placed = ms(accepted?.at);
  const acked = ms(record?.acknowledged_at);
  const applied = ms(final.at);
  const known = final.outcome === "applied" && Number.isFinite(acked) &&
    Number.isFinite(placed);
  return {
    outcome: final.outcome as SteerTimes["outcome"],
    reason: typeof final.reason === "string" ? final.reason : null,
    mechanism: typeof record?.mechanism === "string" ? record.mechanism : null,
    toAck: known ? acked - placed : null,
    toApplied: known ? applied - acked : null,
  };
}

/** Runs the lane's packet, steers it `count` times, and reads the times. */
async function measureLane(lane: Lane, count: number): Promise<LaneResult> {
  const started = performance.now();
  const dir = await benchDir();
  let rig: LaneRig | null = null;
  let runner: Runner | null = null;
  try {
    rig = await lane.rig(dir);
    const packet = await makeAgentPacket(dir, rig.fixture, {
      verify: {},
      recovery: { max_steers: count + 5 },
      timeout_ms: 300_000,
      body: "Work on the task until told otherwise.",
    });
    const logPath = join(packet.stateRoot, "control", "log.jsonl");
    const eventsPath = join(packet.stateRoot, "control", "events.jsonl");
    const recordsPath = join(packet.stateRoot, "interventions", "01.jsonl");
    const live = runner = startRunner(packet.dir, rig.fixture.env);
    const script = rig.script;
    await until(
      "the agent's session start",
      live,
      async () =>
        (await readJsonl(eventsPath)).some((e) => e.type === "run_started")
          ? true
          : null,
    );
    const ref: RunRef = await currentRun(packet.stateRoot);
    progress(
      `  session started after ${
        ((performance.now() - started) / 1000).toFixed(1)
      } s`,
    );
    const steers: SteerTimes[] = [];
    for (let n = 1; n <= count; n++) {
      if (script !== null) {
        await until(
          `steer ${n}: a model reply in flight`,
          live,
          () => script.holding(HOLD_LEFT_MS) ? true : null,
        );
      }
      const { request_id: id } = await steer(
        ref,
        `Bench steer ${n} of ${count}: keep going as you are.`,
        { promptId: "01", author: "bench" },
      );
      const entries = await until(`steer ${n}'s fate`, live, async () => {
        const mine = (await readJsonl(logPath)).filter((e) =>
          e.request_id === id
        );
        return mine.some((e) =>
            e.outcome === "applied" || e.outcome === "rejected"
          )
          ? mine
          : null;
      });
      // The record is written before the log's final entry.
      const record = (await readJsonl(recordsPath)).find((r) =>
        r.request_id === id
      );
      const times = steerTimes(entries, record);
      steers.push(times);
      progress(
        `  steer ${n}/${count}: ${times.outcome}${
          times.toApplied === null
            ? times.reason ? ` (${times.reason})` : ""
            : ` by ${times.mechanism}, placed → acknowledged ${times.toAck} ms, acknowledged → applied ${times.toApplied} ms`
        }`,
      );
    }
    script?.finish();
    await stopRunner(live, FINISH_TIMEOUT_MS);
    return { steers, seconds: (performance.now() - started) / 1000 };
  } finally {
    rig?.script?.finish();
    if (runner !== null && runner.exited === null) {
      await stopRunner(runner, 0);
    }
    await runner?.stderr;
    await rig?.fixture.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const TARGET = "applied ≤ 1 s after the agent's acknowledgement";

function measureOf(lane: Lane, mechanisms: string[]): string {
  const how = mechanisms.length > 0 ? mechanisms.join(", ") : lane.mechanism;
  return `steer → acknowledged → applied, ${lane.name} (${how})`;
}

function laneRow(lane: Lane, count: number, result: LaneResult): BenchRow {
  const timed = result.steers.filter((s) => s.toApplied !== null);
  const applied = result.steers.filter((s) => s.outcome === "applied");
  const rejected = result.steers.filter((s) => s.outcome === "rejected");
  const mechanisms = [...new Set(applied.map((s) => s.mechanism ?? "none"))];
  const notes = [
    `${applied.length}/${count} steers applied, lane run ${
      result.seconds.toFixed(1)
    } s`,
  ];
  if (applied.length > timed.length) {
    notes.push(
      `${applied.length - timed.length} applied with no acknowledged_at`,
    );
  }
  if (rejected.length > 0) {
    const reasons = [...new Set(rejected.map((s) => s.reason ?? "no reason"))];
    notes.push(`${rejected.length} rejected: ${reasons.join("; ")}`);
  }
  // A steer delivered some other way was not measured on this lane.
  const offLane = mechanisms.some((m) => m !== lane.mechanism);
  if (offLane) {
    notes.push(
      `not on the live lane: expected mechanism ${lane.mechanism}, got ${
        mechanisms.join(", ")
      }`,
    );
  }
  if (timed.length === 0) {
    return {
      measure: measureOf(lane, mechanisms),
      baseline: "—",
      result: "no steer applied and acknowledged",
      ratio: "—",
      target: TARGET,
      met: false,
      note: notes.join("; "),
    };
  }
  const toAck = timed.map((s) => s.toAck!);
  const toApplied = timed.map((s) => s.toApplied!);
  const max = Math.max(...toApplied);
  return {
    measure: measureOf(lane, mechanisms),
    baseline: `placed → acknowledged (the agent): ${median(toAck)} ms`,
    result: `acknowledged → applied: ${median(toApplied)} ms, p90 ${
      percentile(toApplied, 90)
    } ms (median of ${timed.length})`,
    ratio: `max ${max} ms`,
    target: TARGET,
    met: max <= TARGET_MS && !offLane,
    note: notes.join("; "),
  };
}

function missRow(lane: Lane, note: string): BenchRow {
  return {
    measure: measureOf(lane, []),
    baseline: "—",
    result: "not measured",
    ratio: "—",
    target: TARGET,
    met: false,
    note,
  };
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      steers: { type: "string" },
      lanes: { type: "string" },
    },
  });
  const count = Number(args.values.steers ?? STEERS);
  const only = args.values.lanes?.split(",").map((l) => l.trim());
  const rows: BenchRow[] = [];
  const started = performance.now();
  for (const lane of LANES) {
    if (only && !only.includes(lane.name)) continue;
    progress(`${lane.name} (${lane.mechanism}):`);
    const missing = lane.clis.filter((cli) => agentBin(cli) === null);
    if (missing.length > 0) {
      const note = `not measured: the ${
        missing.join(" and ")
      } CLI is not installed (.ci/run installs it into .ci/.agents/)`;
      progress(`  ${note}`);
      rows.push(missRow(lane, note));
      continue;
    }
    try {
      const result = await measureLane(lane, count);
      const row = laneRow(lane, count, result);
      progress(`  ${row.result}; ${row.note}`);
      rows.push(row);
    } catch (error) {
      const note = `the lane failed: ${errorText(error)}`;
      progress(`  ${note}`);
      rows.push(missRow(lane, note));
    }
  }
  progress(
    `all lanes in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  report(rows);
}

if (import.meta.main) await main();
