#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Endurance: a simulated packet streams for minutes on both steering lanes
 * while, through the real CLI, 8 writers send view changes, steers and
 * amendments, 4 followers follow the events, 2 pollers read the status, and
 * a killer SIGKILLs the runner at random moments and resumes it
 * (`run --resume`), starting a fresh run whenever one completes. Then the
 * state root is audited: one receipt and one final log entry per request,
 * no steer applied twice, every seq seen once and in order by every
 * follower, every status read whole, every amendment enforced, no temp
 * file left, attempts numbered without gaps, events continuous, no process
 * left behind. Prints a summary; exits 1 on any violation, listing each
 * (capped).
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid \
 *     scripts/soak.ts [--quick] [--seconds N] [--kills N] [--seed N] [--keep]
 *
 * Ten minutes and 100 kills by default; `--quick` is about a minute with 8
 * kills. `--keep` leaves the temporary directory for a look at a failure.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { defaultStateRoot } from "../lib/workspace/mod.ts";
import { join } from "node:path";
import { makeRepo } from "./_harness/repo.ts";
import {
  type CliResult,
  formatCount,
  leftoverProcesses,
  LineReader,
  parseScriptFlags,
  readAll,
  Rng,
  runCli as runCliOnce,
  sleep,
  spawnCli,
  Violations,
} from "./_harness/mod.ts";

const WRITERS = 8;
const FOLLOWERS = 4;
const POLLERS = 2;
/** The prompts: both steering lanes, twice. */
const PROMPTS = [
  { id: "01", lane: "resume" },
  { id: "02", lane: "stdin" },
  { id: "03", lane: "resume" },
  { id: "04", lane: "stdin" },
] as const;
/** Each prompt's steer budget. */
export const MAX_STEERS = 4;
/**
 * Clients run at this niceness: on a two-core machine 14 client loops
 * would otherwise starve the runner, and kills would come faster than it
 * can make progress.
 */
const CLIENT_NICE = 10;
/** Files committed in the workspace that amendments may name. */
const POOL = 400;
/** Event pacing of the simulated agent: 6 events per round. */
const DELAY_MS = 40;
const ROUNDS = 8;

/** The fields every snapshot carries (DESIGN §5). */
export const SNAPSHOT_FIELDS: readonly string[] = [
  "v",
  "run_id",
  "packet",
  "packet_dir",
  "status",
  "prompt_id",
  "prompt_name",
  "attempt",
  "mode",
  "provider",
  "model",
  "run_started_at",
  "prompt_started_at",
  "updated_at",
  "elapsed_ms",
  "prompt_elapsed_ms",
  "tool_count",
  "input_tokens",
  "output_tokens",
  "event_count",
  "last_seq",
  "steer_count",
  "max_steers",
  "view",
  "pid",
];

// ---------------------------------------------------------------------------
// The packet

/** The `n`th file of the amendment pool. */
export function poolName(n: number): string {
  return `pool/f${String(n % POOL).padStart(3, "0")}.md`;
}

/** The text the `n`th pool file holds. */
export function poolToken(n: number): string {
  return `token-${String(n % POOL).padStart(3, "0")}`;
}

/** One scripted attempt: `rounds` rounds of thinking, message, two tools, usage. */
function step(id: string, rounds: number): string {
  return `    - {delay_ms: ${DELAY_MS}, repeat: ${rounds}, ` +
    `thinking: ["thinking it over"], messages: ["working on it"], ` +
    `tools: [{name: Bash, input: {command: ls}, output: "a.md"}, ` +
    `{name: Edit, input: {file_path: notes_${id}.md, old_string: "a", new_string: "b"}, output: ok}], ` +
    `writes: [{path: out_${id}.md, text: "done ${id}\\n"}], ` +
    `usage: {input_tokens: 100, output_tokens: 10}}`;
}

/** Options for {@linkcode writeSoakPacket}. */
export interface SoakPacketOptions {
  /** Rounds of six events per attempt. */
  rounds?: number;
}

/**
 * Writes the soak packet into `dir`: a git workspace with the amendment
 * pool, and prompts on both steering lanes. A resumed runner plays a
 * prompt's script from its first attempt again (the simulated agent
 * follows the process's attempt ordinal), so one scripted attempt (and a
 * spare) serves every kill.
 *
 * @returns The packet directory.
 */
export async function writeSoakPacket(
  dir: string,
  options: SoakPacketOptions = {},
): Promise<string> {
  const { rounds = ROUNDS } = options;
  const packet = join(dir, "packet");
  const files: Record<string, string> = { "README.md": "soak\n" };
  for (let n = 0; n < POOL; n++) files[poolName(n)] = `${poolToken(n)}\n`;
  await makeRepo(join(packet, "workspace"), files);
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    [
      "---",
      "name: soak",
      "provider: simulated",
      "repos:",
      "  app: {path: workspace, default: true}",
      "recovery:",
      `  max_steers: ${MAX_STEERS}`,
      "  retry: {base_delay_ms: 0, max_delay_ms: 0}",
      "---",
      "The soak packet: long streams on both steering lanes.",
      "",
    ].join("\n"),
  );
  for (const { id, lane } of PROMPTS) {
    const lines = [
      "---",
      `id: "${id}"`,
      `name: Stream ${id}`,
      "verify:",
      `  files_exist: [out_${id}.md]`,
      `  contains: [{path: out_${id}.md, text: "done ${id}"}]`,
      "simulate:",
      `  lane: ${lane}`,
      "  attempts:",
      step(id, rounds),
      step(id, rounds),
      "---",
      `Stream prompt ${id} for the soak.`,
      "",
    ];
    await Deno.writeTextFile(
      join(packet, "prompts", `${id}_stream.prompt.md`),
      lines.join("\n"),
    );
  }
  return packet;
}

// ---------------------------------------------------------------------------
// Reading the state root

