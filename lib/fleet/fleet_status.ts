/**
 * Where a fleet run stands (DESIGN §10, §12): the status rollup of a run
 * read from the fleet alone, which holds no `state.json`, run lock or
 * packet. Its snapshot is its `PR_RUNS` entry; its packet's prompts and
 * every amendment of its state root are its `PR_CONTRACTS` entries; its
 * steers are in its audit log (`PR_LOG`); and its prompts' state is
 * replayed from its events (`PR_EVENTS`). The fleet hearing from the
 * runner stands for the run lock: alive while heard, gone once the run is
 * unreachable, none once the run is over.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { LogEntry } from "../control/log_entry.ts";
import type { Snapshot } from "../control/snapshot.ts";
import type { AttemptMode } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";
import { comparePromptIds } from "../shared/prompt_id.ts";
import type {
  PromptStatus,
  StateFile,
  VerifierCounts,
} from "../status/state_file.ts";
import { statusRollup } from "../status/status_rollup.ts";
import type {
  LastEvent,
  StatusInputs,
  StatusRollup,
} from "../status/status_types.ts";
import type { FleetLink } from "./_link.ts";
import { scanBucket } from "./_fleet_scan.ts";
import { readSubject } from "./_reader.ts";
import { lastEventOf, StateReplay } from "./_state_replay.ts";
import {
  CONTRACTS_BUCKET,
  EVENTS_STREAM,
  eventsSubject,
  fleetAddress,
  type FleetRunName,
} from "./fleet_names.ts";

const decoder = new TextDecoder();

/** One prompt of a fleet run's packet, and where it stands in the run. */
export interface FleetPromptStatus {
  /** The prompt's id. */
  id: string;
  /** Its name, as the run's events give it (`null`: it has not started). */
  name: string | null;
  /** Where it stands in this run (`null`: the run has not reached it). */
  status: PromptStatus | null;
  /** The modes of its attempts in this run, oldest first. */
  attempts: AttemptMode[];
  /** Its last verification in this run, counted (`null`: none). */
  verifier: VerifierCounts | null;
}

/** Where a fleet run stands, as `prompt_runner status fleet:…` shows it. */
export interface FleetStatus {
  /**
   * The status rollup (`status --json`), every field present: `target`
   * and `state_root` are the run's fleet address, `workspace_id` is
   * `null`, and the lease is the fleet's hearing of the runner.
   */
  rollup: StatusRollup;
  /** The packet's prompts as the fleet knows them, in the packet's order. */
  prompts: FleetPromptStatus[];
  /** How long the fleet has not heard from the run, in milliseconds. */
  silent_ms: number;
}

/** A fleet run as {@linkcode fleetStatus} reads it (a `FleetRun`). */
export interface FleetStatusSource extends FleetRunName {
  /** Its latest snapshot. */
  snapshot: Snapshot;
  /** Its status, `unreachable` when it runs but went silent. */
  status: string;
  /** When the fleet last heard of it (ISO 8601). */
  updated_at: string;
}

/** What {@linkcode fleetStatus} is given besides the fleet. */
export interface FleetStatusOptions {
  /** The run's audit-log entries. */
  log: LogEntry[];
  /** The current time, in ms since the epoch (default: once read). */
  now?: number;
}

/** The run's prompts' contracts: each prompt id with its amendments. */
async function readContracts(
  link: FleetLink,
  key: string,
): Promise<Map<string, AmendmentRecord[]>> {
  const prompts = new Map<string, AmendmentRecord[]>();
  for (const entry of await scanBucket(link, CONTRACTS_BUCKET, `${key}.*`)) {
    let view: unknown;
    try {
      view = JSON.parse(decoder.decode(entry.value));
    } catch {
      continue; // Not a contract a bridge put.
    }
    const amendments = isRecord(view) && Array.isArray(view.amendments)
      ? view.amendments.filter(isRecord) as unknown as AmendmentRecord[]
      : [];
    prompts.set(entry.key.slice(key.length + 1), amendments);
  }
  return prompts;
}

