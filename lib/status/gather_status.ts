/**
 * Reading everything the status rollup reconciles from a state root: the
 * snapshot, `state.json`, the run lock, the last event, the interventions,
 * the audit log and the amendments. Reads only: the run is never touched.
 *
 * @module
 */

import { join } from "node:path";
import {
  type AmendmentRecord,
  amendmentsFile,
  readAmendments,
} from "../control/amendment_log.ts";
import { log } from "../control/read_log.ts";
import { controlPaths } from "../control/paths.ts";
import { readSnapshotFile } from "../control/snapshot.ts";
import { readState } from "./state_file.ts";
import { openExisting, readTextIfExists } from "../shared/files.ts";
import { hostname, processAlive, readRunLock } from "../shared/run_lock.ts";
import type { LastEvent, StatusInputs } from "./status_types.ts";
import { errorText } from "../shared/errors.ts";

/** The tail of `events.jsonl` read to find its last line. */
const TAIL_BYTES = 64 * 1024;

/** Reads the last complete event line of the current stream. */
async function lastEvent(stateRoot: string): Promise<LastEvent | null> {
  const file = await openExisting(controlPaths(stateRoot).events, {
    within: stateRoot,
  }).catch(() => null);
  if (file === null) return null;
  try {
    const size = (await file.stat()).size;
    const start = Math.max(0, size - TAIL_BYTES);
    await file.seek(start, Deno.SeekMode.Start);
    const buffer = new Uint8Array(size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = await file.read(buffer.subarray(read));
      if (n === null) break;
      read += n;
    }
    const lines = new TextDecoder().decode(buffer.subarray(0, read)).split(
      "\n",
    );
    lines.pop(); // After the last newline: empty, or a line being written.
    for (const line of lines.reverse()) {
      try {
        const value = JSON.parse(line);
        if (
          typeof value?.at === "string" && typeof value.type === "string" &&
          typeof value.run_id === "string"
        ) {
          return {
            at: value.at,
            type: value.type,
            run_id: value.run_id,
            data: typeof value.data === "object" && value.data !== null
              ? value.data
              : {},
          };
        }
      } catch {
        // A torn first line of the tail, or not an event.
      }
    }
    return null;
  } finally {
    file.close();
  }
}

async function jsonlNames(dir: string): Promise<string[]> {
  try {
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(".jsonl")) names.push(entry.name);
    }
    return names.sort();
  } catch {
    return [];
  }
}

/** Steers delivered in a run: the lines of `interventions/*.jsonl` for it. */
async function deliveredSteers(
  stateRoot: string,
  runId: string,
): Promise<number> {
  const dir = controlPaths(stateRoot).interventions;
  let count = 0;
  for (const name of await jsonlNames(dir)) {
    const text = await readTextIfExists(join(dir, name), { within: stateRoot })
      .catch(() => null);
    for (const line of (text ?? "").split("\n")) {
      try {
        if (JSON.parse(line)?.run_id === runId) count++;
      } catch {
        // A torn line.
      }
    }
  }
  return count;
}

/** Every amendment recorded in the state root; an unreadable file is warned about. */
async function allAmendments(
  stateRoot: string,
  warnings: string[],
): Promise<AmendmentRecord[]> {
  const records: AmendmentRecord[] = [];
  const dir = controlPaths(stateRoot).amendments;
  for (const name of await jsonlNames(dir)) {
    const prompt = name.slice(0, -".jsonl".length);
    if (amendmentsFile(stateRoot, prompt) !== join(dir, name)) continue;
    try {
      records.push(...await readAmendments(stateRoot, prompt));
    } catch (error) {
      warnings.push(errorText(error));
    }
  }
  return records;
}

/** Where the rollup reads from. */
export interface GatherOptions {
  /** What the hint and `target` name. */
  target: string;
  workspace_id: string | null;
  state_root: string;
  packet_prompts: { id: string; name: string }[] | null;
}

/**
 * Reads a state root for the rollup.
 *
 * @returns The inputs, and warnings about parts that could not be read.
 * @throws {StateError} when the snapshot or `state.json` is unreadable.
 */
export async function gatherStatus(
  options: GatherOptions,
): Promise<{ inputs: StatusInputs; warnings: string[] }> {
  const root = options.state_root;
  const warnings: string[] = [];
  const snapshot = await readSnapshotFile(controlPaths(root).snapshot, root);
  const state = await readState(root);
  const lock = await readRunLock(root);
  const host = hostname();
  const runId = snapshot?.run_id ?? null;
  const agentPid = snapshot?.agent_pid ?? null;
  return {
    warnings,
    inputs: {
      ...options,
      snapshot,
      state,
      lock,
      last_event: await lastEvent(root),
      delivered_steers: runId === null ? 0 : await deliveredSteers(root, runId),
      log: runId === null
        ? []
        : await log({ state_root: root, run_id: runId }).catch(() => []),
      amendments: await allAmendments(root, warnings),
      agent_alive: agentPid !== null && snapshot?.host === host
        ? await processAlive(agentPid, snapshot.agent_pid_start)
        : null,
      host,
    },
  };
}
