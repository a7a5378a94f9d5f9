/**
 * `interventions/<prompt>.jsonl`, plane side: one synced line per delivered
 * steer, and reading back which steers were delivered.
 *
 * @module
 */

import { join } from "node:path";
import {
  anchored,
  appendLine,
  ensurePrivateDir,
  readTextIfExists,
} from "../shared/files.ts";
import { type ControlPaths, safeName } from "./paths.ts";
import type { SteerResult } from "../shared/run_hooks.ts";

/** One delivered steer. */
export interface InterventionRecord {
  at: string;
  prompt: string;
  attempt: number | null;
  author: string;
  text: string;
  /** The provider whose lane delivered it (the line's `lane` field). */
  provider: string | null;
  delivery: string | undefined;
  /** What delivered it: the agent's acknowledgement (`turn_steer`, …). */
  mechanism: string | undefined;
  /** When the agent acknowledged it. */
  acknowledged_at: string | undefined;
  run_id: string;
  request_id: string;
}

/** The record of a steer its lane delivered, in run `runId`. */
export function interventionOf(
  result: SteerResult,
  runId: string,
): InterventionRecord {
  const steer = result.command;
  return {
    at: new Date().toISOString(),
    prompt: steer.prompt_id,
    attempt: result.attempt,
    author: steer.author,
    text: steer.text,
    provider: result.provider,
    delivery: result.delivery,
    mechanism: result.mechanism,
    acknowledged_at: result.acknowledged_at,
    run_id: runId,
    request_id: steer.request_id,
  };
}

/** Appends (synced) one delivered steer to its prompt's file. */
export async function recordIntervention(
  paths: ControlPaths,
  record: InterventionRecord,
): Promise<void> {
  const dir = paths.interventions;
  await ensurePrivateDir(dir, { within: paths.root });
  await appendLine(
    join(dir, `${safeName(record.prompt)}.jsonl`),
    JSON.stringify({
      at: record.at,
      prompt: record.prompt,
      attempt: record.attempt,
      author: record.author,
      text: record.text,
      lane: record.provider,
      delivery: record.delivery,
      mechanism: record.mechanism,
      acknowledged_at: record.acknowledged_at,
      run_id: record.run_id,
      request_id: record.request_id,
    }),
    { sync: true, within: paths.root },
  );
}

/**
 * Request ids of delivered steers by prompt: of one run, or of every run
 * when `runId` is `null`.
 */
export async function deliveredSteers(
  paths: ControlPaths,
  runId: string | null,
): Promise<Map<string, Set<string>>> {
  const result = new Map<string, Set<string>>();
  const dir = paths.interventions;
  let entries: Deno.DirEntry[] = [];
  try {
    entries = anchored(paths.root, dir, (here) => here.list());
  } catch {
    return result;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue;
    const text = await readTextIfExists(join(dir, entry.name), {
      within: paths.root,
    }).catch(() => null);
    for (const line of (text ?? "").split("\n")) {
      try {
        const record = JSON.parse(line);
        if (runId !== null && record.run_id !== runId) continue;
        const ids = result.get(record.prompt) ?? new Set<string>();
        ids.add(record.request_id ?? `${record.at}`);
        result.set(record.prompt, ids);
      } catch {
        // Torn line.
      }
    }
  }
  return result;
}