/** Parses a JSONL text; lines that are not JSON objects are reported. */
export function parseJsonl(
  text: string,
  where: string,
  violations: Violations,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else if (lines.length > 0) {
    violations.add("torn line", `${where}: the last line has no newline`);
  }
  lines.forEach((line, i) => {
    try {
      const value = JSON.parse(line);
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new Error("not an object");
      }
      out.push(value);
    } catch {
      violations.add(
        "unparseable line",
        `${where} line ${i + 1}: ${line.slice(0, 120)}`,
      );
    }
  });
  return out;
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
      .sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

async function readSnapshotFile(
  stateRoot: string,
): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(
      await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
    );
  } catch {
    return null;
  }
}

/** Every run's event stream: the current one and the archived ones. */
export async function readEventFiles(
  stateRoot: string,
  violations: Violations,
): Promise<Map<string, Record<string, unknown>[]>> {
  const files = new Map<string, Record<string, unknown>[]>();
  const control = join(stateRoot, "control");
  const paths = [join(control, "events.jsonl")];
  for (const name of await listNames(join(control, "events"))) {
    paths.push(join(control, "events", name));
  }
  for (const path of paths) {
    const text = await readTextOrNull(path);
    if (text === null) continue;
    files.set(path, parseJsonl(text, path, violations));
  }
  return files;
}

// ---------------------------------------------------------------------------
// Checks (exported so tests can plant violations and see each one fire)

/**
 * Checks one `control status --json` read: exit 0, one line, one JSON
 * object with every snapshot field.
 *
 * @returns What is wrong, or `null`.
 */
export function checkStatusRead(result: CliResult): string | null {
  if (result.code !== 0) {
    return `exit ${result.code}: ${result.stderr.trim().slice(0, 200)}`;
  }
  if (
    !result.stdout.endsWith("\n") ||
    result.stdout.indexOf("\n") !== result.stdout.length - 1
  ) {
    return `not exactly one line: ${
      JSON.stringify(result.stdout.slice(0, 200))
    }`;
  }
  let value: unknown;
  try {
    value = JSON.parse(result.stdout);
  } catch (error) {
    return `not JSON (${(error as Error).message}): ${
      result.stdout.slice(0, 200)
    }`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `not a JSON object: ${result.stdout.slice(0, 200)}`;
  }
  const missing = SNAPSHOT_FIELDS.filter((key) => !(key in value));
  if (missing.length > 0) return `missing fields: ${missing.join(", ")}`;
  const snap = value as Record<string, unknown>;
  if (
    !["running", "completed", "failed", "blocked", "interrupted"].includes(
      String(snap.status),
    )
  ) return `unknown status ${JSON.stringify(snap.status)}`;
  if (!Number.isInteger(snap.last_seq)) {
    return `last_seq is not a whole number: ${JSON.stringify(snap.last_seq)}`;
  }
  return null;
}

/**
 * What one follower expects next: each run's seqs once, in order, from 1.
 * Feed it every line a `control events --json` prints.
 */
export class FollowTracker {
  /** The run being followed. */
  runId: string | null = null;
  /** The next seq expected. */
  next = 1;
  /** Seqs seen per run. */
  readonly seen = new Map<string, number>();
  /** Runs whose `run_finished` was seen. */
  readonly finished = new Set<string>();

  /** Starts following a run from seq 1. */
  follow(runId: string): void {
    this.runId = runId;
    this.next = 1;
  }

  /**
   * Takes one printed line.
   *
   * @returns What is wrong with it, or `null`.
   */
  see(line: string): string | null {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line);
    } catch {
      return `not JSON: ${line.slice(0, 120)}`;
    }
    if (event.run_id !== this.runId) {
      return `an event of run ${event.run_id} while following ${this.runId}`;
    }
    const seq = event.seq;
    if (!Number.isInteger(seq)) return `no seq: ${line.slice(0, 120)}`;
    const run = this.runId!;
    this.seen.set(run, (this.seen.get(run) ?? 0) + 1);
    if (event.type === "run_finished") this.finished.add(run);
    if (seq === this.next) {
      this.next++;
      return null;
    }
    const problem = (seq as number) < this.next
      ? `run ${run}: seq ${seq} again (expected ${this.next})`
      : `run ${run}: seq ${seq} after ${this.next - 1} (skipped ${this.next}..${
        (seq as number) - 1
      })`;
    if ((seq as number) > this.next) this.next = (seq as number) + 1;
    return problem;
  }
}

/** What the request audit counted. */
export interface RequestStats {
  /** Request ids audited. */
  ids: number;
  /** Final outcomes by command and outcome (`steer:applied`). */
  outcomes: Record<string, number>;
  /** Steers refused because the budget was spent. */
  budgetRefusals: number;
}

/**
 * Every request has exactly one receipt in `control/outcomes/` and exactly
 * one final log entry (`applied`/`rejected`) agreeing with it; a steer
 * accepted for its lane has one `accepted` entry before its final one, and
 * a request decided at once has none; every acknowledged request is among
 * them; `requests/` is empty.
 */
