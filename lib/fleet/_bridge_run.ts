/**
 * What a bridge's loops share: the run they publish, the fleet session,
 * how far each has got, and the signals that end them.
 *
 * @module
 */

import type { RunRef } from "../control/paths.ts";
import type { FleetRunName } from "./fleet_names.ts";
import type { FleetSession } from "./_session.ts";

/** A run being bridged, as every loop of its bridge sees it. */
export interface BridgeRun {
  /** The run in its state root (the file transport's reference). */
  ref: RunRef;
  /** The packet directory, when known (for the contracts). */
  packetDir: string | null;
  /** The run's names in the fleet. */
  names: FleetRunName;
  /** The fleet. */
  session: FleetSession;
  /** Aborts when the bridge must stop at once. */
  stop: AbortSignal;
  /** Aborts when the run is over and the bridge should finish its work. */
  finishing: AbortSignal;
  /** How far the loops have got. */
  progress: BridgeProgress;
  /** Called when a prompt's contract changed (an amendment was logged). */
  contractChanged(promptId: string): void;
  /** Whether the run's runner still lives (a sidecar asks). */
  runnerAlive(): Promise<boolean>;
}

/** How far a bridge has got. */
export interface BridgeProgress {
  /** The last event `seq` read from the file. */
  readSeq: number;
  /** The last event `seq` the fleet acknowledged. */
  publishedSeq: number;
  /** The events are all published (through `run_finished`), or will never be (the runner died). */
  eventsSettled: boolean;
  /** Log lines published for the run. */
  logLines: number;
  /** Snapshots put. */
  snapshots: number;
  /** Whether the final snapshot (the run ended) was put. */
  finalSnapshot: boolean;
  /** Requests taken from the fleet's work queue. */
  requests: number;
  /** When a loop last made progress (ms since the epoch). */
  lastProgress: number;
}

/** A fresh progress record. */
export function newProgress(): BridgeProgress {
  return {
    readSeq: 0,
    publishedSeq: 0,
    eventsSettled: false,
    logLines: 0,
    snapshots: 0,
    finalSnapshot: false,
    requests: 0,
    lastProgress: Date.now(),
  };
}

/** Whether an error is the end of a wait that was asked to stop. */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}
