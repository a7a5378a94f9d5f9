/**
 * The control plane: a live run's snapshot, events and audit log, and the
 * requests (view changes, steers) other processes send it, all through files
 * in the run's state root.
 *
 * @module
 */

export { type ControlPaths, controlPaths, type RunRef } from "./paths.ts";
export {
  currentRun,
  currentSnapshot,
  type Snapshot,
  snapshot,
} from "./snapshot.ts";
export { type LogEntry, type Outcome } from "./log_entry.ts";
export { followLog, type FollowLogOptions, log } from "./read_log.ts";
export {
  type EventLine,
  eventLineBatches,
  eventLines,
  events,
  type EventsFrom,
  type EventsOptions,
  eventTextBatches,
  subscribe,
} from "./subscribe.ts";
export { setView } from "./set_view.ts";
export {
  checkSteerText,
  MAX_STEER_BYTES,
  steer,
  type SteerOptions,
} from "./steer.ts";
export {
  type ControlRequest,
  defaultAuthor,
  type RequestOptions,
  type SentRequest,
} from "./request.ts";
export { type RequestOutcome, requestOutcome } from "./request_outcome.ts";
export {
  ControlPlane,
  type FaultHook,
  type FaultStep,
  MAX_REQUEST_BYTES,
  openPlane,
  type PlaneOptions,
} from "./plane.ts";
export {
  type AmendmentPhase,
  type AmendmentRecord,
  type ContractData,
  readAmendments,
} from "./amendment_log.ts";
