/**
 * `snapshot.json`: the run's current state, replaced atomically, and the
 * file transport's reads of it.
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
import type {
  Attention,
  BudgetSpending,
  Snapshot,
} from "../shared/snapshot_schema.ts";
import { ATTENTION_REASONS } from "../shared/attention_reasons.ts";
import { isRecord } from "../shared/is_record.ts";

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
  return parseSnapshot(raw, `"${path}"`);
}

/**
 * Reads a snapshot's text (a file's, or a fleet's copy of it) as
 * {@linkcode readSnapshotFile} does: tolerant of another version's, a
 * missing or odd field read as its default.
 *
 * @param raw The text.
 * @param where What it is, for the error (`"…/snapshot.json"`).
 * @throws {StateError} when it is not JSON, or not a run snapshot.
 */
export function parseSnapshot(raw: string, where: string): Snapshot {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new StateError(
      `Cannot read snapshot ${where}: ${errorText(error)}`,
      { code: "SNAPSHOT_CORRUPT" },
    );
  }
  if (
    typeof value !== "object" || value === null || Array.isArray(value) ||
    typeof (value as Snapshot).run_id !== "string"
  ) {
    throw new StateError(
      `Cannot read snapshot ${where}: it is not a run snapshot`,
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
    attention: attentionOf(v.attention),
    budget: budgetOf(v.budget),
  };
}

/**
 * An `attention` (a snapshot's, or an `attention_needed` event's data with
 * its `since`) as read: `null` unless it has a known reason.
 */
export function attentionOf(value: unknown): Attention | null {
  if (!isRecord(value)) return null;
  const reason = ATTENTION_REASONS.find((r) => r === value.reason);
  if (reason === undefined) return null;
  return {
    reason,
    since: text(value.since) ?? "",
    prompt_id: text(value.prompt_id),
    attempt: Number.isInteger(value.attempt) ? value.attempt as number : null,
    detail: text(value.detail) ?? "",
  };
}

const BUDGET_KEYS = [
  "max_cost_usd",
  "max_input_tokens",
  "max_output_tokens",
] as const;

/** A snapshot's `budget` as read: the well-formed limits, or `null`. */
function budgetOf(value: unknown): BudgetSpending[] | null {
  if (!Array.isArray(value)) return null;
  const limits: BudgetSpending[] = [];
  for (const item of value) {
    if (!isRecord(item)) continue;
    const key = BUDGET_KEYS.find((k) => k === item.key);
    const scope = item.scope === "run" || item.scope === "prompt"
      ? item.scope
      : null;
    const limit = Number(item.limit);
    const spent = Number(item.spent);
    if (
      key === undefined || scope === null || typeof item.limit !== "number" ||
      typeof item.spent !== "number" || !Number.isFinite(limit) ||
      !Number.isFinite(spent)
    ) continue;
    limits.push({ key, scope, limit, spent });
  }
  return limits.length === 0 ? null : limits;
}

/**
 * The snapshot of `ref` from its state root's newest one (`null`: none).
 *
 * @throws {NotFoundError} when the state root has no run.
 * @throws {StateError} when a newer run has replaced this one (a stale ref).
 */
export function snapshotOfRun(current: Snapshot | null, ref: RunRef): Snapshot {
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

/**
 * Reads the snapshot of the newest run in a state root, or `null` when none
 * was ever recorded there.
 *
 * @throws {StateError} when it is not JSON, not a run snapshot, or not a file.
 */
export async function readStateRootSnapshot(
  stateRoot: string,
): Promise<Snapshot | null> {
  return await readSnapshotFile(controlPaths(stateRoot).snapshot, stateRoot);
}