export async function checkRequests(
  stateRoot: string,
  acked: ReadonlyMap<string, string>,
  violations: Violations,
): Promise<RequestStats> {
  const control = join(stateRoot, "control");
  const log = parseJsonl(
    (await readTextOrNull(join(control, "log.jsonl"))) ?? "",
    "control/log.jsonl",
    violations,
  );
  const receipts = new Map<string, Record<string, unknown>[]>();
  for (const name of await listNames(join(control, "outcomes"))) {
    const text = await readTextOrNull(join(control, "outcomes", name));
    let receipt: Record<string, unknown>;
    try {
      receipt = JSON.parse(text ?? "");
      if (typeof receipt.request_id !== "string") throw new Error("no id");
    } catch {
      violations.add("receipt", `outcomes/${name} is not a receipt`);
      continue;
    }
    const id = receipt.request_id as string;
    receipts.set(id, [...(receipts.get(id) ?? []), receipt]);
  }
  const entries = new Map<
    string,
    { index: number; entry: Record<string, unknown> }[]
  >();
  log.forEach((entry, index) => {
    if (typeof entry.request_id !== "string") return;
    const id = entry.request_id;
    entries.set(id, [...(entries.get(id) ?? []), { index, entry }]);
  });
  const ids = new Set([...acked.keys(), ...receipts.keys(), ...entries.keys()]);
  const stats: RequestStats = {
    ids: ids.size,
    outcomes: {},
    budgetRefusals: 0,
  };
  for (const id of ids) {
    const own = receipts.get(id) ?? [];
    const lines = entries.get(id) ?? [];
    const tag = acked.has(id)
      ? `acknowledged ${acked.get(id)} ${id}`
      : `request ${id}`;
    if (own.length !== 1) {
      violations.add("one receipt", `${tag}: ${own.length} receipts`);
    }
    const finals = lines.filter(({ entry }) =>
      entry.outcome === "applied" || entry.outcome === "rejected"
    );
    const accepted = lines.filter(({ entry }) => entry.outcome === "accepted");
    if (finals.length !== 1) {
      violations.add(
        "one final log entry",
        `${tag}: ${finals.length} final entries (${
          lines.map(({ entry }) => entry.outcome).join(", ") || "none"
        })`,
      );
    }
    const receipt = own[0];
    const final = finals[0];
    if (receipt !== undefined && final !== undefined) {
      if (receipt.outcome === "accepted") {
        if (accepted.length !== 1) {
          violations.add(
            "steer accepted once",
            `${tag}: ${accepted.length} accepted entries for an accepted receipt`,
          );
        } else if (accepted[0]!.index > final.index) {
          violations.add(
            "steer accepted once",
            `${tag}: the accepted entry comes after the final one`,
          );
        }
      } else {
        if (accepted.length !== 0) {
          violations.add(
            "steer accepted once",
            `${tag}: receipt ${receipt.outcome} but ${accepted.length} accepted entries`,
          );
        }
        if (receipt.outcome !== final.entry.outcome) {
          violations.add(
            "receipt agrees with log",
            `${tag}: receipt ${receipt.outcome}, log ${final.entry.outcome}`,
          );
        }
      }
    }
    if (final !== undefined) {
      const key = `${final.entry.command}:${final.entry.outcome}`;
      stats.outcomes[key] = (stats.outcomes[key] ?? 0) + 1;
      if (
        final.entry.command === "steer" &&
        /budget spent/.test(String(final.entry.reason))
      ) stats.budgetRefusals++;
      if (
        final.entry.outcome === "rejected" &&
        (typeof final.entry.reason !== "string" || final.entry.reason === "")
      ) {
        violations.add("rejection has a reason", `${tag}: no reason`);
      }
    }
  }
  const left = await listNames(join(control, "requests"));
  if (left.length > 0) {
    violations.add(
      "requests consumed",
      `${left.length} entries left in requests/: ${
        left.slice(0, 5).join(", ")
      }`,
    );
  }
  return stats;
}

/** What the steer audit counted. */
export interface SteerStats {
  /** Delivered steers by delivery (`send_input`, `interrupt_and_resume`). */
  delivered: Record<string, number>;
}

/**
 * No steer is applied twice: per request id at most one line in
 * `interventions/*.jsonl` and at most one `prompt_steered` event; a steer
 * logged applied was recorded once, one logged rejected never; no prompt
 * got more than its budget in a run.
 */
export async function checkSteers(
  stateRoot: string,
  maxSteers: number,
  events: ReadonlyMap<string, Record<string, unknown>[]>,
  violations: Violations,
): Promise<SteerStats> {
  const records: Record<string, unknown>[] = [];
  const dir = join(stateRoot, "interventions");
  for (const name of await listNames(dir)) {
    records.push(
      ...parseJsonl(
        (await readTextOrNull(join(dir, name))) ?? "",
        `interventions/${name}`,
        violations,
      ),
    );
  }
  const byRequest = new Map<string, number>();
  const perPrompt = new Map<string, number>();
  const stats: SteerStats = { delivered: {} };
  for (const record of records) {
    const id = String(record.request_id);
    byRequest.set(id, (byRequest.get(id) ?? 0) + 1);
    const key = `${record.run_id} ${record.prompt}`;
    perPrompt.set(key, (perPrompt.get(key) ?? 0) + 1);
    const how = String(record.delivery);
    stats.delivered[how] = (stats.delivered[how] ?? 0) + 1;
  }
  for (const [id, count] of byRequest) {
    if (count > 1) {
      violations.add(
        "steer applied once",
        `steer ${id}: ${count} intervention lines`,
      );
    }
  }
  for (const [key, count] of perPrompt) {
    if (count > maxSteers) {
      violations.add(
        "steer budget",
        `run/prompt ${key}: ${count} steers delivered, budget ${maxSteers}`,
      );
    }
  }
  const steered = new Map<string, number>();
  for (const list of events.values()) {
    for (const event of list) {
      if (event.type !== "prompt_steered") continue;
      const id = String((event.data as Record<string, unknown>)?.request_id);
      steered.set(id, (steered.get(id) ?? 0) + 1);
    }
  }
  for (const [id, count] of steered) {
    if (count > 1) {
      violations.add(
        "steer applied once",
        `steer ${id}: ${count} prompt_steered events`,
      );
    }
    if (!byRequest.has(id)) {
      violations.add(
        "steer applied once",
        `steer ${id}: a prompt_steered event but no intervention record`,
      );
    }
  }
  const log = parseJsonl(
    (await readTextOrNull(join(stateRoot, "control", "log.jsonl"))) ?? "",
    "control/log.jsonl",
    new Violations(),
  );
  for (const entry of log) {
    if (entry.command !== "steer" || typeof entry.request_id !== "string") {
      continue;
    }
    const lines = byRequest.get(entry.request_id) ?? 0;
    if (entry.outcome === "applied" && lines !== 1) {
      violations.add(
        "steer applied once",
        `steer ${entry.request_id}: logged applied, ${lines} intervention lines`,
      );
    }
    if (entry.outcome === "rejected" && lines !== 0) {
      violations.add(
        "steer applied once",
        `steer ${entry.request_id}: logged rejected, but delivered (${lines} intervention lines)`,
      );
    }
  }
  return stats;
}

/**
 * Each run's stream is continuous: seqs 1..N in order, one run id per
 * file, each run in one file, and every finished run ends with
 * `run_finished` (an earlier one only where it was interrupted and
 * resumed).
 *
 * @returns Each run's last seq, and whether it finished.
 */