/** The run's events as far as the fleet holds them, replayed. */
async function replayEvents(
  link: FleetLink,
  run: FleetStatusSource,
): Promise<{ state: StateFile; last: LastEvent | null }> {
  const replay = new StateReplay(run.run_id);
  let last: string | null = null;
  const stop = new AbortController();
  try {
    for await (
      const batch of readSubject(link, {
        stream: EVENTS_STREAM,
        subject: eventsSubject(run.key),
        from: "all",
        signal: stop.signal,
      })
    ) {
      for (const message of batch.messages) {
        last = decoder.decode(message.data);
        replay.line(last);
      }
      if (batch.caughtUp) break;
    }
  } finally {
    stop.abort();
  }
  return { state: replay.state, last: lastEventOf(last) };
}

/** Steers delivered in the run: its log's applied steers, each once. */
function deliveredSteers(log: LogEntry[], runId: string): number {
  const ids = new Set<string>();
  for (const entry of log) {
    if (
      entry.command === "steer" && entry.outcome === "applied" &&
      entry.run_id === runId
    ) {
      ids.add(entry.request_id ?? entry.at);
    }
  }
  return ids.size;
}

/**
 * The rollup's inputs for a fleet run. The runner's host stands for this
 * host, so the rollup takes the run lock for one it can check: alive while
 * the fleet hears from the runner, gone when the run is unreachable.
 */
function inputsOf(
  run: FleetStatusSource,
  contracts: Map<string, AmendmentRecord[]>,
  replayed: { state: StateFile; last: LastEvent | null },
  log: LogEntry[],
): StatusInputs {
  const snapshot = run.snapshot;
  const address = fleetAddress(run);
  const names = (id: string) =>
    replayed.state.prompts[id]?.name ||
    (snapshot.prompt_id === id ? snapshot.prompt_name : null) || "";
  const ids = [...contracts.keys()].sort(comparePromptIds);
  return {
    target: address,
    workspace_id: null,
    state_root: address,
    packet_prompts: ids.length === 0
      ? null
      : ids.map((id) => ({ id, name: names(id) })),
    snapshot,
    state: replayed.state,
    lock: snapshot.status === "running"
      ? {
        info: {
          pid: snapshot.pid,
          pid_start: null,
          host: snapshot.host,
          run_id: snapshot.run_id,
          started_at: snapshot.run_started_at,
        },
        alive: run.status !== "unreachable",
      }
      : null,
    last_event: replayed.last,
    delivered_steers: deliveredSteers(log, run.run_id),
    log,
    amendments: [...contracts.values()].flat(),
    agent_alive: null,
    host: snapshot.host,
  };
}

/** Each prompt the fleet knows of the run, where it stands. */
function promptsOf(inputs: StatusInputs): FleetPromptStatus[] {
  const { snapshot, state } = inputs;
  const ids = new Set([
    ...inputs.packet_prompts?.map((p) => p.id) ?? [],
    ...snapshot?.prompt_ids ?? [],
    ...Object.keys(state.prompts),
  ]);
  return [...ids].sort(comparePromptIds).map((id) => {
    const entry = state.prompts[id];
    const report = entry?.last_verifier ?? null;
    return {
      id,
      name: entry?.name ||
        inputs.packet_prompts?.find((p) => p.id === id)?.name || null,
      status: entry?.status ?? null,
      attempts: entry?.attempts.map((a) => a.mode) ?? [],
      verifier: report === null ? null : {
        passed: report.passed,
        items: report.items.length,
        failures: report.failures,
        faults: report.faults,
      },
    };
  });
}

/**
 * Reads where a fleet run stands from the fleet: its snapshot (given),
 * its contracts and its events, with its audit log (given).
 *
 * @param link The fleet.
 * @param run The run, as the fleet listed it.
 * @param options Its audit log, and the clock.
 */
export async function fleetStatus(
  link: FleetLink,
  run: FleetStatusSource,
  options: FleetStatusOptions,
): Promise<FleetStatus> {
  const contracts = await readContracts(link, run.key);
  const replayed = await replayEvents(link, run);
  const inputs = inputsOf(run, contracts, replayed, options.log);
  const now = options.now ?? Date.now();
  return {
    rollup: statusRollup(inputs, now),
    prompts: promptsOf(inputs),
    silent_ms: Math.max(0, now - Date.parse(run.updated_at)),
  };
}
