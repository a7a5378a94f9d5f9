/**
 * Control planes for in-process tests: a temporary state root whose planes
 * are closed and whose files are removed at the end, and builders for the
 * events, prompt starts and raw request files the plane consumes.
 *
 * @module
 */

import { join } from "node:path";
import {
  type ControlPaths,
  controlPaths,
  type RunRef,
} from "../../lib/control/paths.ts";
import { type ControlPlane, openPlane } from "../../lib/control/plane.ts";
import type { LogEntry } from "../../lib/control/log_entry.ts";
import type { Snapshot } from "../../lib/control/snapshot.ts";
import type { EventType, RunEvent } from "../../lib/shared/events.ts";
import type {
  BoundaryCommand,
  PromptStartInfo,
  RunOpenInfo,
} from "../../lib/shared/run_hooks.ts";
import { DEFAULT_VIEW } from "../../lib/shared/view.ts";
import { listNames } from "../../scripts/_audit/mod.ts";

export { listNames };

/** A temporary state root; `await using` closes its planes and removes it. */
export interface ControlRoot extends AsyncDisposable {
  /** The temporary directory holding everything. */
  dir: string;
  /** The state root (`dir/state`, created by the first plane). */
  stateRoot: string;
  /** The control paths of the state root. */
  paths: ControlPaths;
  /** Warnings the planes reported, in order. */
  warnings: string[];
  /** A reference to a run of this state root. */
  ref(runId: string): RunRef;
  /** Opens a plane for a run (closed, if still open, at the end). */
  open(runId: string, info?: Partial<RunOpenInfo>): Promise<ControlPlane>;
}

/** What the runner would tell the plane when `runId` opens. */
export function runInfo(
  runId: string,
  stateRoot: string,
  overrides: Partial<RunOpenInfo> = {},
): RunOpenInfo {
  return {
    run_id: runId,
    packet: "test-packet",
    packet_dir: join(stateRoot, ".."),
    state_root: stateRoot,
    view: { ...DEFAULT_VIEW },
    max_steers: 3,
    prompt_ids: ["01", "02"],
    provider: "simulated",
    model: "sim-1",
    ...overrides,
  };
}

