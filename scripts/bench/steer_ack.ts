#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * Steer latency on every live lane: the real `main.ts run` process runs a
 * one-prompt packet against a scripted loopback model stand-in (the real
 * claude, `codex app-server`, `gemini --acp`, and `claude-code-acp` as
 * `provider: acp`), or the simulated provider on its `stdin` lane as the
 * no-agent baseline. While the stand-in holds a model reply (a turn in
 * flight), the bench steers the run with the client API's `steer()`, one
 * steer after the other, each once the previous one is `applied` or
 * `rejected`. For each steer it reads, from the files the runner writes:
 *
 * - placed: the steer's `accepted` entry in `control/log.jsonl`;
 * - acknowledged: `acknowledged_at` of its record in
 *   `interventions/01.jsonl` (when the agent acknowledged it);
 * - applied: its `applied` entry in `control/log.jsonl`.
 *
 * One row per lane: placed → acknowledged (the agent's own time) as the
 * baseline, acknowledged → applied (the runner's) as the figure, met when
 * every steer was applied within 1 s of its acknowledgement by the lane's
 * own mechanism (a codex steer delivered by `resume` is not its live lane).
 * A lane whose CLI is missing, or that fails, is a row saying so.
 *
 * Every stand-in reply is held {@linkcode HOLD_MS} from its request and
 * asks for a harmless shell command, so a turn is always in flight and
 * never ends until the steers are done. Claude echoes a steer, codex
 * echoes `turn/steer`, and an ACP agent answers the steer's prompt, only
 * once the reply in flight (or the steer prompt's own first reply) is
 * released: the baseline is mostly that hold.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/steer_ack.ts [--json] [--steers N] [--lanes simulated,claude,…]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { currentRun, type RunRef, steer } from "../../mod.ts";
import { errorText } from "../../lib/shared/errors.ts";
import { agentBin, type AgentName } from "../../tests/_helpers/agent_cli.ts";
import { claudeFixture } from "../../tests/_helpers/agents/claude.ts";
import { claudeAcpFixture } from "../../tests/_helpers/agents/claude_acp.ts";
import { codexFixture } from "../../tests/_helpers/agents/codex.ts";
import type {
  AgentFixture,
  FixtureFactory,
} from "../../tests/_helpers/agents/fixture.ts";
import { geminiFixture } from "../../tests/_helpers/agents/gemini.ts";
import { makeAgentPacket } from "../../tests/_helpers/agents/packet.ts";
import type {
  ModelServer,
  ScriptedReply,
} from "../../tests/_helpers/model_server/server.ts";
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
/** How long the stand-in holds each model reply (from its request). */
const HOLD_MS = 2000;
/** A steer is sent only while a held reply has this long still to go. */
const HOLD_LEFT_MS = 1200;
/** Replies scripted ahead of the agent, so the script never runs dry. */
const AHEAD = 3;
/** How long one step (the session's start, a steer's fate) may take. */
const STEP_TIMEOUT_MS = 60_000;
/** How long the run has to end by itself once the steers are done. */
const FINISH_TIMEOUT_MS = 30_000;
/** The target: applied within this long of the agent's acknowledgement. */
const TARGET_MS = 1000;

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

type Json = Record<string, unknown>;

/**
 * The stand-in's script as the bench plays it: every model reply (a line of
 * text and a harmless shell command, so the turn goes on) is held
 * {@linkcode HOLD_MS} from its request, which keeps a turn in flight to
 * steer into; replies are pushed a few ahead of the agent until
 * {@linkcode finish}, which releases every held reply and lets the script
 * run out (the stand-in's fallback, "Done.", then ends the turn).
 */
class HeldScript {
  readonly #gates = new Map<
    ScriptedReply,
    { release: () => void; releaseAt: number | null; released: boolean }
  >();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #server: ModelServer | null = null;
  #ticker: ReturnType<typeof setInterval> | null = null;
  #pushed = 0;

  /** The first replies, for the fixture's server. */
  first(): ScriptedReply[] {
    return Array.from({ length: AHEAD }, () => this.#reply());
  }

  /** Starts following the server's requests. */
  attach(server: ModelServer): void {
    this.#server = server;
    this.#ticker = setInterval(() => this.#tick(), 10);
  }

  #reply(): ScriptedReply {
    const { promise, resolve } = Promise.withResolvers<void>();
    const reply: ScriptedReply = {
      text: "Working on it.",
      tools: [{ kind: "shell", command: "true" }],
      until: promise,
    };
    const gate = {
      release: (): void => {
        gate.released = true;
        resolve();
      },
      releaseAt: null as number | null,
      released: false,
    };
    this.#gates.set(reply, gate);
    this.#pushed++;
    return reply;
  }

  #tick(): void {
    const server = this.#server!;
    for (const request of server.requests) {
      const gate = request.reply ? this.#gates.get(request.reply) : undefined;
      if (gate === undefined || gate.releaseAt !== null) continue;
      gate.releaseAt = request.at + HOLD_MS;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        gate.release();
      }, Math.max(0, gate.releaseAt - Date.now()));
      this.#timers.add(timer);
    }
    while (this.#pushed - server.script.taken < AHEAD) {
      server.script.push(this.#reply());
    }
  }

  /** Whether a reply is held now with at least `left` ms still to go. */
  holding(left: number): boolean {
    const now = Date.now();
    for (const gate of this.#gates.values()) {
      if (
        gate.releaseAt !== null && !gate.released &&
        gate.releaseAt - now >= left
      ) return true;
    }
    return false;
  }

  /** Releases every reply and stops scripting more. */
  finish(): void {
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const gate of this.#gates.values()) gate.release();
  }
}

/** What a lane sets up for its run. */
interface LaneRig {
  /** The fixture (provider, agent block, env) the packet is made for. */
  fixture: AgentFixture;
  /** The stand-in's held script, or `null` (simulated). */
  script: HeldScript | null;
}

/** One steer lane. */
interface Lane {
  /** The provider, as the row names it. */
  name: string;
  /** What delivers a steer on this lane (the record's `mechanism`). */
  mechanism: string;
  /** The CLIs it needs. */
  clis: AgentName[];
  /** Sets up the stand-in and the provider in `dir`. */
  rig(dir: string): Promise<LaneRig>;
}

/** A fixture on the held script, with `agent` keys added. */
function standIn(
  factory: FixtureFactory,
  agent: Json = {},
): (dir: string) => Promise<LaneRig> {
  return async (dir) => {
    const script = new HeldScript();
    const fixture = await factory(dir, script.first());
    script.attach(fixture.server!);
    return {
      fixture: { ...fixture, agent: { ...fixture.agent, ...agent } },
      script,
    };
  };
}

/** The simulated provider on its stdin lane, playing a long stream. */
function simulatedRig(): Promise<LaneRig> {
  return Promise.resolve({
    fixture: {
      provider: "simulated",
      agent: {},
      model: null,
      env: {},
      server: null,
      prompt_front_matter: {
        simulate: {
          lane: "stdin",
          attempts: [{
            delay_ms: 100,
            repeat: 8,
            thinking: ["Thinking it over."],
            messages: ["Working on it."],
            tools: [{ name: "Bash", input: { command: "true" }, output: "" }],
            usage: { input_tokens: 100, output_tokens: 10 },
          }],
        },
      },
      close: () => Promise.resolve(),
    },
    script: null,
  });
}

/** The lanes, the no-agent baseline first. */
const LANES: Lane[] = [
  {
    name: "simulated",
    mechanism: "simulated",
    clis: [],
    rig: simulatedRig,
  },
  {
    name: "claude",
    mechanism: "stdin_echo",
    clis: ["claude"],
    rig: standIn(claudeFixture),
  },
  {
    name: "codex",
    mechanism: "turn_steer",
    clis: ["codex"],
    rig: standIn(codexFixture, { transport: "app_server" }),
  },
  {
    name: "gemini",
    mechanism: "acp_prompt",
    clis: ["gemini"],
    rig: standIn(geminiFixture, { transport: "acp" }),
  },
  {
    name: "acp",
    mechanism: "acp_prompt",
    clis: ["claude-code-acp", "claude"],
    rig: standIn(claudeAcpFixture),
  },
];

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
