/**
 * The fleet's names (DESIGN §12): a run's node, root and key, the subjects
 * and buckets it is published under, and fleet TARGETs
 * (`fleet:<node>/<root>/<run_id>`, or a unique suffix of one).
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import { hostname } from "../shared/run_lock.ts";
import { sha256Hex } from "../shared/sha256_hex.ts";

/** The stream of every run's events. */
export const EVENTS_STREAM = "PR_EVENTS";
/** The stream of every run's audit-log lines. */
export const LOG_STREAM = "PR_LOG";
/** The work queue of requests to runs. */
export const REQUESTS_STREAM = "PR_REQUESTS";
/** The bucket of every run's latest snapshot. */
export const RUNS_BUCKET = "PR_RUNS";
/** The bucket of every run's prompts' contracts. */
export const CONTRACTS_BUCKET = "PR_CONTRACTS";

/** What a fleet TARGET starts with. */
export const FLEET_PREFIX = "fleet:";

/** One run's names in a fleet. */
export interface FleetRunName {
  /** The machine (`--fleet-node`, else the host name), sanitised. */
  node: string;
  /** The state root: the workspace id, else `r-` and 12 hex digits. */
  root: string;
  /** The run's id. */
  run_id: string;
  /** `<node>.<root>.<run_id>`: the run's key in subjects and buckets. */
  key: string;
}

/**
 * A name as the fleet keeps it: anything but `[A-Za-z0-9_-]` becomes `_`
 * (so a name is one token of a subject), and an empty one is `_`.
 */
export function sanitizeName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  return safe === "" ? "_" : safe;
}

/** The node name: the one given, else this machine's host name. */
export function nodeName(given?: string): string {
  return sanitizeName(given?.trim() || hostname());
}

/**
 * The root name of a state root (DESIGN §12): its workspace's id, else
 * `r-` and the first 12 hex digits of a SHA-256 of its real path. A fleet
 * names a run's state root so, and the dashboard keys its URLs so.
 *
 * @param realStateRoot The state root's real path (links resolved).
 * @param workspaceId Its workspace's id, or `null` when it is none's.
 * @returns The name, sanitised to `[A-Za-z0-9_-]`.
 *
 * @example A state root that is no workspace's
 * ```ts
 * import { rootName } from "./fleet_names.ts";
 * import assert from "node:assert/strict";
 *
 * assert.match(await rootName("/srv/packets/demo/.prompt_runner", null), /^r-[0-9a-f]{12}$/);
 * assert.equal(await rootName("/anywhere", "operator-packet"), "operator-packet");
 * ```
 */
export async function rootName(
  realStateRoot: string,
  workspaceId: string | null,
): Promise<string> {
  if (workspaceId !== null) return sanitizeName(workspaceId);
  return `r-${(await sha256Hex(realStateRoot)).slice(0, 12)}`;
}

/** A run's names from its node, root and id. */
export function runName(
  node: string,
  root: string,
  runId: string,
): FleetRunName {
  return { node, root, run_id: runId, key: `${node}.${root}.${runId}` };
}

/** The run a bucket key names, or `null` when it names none. */
export function parseRunKey(key: string): FleetRunName | null {
  const first = key.indexOf(".");
  const second = first < 0 ? -1 : key.indexOf(".", first + 1);
  if (first <= 0 || second <= first + 1 || second === key.length - 1) {
    return null;
  }
  return runName(
    key.slice(0, first),
    key.slice(first + 1, second),
    key.slice(second + 1),
  );
}

/** The subject a run's events are published under. */
export function eventsSubject(key: string): string {
  return `pr.ev.${key}`;
}

/** The subject a run's audit-log lines are published under. */
export function logSubject(key: string): string {
  return `pr.log.${key}`;
}

/** The subject requests to a run are published under. */
export function requestSubject(key: string): string {
  return `pr.req.${key}`;
}

/** The key of a prompt's contract in `PR_CONTRACTS`. */
export function contractKey(key: string, promptId: string): string {
  return `${key}.${promptId}`;
}

/**
 * The fleet address of a run, as a TARGET names it
 * (`fleet:<node>/<root>/<run_id>`).
 *
 * @example
 * ```ts
 * import { fleetAddress } from "./fleet_names.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   fleetAddress({ node: "m1", root: "ws", run_id: "r1" }),
 *   "fleet:m1/ws/r1",
 * );
 * ```
 */
export function fleetAddress(
  run: Pick<FleetRunName, "node" | "root" | "run_id">,
): string {
  return `${FLEET_PREFIX}${run.node}/${run.root}/${run.run_id}`;
}

/** Whether a TARGET names a fleet run. */
export function isFleetTarget(target: string | undefined): target is string {
  return target !== undefined && target.startsWith(FLEET_PREFIX);
}

/**
 * The parts of a fleet TARGET, last first being the run id: one part (a
 * run id), two (`root/run_id`) or three (`node/root/run_id`).
 *
 * @throws {UsageError} for a TARGET that cannot name a fleet run.
 */
export function fleetTargetParts(target: string): string[] {
  const body = target.slice(FLEET_PREFIX.length);
  const parts = body.split("/");
  if (
    body === "" || parts.length > 3 ||
    parts.some((part) => !/^[A-Za-z0-9_.-]+$/.test(part))
  ) {
    throw new UsageError(
      `Invalid fleet TARGET ${
        JSON.stringify(target)
      }: expected fleet:<node>/<root>/<run_id>, fleet:<root>/<run_id> or fleet:<run_id>`,
      {
        code: "BAD_FLEET_TARGET",
        hint: "'prompt_runner fleet ls --fleet URL' lists the fleet's runs",
      },
    );
  }
  return parts;
}

/** Whether a run's names end with a TARGET's parts. */
export function matchesTarget(run: FleetRunName, parts: string[]): boolean {
  const names = [run.node, run.root, run.run_id];
  const tail = names.slice(names.length - parts.length);
  return tail.every((name, index) => name === parts[index]);
}