export function checkEventFiles(
  files: ReadonlyMap<string, Record<string, unknown>[]>,
  violations: Violations,
): Map<string, { last: number; finished: string | null }> {
  const runs = new Map<string, { last: number; finished: string | null }>();
  for (const [path, events] of files) {
    const name = path.split("/").slice(-2).join("/");
    if (events.length === 0) continue;
    const runId = String(events[0]!.run_id);
    if (runs.has(runId)) {
      violations.add(
        "events continuous",
        `run ${runId} has a second stream: ${name}`,
      );
    }
    events.forEach((event, i) => {
      if (event.run_id !== runId) {
        violations.add(
          "events continuous",
          `${name} line ${i + 1}: run ${event.run_id} in run ${runId}'s stream`,
        );
      }
    });
    let expected = 1;
    for (const event of events) {
      if (event.seq !== expected) {
        violations.add(
          "events continuous",
          `${name}: seq ${event.seq} where ${expected} was due`,
        );
        if (Number.isInteger(event.seq)) expected = event.seq as number;
      }
      expected++;
    }
    const last = events.at(-1)!;
    const finished = last.type === "run_finished"
      ? String((last.data as Record<string, unknown>)?.status)
      : null;
    events.slice(0, -1).forEach((event) => {
      // Only an interrupted run goes on after its run_finished (--resume).
      const status = (event.data as Record<string, unknown>)?.status;
      if (event.type === "run_finished" && status !== "interrupted") {
        violations.add(
          "events continuous",
          `${name}: run_finished before the end`,
        );
      }
    });
    runs.set(runId, { last: Number(last.seq), finished });
  }
  return runs;
}

/**
 * Every follower saw every run it followed whole: as many seqs as the
 * stream holds, up to `run_finished`.
 */
export function checkFollowerCoverage(
  trackers: readonly FollowTracker[],
  runs: ReadonlyMap<string, { last: number; finished: string | null }>,
  violations: Violations,
): void {
  trackers.forEach((tracker, i) => {
    for (const [runId, run] of runs) {
      const seen = tracker.seen.get(runId) ?? 0;
      if (seen !== run.last) {
        violations.add(
          "followers saw every seq",
          `follower ${i + 1}: ${seen} of run ${runId}'s ${run.last} events`,
        );
      }
    }
  });
}

/** What the attempt audit counted. */
export interface AttemptStats {
  /** Attempts in `state.json`. */
  attempts: number;
  /** Of which interrupted (killed). */
  interrupted: number;
}

/**
 * In `state.json`, per prompt and run id, attempts are numbered 1..n in
 * order without gaps or duplicates; every attempt but a run's last is
 * `interrupted` (the soak's prompts never fail otherwise); none is left
 * `running`; each run whose stream finished `completed` completed every
 * prompt with its last attempt.
 */
export async function checkAttempts(
  stateRoot: string,
  runs: ReadonlyMap<string, { last: number; finished: string | null }>,
  violations: Violations,
): Promise<AttemptStats> {
  const stats: AttemptStats = { attempts: 0, interrupted: 0 };
  let state: {
    prompts: Record<string, { attempts: Record<string, unknown>[] }>;
  };
  try {
    state = JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")));
  } catch (error) {
    violations.add(
      "attempts",
      `state.json unreadable: ${(error as Error).message}`,
    );
    return stats;
  }
  for (const [prompt, entry] of Object.entries(state.prompts)) {
    const byRun = new Map<string, Record<string, unknown>[]>();
    for (const attempt of entry.attempts) {
      stats.attempts++;
      if (attempt.status === "interrupted") stats.interrupted++;
      const run = String(attempt.run_id);
      byRun.set(run, [...(byRun.get(run) ?? []), attempt]);
    }
    for (const [run, attempts] of byRun) {
      const numbers = attempts.map((a) => a.attempt);
      const expected = attempts.map((_, i) => i + 1);
      if (JSON.stringify(numbers) !== JSON.stringify(expected)) {
        violations.add(
          "attempts numbered",
          `prompt ${prompt} run ${run}: attempts ${numbers.join(",")}`,
        );
      }
      attempts.forEach((attempt, i) => {
        if (attempt.status === "running") {
          violations.add(
            "attempts settled",
            `prompt ${prompt} run ${run} attempt ${attempt.attempt} left running`,
          );
        } else if (
          i < attempts.length - 1 && attempt.status !== "interrupted"
        ) {
          violations.add(
            "attempts settled",
            `prompt ${prompt} run ${run} attempt ${attempt.attempt} is ${attempt.status} (${attempt.reason}), not interrupted, yet another followed`,
          );
        }
      });
      if (runs.get(run)?.finished === "completed") {
        const last = attempts.at(-1)!;
        if (last.status !== "completed") {
          violations.add(
            "attempts settled",
            `prompt ${prompt} run ${run} completed, but its last attempt is ${last.status}`,
          );
        }
      }
    }
  }
  return stats;
}

/** No dot-temp (`.*.tmp`) or claimed (`.*.claimed`) file anywhere in the state root. */
export async function checkTemps(
  stateRoot: string,
  violations: Violations,
): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (/^\..*\.(tmp|claimed)$/.test(entry.name)) {
        violations.add("no temp files", path.slice(stateRoot.length + 1));
      }
      if (entry.isDirectory) await walk(path);
    }
  };
  await walk(stateRoot);
}

/** An amendment a writer got acknowledged (`control amend --json` exit 0). */
export interface AckedAmendment {
  /** The record the CLI printed. */
  record: Record<string, unknown>;
  /** When the CLI exited (ms since the epoch): the amendment was durable by then. */
  acked_at: number;
}

function itemMatches(
  item: Record<string, unknown>,
  clause: string,
  entry: unknown,
): boolean {
  if (item.clause !== clause) return false;
  const label = String(item.label);
  if (typeof entry === "string") return label === entry;
  const { path, text } = entry as { path?: string; text?: string };
  if (clause === "contains") {
    return label === `${path} contains ${JSON.stringify(text)}`;
  }
  return label === path;
}

