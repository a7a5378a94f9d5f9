/**
 * `snapshot.json`: the run's current state, replaced atomically, and the
 * client reads of it.
 *
 * @module
 */

import { errorText, NotFoundError, StateError } from "../shared/errors.ts";
import { readStateText, readTextIfExists } from "../shared/read_file.ts";
import {
  DEFAULT_VIEW,
  VIEW_KEYS,
  VIEW_OPTIONS,
  type ViewSettings,
} from "../shared/view.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import type { Snapshot } from "../shared/snapshot_schema.ts";

export type { Snapshot };

const STATUSES = [
  "running",
  "completed",
  "failed",
  "blocked",
  "interrupted",
] as const;
const MODES = ["run", "retry", "repair"] as const;

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0
    ? value
    : 0;
}

function viewOf(value: unknown): ViewSettings {
  const view: ViewSettings = { ...DEFAULT_VIEW };
  if (typeof value !== "object" || value === null) return view;
  const raw = value as Record<string, unknown>;
  for (const key of VIEW_KEYS) {
    const allowed = VIEW_OPTIONS[key] as readonly string[];
    if (typeof raw[key] === "string" && allowed.includes(raw[key])) {
      (view as unknown as Record<string, string>)[key] = raw[key];
    }
  }
  return view;
}

/**
 * Reads a snapshot file, or `null` when there is none. Reading is tolerant
 * of a snapshot written by another version: a missing or odd field reads as
 * its default (the view as the default view, a count as 0).
 *
 * @param path The snapshot file.
 * @param stateRoot The state root it lies in: a link on the way is refused.
 * @throws {StateError} when it is not JSON, not a run snapshot, or not a file.
 */
export async function readSnapshotFile(
  path: string,
  stateRoot?: string,
): Promise<Snapshot | null> {
  const raw = stateRoot === undefined
    ? await readTextIfExists(path)
    : await readStateText(path, stateRoot, {
      name: "snapshot",
      code: "SNAPSHOT_UNREADABLE",
      hint: "It must be a file the runner wrote; move it aside if it is not",
    });
  if (raw === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new StateError(
      `Cannot read snapshot "${path}": ${errorText(error)}`,
      { code: "SNAPSHOT_CORRUPT" },
    );
  }
  if (
    typeof value !== "object" || value === null || Array.isArray(value) ||
    typeof (value as Snapshot).run_id !== "string"
  ) {
    throw new StateError(
      `Cannot read snapshot "${path}": it is not a run snapshot`,
      { code: "SNAPSHOT_CORRUPT" },
    );
  }
  const v = value as Record<string, unknown>;
  const status = STATUSES.find((s) => s === v.status);
  const mode = MODES.find((m) => m === v.mode);
  return {
    ...(v as unknown as Snapshot),
    v: 1,
    run_id: v.run_id as string,
    packet: text(v.packet) ?? "",
    packet_dir: text(v.packet_dir) ?? "",
    status: status ?? "running",
    prompt_id: text(v.prompt_id),
    prompt_name: text(v.prompt_name),
    attempt: Number.isInteger(v.attempt) ? v.attempt as number : null,
    mode: mode ?? null,
    provider: text(v.provider),
    model: text(v.model),
    run_started_at: text(v.run_started_at) ?? "",
    prompt_started_at: text(v.prompt_started_at),
    updated_at: text(v.updated_at) ?? "",
    elapsed_ms: count(v.elapsed_ms),
    prompt_elapsed_ms: count(v.prompt_elapsed_ms),
    tool_count: count(v.tool_count),
    input_tokens: count(v.input_tokens),
    output_tokens: count(v.output_tokens),
    cost_usd: typeof v.cost_usd === "number" && Number.isFinite(v.cost_usd)
      ? v.cost_usd
      : null,
    agent_pid: Number.isInteger(v.agent_pid) ? v.agent_pid as number : null,
    agent_pid_start: Number.isInteger(v.agent_pid)
      ? text(v.agent_pid_start)
      : null,
    event_count: count(v.event_count),
    last_seq: count(v.last_seq),
    steer_count: count(v.steer_count),
    max_steers: count(v.max_steers),
    view: viewOf(v.view),
    pid: Number.isInteger(v.pid) ? v.pid as number : 0,
    host: text(v.host) ?? "unknown",
    started_by: text(v.started_by),
    prompt_ids: Array.isArray(v.prompt_ids) &&
        v.prompt_ids.every((id) => typeof id === "string")
      ? v.prompt_ids as string[]
      : null,
  };
}

/**
 * Returns a reference to the newest run recorded in a state root, running or
 * finished.
 *
 * Requires `--allow-read` permission.
 *
 * @param stateRoot The state root (`PACKET/.prompt_runner` for a packet run).
 * @returns The run's reference.
 * @throws {NotFoundError} when no run was ever recorded there.
 *
 * @example Usage
 * ```ts
 * import { currentRun } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * await assert.rejects(currentRun(root), /No run recorded/);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function currentRun(stateRoot: string): Promise<RunRef> {
  const snapshot = await readSnapshotFile(
    controlPaths(stateRoot).snapshot,
    stateRoot,
  );
  if (snapshot === null) {
    throw new NotFoundError(`No run recorded in state root "${stateRoot}"`, {
      code: "RUN_NOT_FOUND",
      hint: "Start one with 'prompt_runner run PACKET'",
    });
  }
  return { state_root: stateRoot, run_id: snapshot.run_id };
}

/**
 * Reads the snapshot of a state root's newest run, whichever run that is:
 * one read, so a poll that lands while one run hands the state root to the
 * next never fails. Reads never touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param stateRoot The state root.
 * @returns The newest run's snapshot.
 * @throws {NotFoundError} when no run was ever recorded there.
 * @throws {StateError} when the snapshot cannot be read.
 *
 * @example Usage
 * ```ts
 * import { currentSnapshot } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * await assert.rejects(currentSnapshot(root), /No run recorded/);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function currentSnapshot(stateRoot: string): Promise<Snapshot> {
  const current = await readSnapshotFile(
    controlPaths(stateRoot).snapshot,
    stateRoot,
  );
  if (current === null) {
    throw new NotFoundError(`No run recorded in state root "${stateRoot}"`, {
      code: "RUN_NOT_FOUND",
      hint: "Start one with 'prompt_runner run PACKET'",
    });
  }
  return current;
}

/**
 * Reads a run's snapshot. Reads never touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param ref The run.
 * @returns Its snapshot.
 * @throws {NotFoundError} when the state root has no run.
 * @throws {StateError} when a newer run has replaced this one (a stale ref).
 *
 * @example The state of a run that has ended
 * ```ts
 * import { currentRun, runPacket, snapshot } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(`${dir}/prompts/01_hi.prompt.md`, "---\nverify: {}\n---\nHi.\n");
 * await runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * const state = await snapshot(ref);
 * assert.equal(state.status, "completed");
 * assert.equal(state.run_id, ref.run_id);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function snapshot(ref: RunRef): Promise<Snapshot> {
  const current = await readSnapshotFile(
    controlPaths(ref.state_root).snapshot,
    ref.state_root,
  );
  if (current === null) {
    throw new NotFoundError(
      `No run recorded in state root "${ref.state_root}"`,
      {
        code: "RUN_NOT_FOUND",
      },
    );
  }
  if (current.run_id !== ref.run_id) {
    throw new StateError(
      `Run ${ref.run_id} is no longer the current run of "${ref.state_root}": run ${current.run_id} replaced it`,
      { code: "STALE_RUN" },
    );
  }
  return current;
}
