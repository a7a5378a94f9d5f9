/**
 * The soak's checks of the runs: events continuous, attempts numbered
 * without gaps, every acknowledged amendment enforced. Exported so tests
 * can plant violations and see each one fire.
 *
 * @module
 */

import { join } from "node:path";
import { isEvent, readTextOrNull } from "../../_audit/mod.ts";
import { runCli as runCliOnce, type Violations } from "../../_harness/mod.ts";
import { errorText } from "../../../lib/shared/errors.ts";

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
    const finished = isEvent(last, "run_finished")
      ? String((last.data as Record<string, unknown>)?.status)
      : null;
    events.slice(0, -1).forEach((event) => {
      // Only an interrupted run goes on after its run_finished (--resume).
      const status = (event.data as Record<string, unknown>)?.status;
      if (isEvent(event, "run_finished") && status !== "interrupted") {
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
      `state.json unreadable: ${errorText(error)}`,
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
      if (isEvent(event, "prompt_started")) {
        started.set(key, Date.parse(String(event.at)));
      }
      if (isEvent(event, "verification_finished") && started.has(key)) {
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