/**
 * Every acknowledged amendment is in the enforced contract
 * (`control contract --json`), recorded once in `amendments/<prompt>.jsonl`,
 * and enforced by every verification of an attempt that started after it
 * was acknowledged.
 */
export async function checkAmendments(
  packet: string,
  stateRoot: string,
  amendments: readonly AckedAmendment[],
  events: ReadonlyMap<string, Record<string, unknown>[]>,
  violations: Violations,
): Promise<void> {
  const prompts = [...new Set(amendments.map((a) => String(a.record.prompt)))];
  const enforced = new Map<string, Record<string, unknown[]>>();
  const files = new Map<string, string[]>();
  for (const prompt of prompts) {
    const result = await runCliOnce([
      "control",
      "contract",
      packet,
      prompt,
      "--json",
    ]);
    if (result.code !== 0) {
      violations.add(
        "amendments enforced",
        `control contract ${prompt} exited ${result.code}: ${result.stderr.trim()}`,
      );
      continue;
    }
    enforced.set(prompt, JSON.parse(result.stdout).enforced);
    files.set(
      prompt,
      ((await readTextOrNull(
        join(stateRoot, "amendments", `${prompt}.jsonl`),
      )) ??
        "").split("\n").filter(Boolean),
    );
  }
  // Verifications: which amendments an attempt that started at a time must enforce.
  const verifications: {
    prompt: string;
    started: number;
    items: Record<string, unknown>[];
    where: string;
  }[] = [];
  for (const list of events.values()) {
    const started = new Map<string, number>();
    for (const event of list) {
      const key = `${event.prompt_id}/${event.attempt}`;
      if (event.type === "prompt_started") {
        started.set(key, Date.parse(String(event.at)));
      }
      if (event.type === "verification_finished" && started.has(key)) {
        verifications.push({
          prompt: String(event.prompt_id),
          started: started.get(key)!,
          items:
            ((event.data as Record<string, unknown>).items ?? []) as Record<
              string,
              unknown
            >[],
          where: `run ${event.run_id} prompt ${key} (seq ${event.seq})`,
        });
      }
    }
  }
  for (const { record, acked_at } of amendments) {
    const prompt = String(record.prompt);
    const clause = String(record.clause);
    const entries = record.entries as unknown[];
    const what = `prompt ${prompt} ${clause} ${JSON.stringify(entries)}${
      record.persisted ? " (persisted)" : ""
    }`;
    const contract = enforced.get(prompt);
    if (contract !== undefined) {
      for (const entry of entries) {
        if (
          !(contract[clause] ?? []).some((e) =>
            JSON.stringify(e) === JSON.stringify(entry)
          )
        ) {
          violations.add(
            "amendments enforced",
            `${what}: acknowledged at ${
              new Date(acked_at).toISOString()
            }, missing from the enforced contract`,
          );
        }
      }
    }
    const lines = (files.get(prompt) ?? []).filter((line) => {
      try {
        const r = JSON.parse(line);
        return r.at === record.at && r.author === record.author &&
          r.reason === record.reason;
      } catch {
        return false;
      }
    });
    if (lines.length !== 1) {
      violations.add(
        "amendments recorded once",
        `${what}: ${lines.length} lines in amendments/${prompt}.jsonl`,
      );
    }
    for (const verification of verifications) {
      if (verification.prompt !== prompt || verification.started <= acked_at) {
        continue;
      }
      for (const entry of entries) {
        if (
          !verification.items.some((item) => itemMatches(item, clause, entry))
        ) {
          violations.add(
            "amendments enforced",
            `${what}: acknowledged at ${
              new Date(acked_at).toISOString()
            }, not checked by ${verification.where}, which started later`,
          );
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The soak

interface Counts {
  requests: number;
  acked: number;
  refused: number;
  settledByClient: number;
  seqs: number;
  statusReads: number;
  amendments: number;
  kills: number;
  runsStarted: number;
  runsCompleted: number;
  resumes: number;
  resumeFoundFinished: number;
  followerRestarts: number;
  longPauses: number;
}

interface Runner {
  child: Deno.ChildProcess;
  stderr: Promise<string>;
  startedAt: number;
  resume: boolean;
}

class Soak {
  readonly dir: string;
  readonly packet: string;
  readonly stateRoot: string;
  readonly seed: number;
  readonly violations = new Violations();
  readonly counts: Counts = {
    requests: 0,
    acked: 0,
    refused: 0,
    settledByClient: 0,
    seqs: 0,
    statusReads: 0,
    amendments: 0,
    kills: 0,
    runsStarted: 0,
    runsCompleted: 0,
    resumes: 0,
    resumeFoundFinished: 0,
    followerRestarts: 0,
    longPauses: 0,
  };
  /** Acknowledged requests: id → command. */
  readonly acked = new Map<string, string>();
  readonly amendments: AckedAmendment[] = [];
  readonly trackers: FollowTracker[] = [];
  readonly live = new Set<Deno.ChildProcess>();
  readonly began = Date.now();
  stopWriters = false;
  stopPollers = false;
  stopFollowers = false;
  poolNext = 0;

  constructor(dir: string, packet: string, seed: number) {
    this.dir = dir;
    this.packet = packet;
    this.stateRoot = defaultStateRoot(packet);
    this.seed = seed;
  }

  /** A progress line on stderr, stamped with the seconds since the start. */
  progress(text: string): void {
    const t = ((Date.now() - this.began) / 1000).toFixed(1);
    console.error(`soak: t+${t}s ${text}`);
  }

  /** Starts a CLI process; clients run niced, the runner does not. */
  spawn(
    args: string[],
    stdout: "piped" | "null" = "piped",
    client = true,
  ): Deno.ChildProcess {
    const child = spawnCli(args, {
      stdout,
      ...(client ? { nice: CLIENT_NICE } : {}),
    });
    this.live.add(child);
    child.status.finally(() => this.live.delete(child));
    return child;
  }

  async cli(args: string[]): Promise<CliResult> {
    const child = this.spawn(args);
    const [stdout, stderr, status] = await Promise.all([
      readAll(child.stdout),
      readAll(child.stderr),
      child.status,
    ]);
    return { code: status.code, signal: status.signal, stdout, stderr };
  }

  startRunner(resume: boolean): Runner {
    const child = this.spawn(
      ["run", this.packet, "--json", ...(resume ? ["--resume"] : [])],
      "null",
      false,
    );
    if (resume) this.counts.resumes++;
    else {
      this.counts.runsStarted++;
      this.progress(`run ${this.counts.runsStarted} started`);
    }
    return {
      child,
      stderr: readAll(child.stderr),
      startedAt: Date.now(),
      resume,
    };
  }

  async killAll(): Promise<void> {
    for (const child of this.live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await Promise.allSettled([...this.live].map((child) => child.status));
  }
}

async function writer(soak: Soak, w: number): Promise<void> {
  const rng = new Rng(soak.seed + 1000 + w);
  const views: [string, readonly string[]][] = [
    ["--log-mode", ["compact", "verbose", "studio"]],
    ["--tool-output", ["none", "summary", "preview", "full"]],
    ["--thinking", ["show", "hide"]],
    ["--diff", ["none", "stat", "full"]],
  ];
  for (let i = 0; !soak.stopWriters; i++) {
    const roll = rng.next();
    if (roll < 0.75) {
      const steer = roll >= 0.4;
      const args = ["control", steer ? "steer" : "view", soak.packet];
      if (steer) {
        args.push(`soak w${w} n${i}: keep the notes short`);
        if (rng.chance(0.25)) args.push("--prompt", rng.pick(PROMPTS).id);
      } else {
        for (const [flag, values] of views) {
          if (rng.chance(0.5)) args.push(flag, rng.pick(values));
        }
        if (args.length === 3) {
          args.push("--thinking", rng.pick(["show", "hide"]));
        }
      }
      args.push("--author", `soak-w${w}`);
      const result = await soak.cli(args);
      soak.counts.requests++;
      const command = steer ? "steer" : "set_view";
      if (result.code === 0) {
        const id = /\(request (\S+)\)/.exec(result.stdout)?.[1];
        if (id === undefined) {
          soak.violations.add(
            "writer",
            `${command} exit 0 without a request id: ${result.stdout.trim()}`,
          );
        } else {
          soak.acked.set(id, command);
          soak.counts.acked++;
        }
      } else if (result.code === 4) {
        soak.counts.refused++;
        if (/Request \S+ is recorded as rejected/.test(result.stderr)) {
          soak.counts.settledByClient++;
        }
      } else {
        soak.violations.add(
          "writer",
          `control ${args[1]} exited ${result.code ?? result.signal}: ${
            result.stderr.trim().slice(0, 300)
          }`,
        );
      }
    } else {
      const prompt = rng.pick(PROMPTS).id;
      const n = soak.poolNext++;
      const addition = rng.chance(0.5)
        ? ["--add-file", poolName(n)]
        : ["--add-contains", `${poolName(n)}=${poolToken(n)}`];
      const args = [
        "control",
        "amend",
        soak.packet,
        prompt,
        ...addition,
        "--reason",
        `soak w${w} n${i}`,
        "--author",
        `soak-w${w}`,
        "--json",
        ...(rng.chance(0.2) ? ["--persist"] : []),
      ];
      const result = await soak.cli(args);
      if (result.code === 0) {
        try {
          soak.amendments.push({
            record: JSON.parse(result.stdout),
            acked_at: Date.now(),
          });
          soak.counts.amendments++;
        } catch {
          soak.violations.add(
            "writer",
            `amend printed no record: ${result.stdout}`,
          );
        }
      } else {
        soak.violations.add(
          "writer",
          `control amend exited ${result.code ?? result.signal}: ${
            result.stderr.trim().slice(0, 300)
          }`,
        );
      }
    }
    await sleep(rng.int(0, 200));
  }
}

async function follower(soak: Soak, f: number): Promise<void> {
  const rng = new Rng(soak.seed + 2000 + f);
  const tracker = soak.trackers[f]!;
  for (;;) {
    if (tracker.runId === null || tracker.finished.has(tracker.runId)) {
      if (soak.stopFollowers) return;
      const snap = await readSnapshotFile(soak.stateRoot);
      const runId = typeof snap?.run_id === "string" ? snap.run_id : null;
      if (
        runId !== null && runId !== tracker.runId &&
        !tracker.finished.has(runId)
      ) {
        tracker.follow(runId);
      } else {
        await sleep(100);
        continue;
      }
    }
    const child = soak.spawn([
      "control",
      "events",
      soak.packet,
      "--from",
      String(tracker.next),
      "--json",
    ]);
    const stderr = readAll(child.stderr);
    const lines = new LineReader(child.stdout);
    const before = tracker.finished.has(tracker.runId!);
    for (
      let line = await lines.next();
      line !== null;
      line = await lines.next()
    ) {
      soak.counts.seqs++;
      const problem = tracker.see(line);
      if (problem !== null) {
        soak.violations.add(
          "followers saw every seq",
          `follower ${f + 1}: ${problem}`,
        );
      }
    }
    const status = await child.status;
    const err = await stderr;
    if (status.code === 0) {
      if (before === tracker.finished.has(tracker.runId!)) {
        soak.violations.add(
          "follower exit",
          `follower ${f + 1}: exit 0 without run_finished of ${tracker.runId}`,
        );
        tracker.finished.add(tracker.runId!);
      }
      continue;
    }
    if (status.code === 5) {
      soak.counts.followerRestarts++;
      await sleep(rng.int(50, 300));
      continue;
    }
    soak.violations.add(
      "follower exit",
      `follower ${f + 1}: control events exited ${
        status.code ?? status.signal
      }: ${err.trim().slice(0, 300)}`,
    );
    if (soak.stopFollowers) return;
    await sleep(500);
  }
}

async function poller(soak: Soak): Promise<void> {
  while (!soak.stopPollers) {
    const result = await soak.cli(["control", "status", soak.packet, "--json"]);
    soak.counts.statusReads++;
    const problem = checkStatusRead(result);
    if (problem !== null) soak.violations.add("status reads parse", problem);
  }
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return await check();
}

/** Reads a finished runner's stderr into violations: a soak's runner never warns. */
function noteRunnerOutput(soak: Soak, stderr: string, how: string): void {
  for (const line of stderr.split("\n")) {
    if (line.trim() === "") continue;
    soak.violations.add("runner output", `${how}: ${line.slice(0, 300)}`);
  }
}

/** Waits up to `ms` for the runner to exit; `true` when it did. */
async function exitWithin(runner: Runner, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    runner.child.status.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(
        () => resolve(false),
        Math.max(0, Math.min(ms, 2 ** 31 - 1)),
      );
    }),
  ]);
  clearTimeout(timer);
  return exited;
}

/**
 * The killer: SIGKILLs the runner at random moments spread over the soak
 * and resumes it; starts a fresh run when one completes (once every
 * follower has seen it end); at the deadline lets the last run finish.
 */
async function killer(
  soak: Soak,
  first: Runner,
  deadline: number,
  kills: number,
): Promise<void> {
  const rng = new Rng(soak.seed + 3000);
  let runner = first;
  let failures = 0;
  const fresh = async (finishedRun: string | null): Promise<Runner | null> => {
    if (finishedRun !== null) {
      const ok = await waitUntil(
        () => soak.trackers.every((t) => t.finished.has(finishedRun)),
        60_000,
      );
      if (!ok) {
        soak.violations.add(
          "followers saw every seq",
          `followers did not see run ${finishedRun} finish within 60 s: ${
            soak.trackers.map((t) => `${t.runId}@${t.next}`).join(", ")
          }`,
        );
      }
    }
    // Past the deadline only for kills still due: a run that finished just
    // before it would otherwise leave them undone.
    return Date.now() < deadline || soak.counts.kills < kills
      ? soak.startRunner(false)
      : null;
  };
  /** What follows a runner that exited by itself. */
  const afterExit = async (): Promise<Runner | null> => {
    const status = await runner.child.status;
    const stderr = await runner.stderr;
    const snap = await readSnapshotFile(soak.stateRoot);
    const runId = typeof snap?.run_id === "string" ? snap.run_id : null;
    if (status.code === 0) {
      soak.counts.runsCompleted++;
      soak.progress(`run ${runId} completed`);
      noteRunnerOutput(soak, stderr, `run ${runId}`);
      return await fresh(runId);
    }
    if (
      status.code === 4 && runner.resume &&
      /Cannot resume run \S+: it finished/.test(stderr)
    ) {
      // Killed after its end was published: that run is over.
      soak.counts.resumeFoundFinished++;
      return await fresh(snap?.status === "completed" ? runId : null);
    }
    soak.violations.add(
      "runner exit",
      `run ${runId} (${runner.resume ? "resumed" : "fresh"}) exited ${
        status.code === 0 && status.signal ? status.signal : status.code
      }: ${stderr.trim().slice(0, 400)}`,
    );
    if (++failures > 5) return null;
    if (snap?.status === "running") return soak.startRunner(true);
    return await fresh(null);
  };
  for (;;) {
    const now = Date.now();
    let killAt = Infinity;
    const left = kills - soak.counts.kills;
    if (left > 0 && now < deadline) {
      const remaining = deadline - now;
      const mean = remaining / left;
      const lifetime = rng.chance(0.15)
        ? rng.between(0, Math.min(1500, mean))
        : rng.between(0.3, 1.7) * mean;
      killAt = Math.min(runner.startedAt + lifetime, deadline);
    } else if (left > 0) {
      // Past the deadline with kills still due: each run is killed soon.
      killAt = runner.startedAt + rng.between(200, 1500);
    }
    const wakeAt = now < deadline
      ? Math.min(killAt, deadline)
      : left > 0
      ? killAt
      : now + 240_000;
    if (await exitWithin(runner, wakeAt - now)) {
      const next = await afterExit();
      if (next === null) return;
      runner = next;
      continue;
    }
    if (now >= deadline && left <= 0) {
      soak.violations.add(
        "run finishes",
        "the last run did not finish within 240 s of the deadline",
      );
      try {
        runner.child.kill("SIGKILL");
      } catch {
        // Gone.
      }
      await runner.child.status;
      return;
    }
    if (Date.now() < killAt) continue; // The deadline came first.
    try {
      runner.child.kill("SIGKILL");
    } catch {
      // It exited just now.
    }
    const status = await runner.child.status;
    if (status.signal !== "SIGKILL") {
      const next = await afterExit();
      if (next === null) return;
      runner = next;
      continue;
    }
    noteRunnerOutput(soak, await runner.stderr, "a runner killed later");
    soak.counts.kills++;
    // Now and then the runner stays dead past the followers' heartbeat
    // window, so they exit 5 and restart, and writers meet a gone runner.
    let pause = soak.counts.kills % 8 === 2 ? rng.between(5500, 7000) : 0;
    // Never at the cost of the kills still due before the deadline.
    const due = kills - soak.counts.kills;
    if (deadline - Date.now() - pause < Math.max(1, due) * 2500) pause = 0;
    soak.progress(
      `kill ${soak.counts.kills} after ${
        ((Date.now() - runner.startedAt) / 1000).toFixed(1)
      }s${pause > 0 ? `, resumed ${(pause / 1000).toFixed(1)}s later` : ""}`,
    );
    if (pause > 0) {
      soak.counts.longPauses++;
      await sleep(pause);
    }
    runner = soak.startRunner(true);
  }
}

async function soakOnce(
  soak: Soak,
  seconds: number,
  kills: number,
): Promise<void> {
  const start = Date.now();
  const deadline = start + seconds * 1000;
  const first = soak.startRunner(false);
  const started = await waitUntil(
    async () => (await readSnapshotFile(soak.stateRoot)) !== null,
    60_000,
  );
  if (!started) throw new Error("the first run wrote no snapshot within 60 s");
  for (let f = 0; f < FOLLOWERS; f++) soak.trackers.push(new FollowTracker());
  const followers = soak.trackers.map((_, f) => follower(soak, f));
  const pollers = Array.from({ length: POLLERS }, () => poller(soak));
  const writers = Array.from(
    { length: WRITERS },
    (_, w) => writer(soak, w + 1),
  );
  await killer(soak, first, deadline, kills);
  soak.progress("the last run ended; stopping writers and pollers");
  soak.stopWriters = true;
  await Promise.all(writers);
  soak.stopPollers = true;
  await Promise.all(pollers);
  soak.progress("writers and pollers stopped");
  const snap = await readSnapshotFile(soak.stateRoot);
  const last = String(snap?.run_id);
  if (snap?.status !== "completed") {
    soak.violations.add(
      "run finishes",
      `the last run ${last} ended ${snap?.status}`,
    );
  }
  const ended = await waitUntil(
    () => soak.trackers.every((t) => t.finished.has(last)),
    60_000,
  );
  if (!ended) {
    soak.violations.add(
      "followers saw every seq",
      `followers did not see the last run ${last} finish: ${
        soak.trackers.map((t) => `${t.runId}@${t.next}`).join(", ")
      }`,
    );
  }
  soak.stopFollowers = true;
  const stopped = await waitUntil(
    async () => (await Promise.race([
      Promise.all(followers).then(() => true),
      sleep(0).then(() => false),
    ])),
    30_000,
  );
  if (!stopped) {
    soak.violations.add(
      "follower exit",
      "followers still running 30 s after the end",
    );
    await soak.killAll();
    await Promise.all(followers);
  }
}

async function audit(soak: Soak): Promise<{
  requests: RequestStats;
  steers: SteerStats;
  attempts: AttemptStats;
  runs: number;
}> {
  const v = soak.violations;
  const files = await readEventFiles(soak.stateRoot, v);
  const runs = checkEventFiles(files, v);
  for (const [runId, run] of runs) {
    if (run.finished !== "completed") {
      v.add(
        "run finishes",
        `run ${runId}'s stream ends at seq ${run.last} ${
          run.finished === null
            ? "without run_finished"
            : `finished ${run.finished}`
        }`,
      );
    }
  }
  checkFollowerCoverage(soak.trackers, runs, v);
  const requests = await checkRequests(soak.stateRoot, soak.acked, v);
  const steers = await checkSteers(soak.stateRoot, MAX_STEERS, files, v);
  await checkAmendments(soak.packet, soak.stateRoot, soak.amendments, files, v);
  const attempts = await checkAttempts(soak.stateRoot, runs, v);
  if (attempts.interrupted > soak.counts.kills) {
    v.add(
      "attempts settled",
      `${attempts.interrupted} interrupted attempts, but only ${soak.counts.kills} kills`,
    );
  }
  await checkTemps(soak.stateRoot, v);
  return { requests, steers, attempts, runs: runs.size };
}

async function main(): Promise<number> {
  const flags = parseScriptFlags(
    Deno.args,
    { seconds: 600, quickSeconds: 40 },
    { kills: { full: 100, quick: 8 } },
  );
  const kills = flags.numbers.kills!;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_soak_" });
  let soak: Soak | null = null;
  const onSignal = (): void => {
    soak?.killAll().finally(async () => {
      if (!flags.keep) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
      Deno.exit(130);
    });
  };
  Deno.addSignalListener("SIGINT", onSignal);
  const began = Date.now();
  try {
    const packet = await writeSoakPacket(dir);
    soak = new Soak(dir, packet, flags.seed);
    console.error(
      `soak: ${flags.seconds} s, ${kills} kills, seed ${flags.seed}, in ${dir}`,
    );
    await soakOnce(soak, flags.seconds, kills);
    soak.progress("auditing");
    const result = await audit(soak);
    const v = soak.violations;
    const leftovers = await leftoverProcesses(dir);
    for (const p of leftovers) v.add("no process left", p);
    if (soak.counts.kills < kills) {
      v.add("kills", `only ${soak.counts.kills} of ${kills} kills happened`);
    }
    const delivered = result.steers.delivered;
    if (!delivered.send_input || !delivered.interrupt_and_resume) {
      v.add(
        "coverage",
        `steers delivered on both lanes: ${JSON.stringify(delivered)}`,
      );
    }
    if (result.requests.budgetRefusals === 0) {
      v.add("coverage", "no steer was refused for budget");
    }
    const c = soak.counts;
    const elapsed = Math.round((Date.now() - began) / 1000);
    console.log(
      `soak: ${formatCount(elapsed)} s, ${c.kills} kills, ${
        formatCount(c.requests)
      } requests (${formatCount(c.acked)} acked), ${
        formatCount(c.seqs)
      } seqs checked by ${FOLLOWERS} followers, ${
        formatCount(c.statusReads)
      } status reads, ${formatCount(c.amendments)} amendments, violations: ${
        formatCount(v.count)
      }`,
    );
    const outcomes = Object.entries(result.requests.outcomes).sort()
      .map(([k, n]) => `${k} ${formatCount(n)}`).join(", ");
    console.log(
      `  runs: ${c.runsStarted} started, ${c.runsCompleted} completed, ${result.runs} streams; ${c.resumes} resumes (${c.resumeFoundFinished} found the run already finished, ${c.longPauses} after a pause past the heartbeat window); follower restarts: ${c.followerRestarts}`,
    );
    console.log(
      `  requests: ${
        formatCount(result.requests.ids)
      } audited (${outcomes}); ${c.refused} refused by state (${c.settledByClient} settled by their client); ${result.requests.budgetRefusals} steers refused for budget`,
    );
    console.log(
      `  steers delivered: ${
        Object.entries(delivered).map(([k, n]) => `${k} ${n}`).join(", ") ||
        "none"
      }; attempts: ${result.attempts.attempts} (${result.attempts.interrupted} interrupted); seed ${flags.seed}`,
    );
    if (v.count > 0) {
      console.log("violations:");
      for (const line of v.report()) console.log(line);
      return 1;
    }
    return 0;
  } finally {
    await soak?.killAll();
    Deno.removeSignalListener("SIGINT", onSignal);
    if (flags.keep) console.error(`soak: kept ${dir}`);
    else await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