/** Makes a temporary state root for control plane tests. */
export async function makeControlRoot(): Promise<ControlRoot> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_test_" });
  const stateRoot = join(dir, "state");
  const planes: ControlPlane[] = [];
  const warnings: string[] = [];
  return {
    dir,
    stateRoot,
    paths: controlPaths(stateRoot),
    warnings,
    ref: (runId) => ({ state_root: stateRoot, run_id: runId }),
    async open(runId, info = {}): Promise<ControlPlane> {
      const plane = await openPlane(
        stateRoot,
        runInfo(runId, stateRoot, info),
        {
          warn: (message) => {
            warnings.push(message);
          },
        },
      );
      planes.push(plane);
      return plane;
    },
    async [Symbol.asyncDispose](): Promise<void> {
      for (const plane of planes) {
        await plane.close("interrupted").catch(() => {});
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A prompt start as the runner reports it. */
export function promptStart(
  promptId = "01",
  overrides: Partial<PromptStartInfo> = {},
): PromptStartInfo {
  return {
    prompt_id: promptId,
    name: `prompt ${promptId}`,
    attempt: 1,
    mode: "run",
    provider: "simulated",
    model: "sim-1",
    max_steers: 3,
    ...overrides,
  };
}

/** A canonical event of `runId`. */
export function runEvent(
  runId: string,
  seq: number,
  type: EventType,
  data: Record<string, unknown> = {},
  promptId: string | null = "01",
): RunEvent {
  return {
    v: 1,
    seq,
    at: new Date(Date.UTC(2026, 10, 30, 2, 52, 0, seq)).toISOString(),
    run_id: runId,
    prompt_id: promptId,
    attempt: promptId === null ? null : 1,
    type,
    data,
  } as RunEvent;
}

/** The JSON of a request as a client writes it. */
export function requestJson(
  id: string,
  runId: string,
  command: string,
  params: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    v: 1,
    id,
    command,
    params,
    run_id: runId,
    author: "tester",
    issued_at: new Date().toISOString(),
    ...extra,
  }) + "\n";
}

/** Writes a raw file into `requests/` and returns its path. */
export async function writeRawRequest(
  paths: ControlPaths,
  name: string,
  content: string | Uint8Array,
): Promise<string> {
  const path = join(paths.requests, name);
  if (typeof content === "string") await Deno.writeTextFile(path, content);
  else await Deno.writeFile(path, content);
  return path;
}

/** Parses every line of a JSONL file (none when it does not exist). */
export async function readJsonl<T = Record<string, unknown>>(
  path: string,
): Promise<T[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return text.split("\n").filter((line) => line !== "").map((line) =>
    JSON.parse(line) as T
  );
}

/** The audit log entries of one request, oldest first. */
export async function logEntriesOf(
  paths: ControlPaths,
  requestId: string,
): Promise<LogEntry[]> {
  return (await readJsonl<LogEntry>(paths.log)).filter((entry) =>
    entry.request_id === requestId
  );
}

/**
 * Writes a snapshot as a runner would, without a plane: `overrides` set the
 * run, its status and its heartbeat (`updated_at`, now by default).
 */
export async function writeSnapshotFile(
  paths: ControlPaths,
  overrides: Partial<Snapshot> & { run_id: string },
): Promise<void> {
  const snapshot = testSnapshot(paths.root, overrides);
  await Deno.mkdir(paths.archive, { recursive: true });
  await Deno.mkdir(paths.requests, { recursive: true });
  await Deno.writeTextFile(
    paths.snapshot,
    JSON.stringify(snapshot, null, 2) + "\n",
  );
}

/**
 * A snapshot as a runner of `stateRoot` writes it: `overrides` set the run,
 * its status and its heartbeat (`updated_at`, now by default).
 */
export function testSnapshot(
  stateRoot: string,
  overrides: Partial<Snapshot> & { run_id: string },
): Snapshot {
  const now = new Date().toISOString();
  return {
    v: 1,
    packet: "test-packet",
    packet_dir: join(stateRoot, ".."),
    status: "running",
    prompt_id: "01",
    prompt_name: "prompt 01",
    attempt: 1,
    mode: "run",
    provider: "simulated",
    model: "sim-1",
    run_started_at: now,
    prompt_started_at: now,
    updated_at: now,
    elapsed_ms: 0,
    prompt_elapsed_ms: 0,
    tool_count: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    agent_pid: null,
    agent_pid_start: null,
    event_count: 0,
    last_seq: 0,
    steer_count: 0,
    max_steers: 3,
    view: { ...DEFAULT_VIEW },
    pid: Deno.pid,
    host: "test-host",
    started_by: null,
    prompt_ids: null,
    attention: null,
    budget: null,
    ...overrides,
  };
}

/** Appends text to a file as is (creating it). */
export async function appendText(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text, { append: true });
}

/**
 * Tells whether `promise` is still unsettled after `ms` milliseconds. It
 * asserts an absence (nothing arrived in the window), never a duration.
 */
export async function stillPendingAfter(
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  const result = await Promise.race([
    promise.then(() => "settled", () => "settled"),
    timeout,
  ]);
  clearTimeout(timer);
  return result === "pending";
}

/**
 * Runs boundaries until no request is pending, and returns the commands
 * they gave. A boundary does a bounded amount of request work (20 ms while
 * events flow, 250 ms while idle), so on a loaded machine one may take only
 * some of the requests waiting: a test must not count on one taking them all.
 */
export async function drainRequests(
  plane: ControlPlane,
  paths: ControlPaths,
  idle = false,
): Promise<BoundaryCommand[]> {
  const commands: BoundaryCommand[] = [];
  for (let n = 0; n < 1000; n++) {
    commands.push(...await plane.boundary({ idle }));
    const pending = (await listNames(paths.requests)).filter((name) =>
      !name.startsWith(".")
    );
    if (pending.length === 0) return commands;
  }
  throw new Error("requests/ never drained");
}
