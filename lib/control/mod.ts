/**
 * The control plane: a live run's snapshot, events and audit log, and the
 * requests (view changes, steers) other processes send it, through the
 * run's transport (the files in its state root unless its reference names
 * another).
 *
 * @module
 */

export {
  type ControlPaths,
  controlPaths,
  type RunRef,
  type TransportName,
} from "./paths.ts";
export type { FollowLogOptions, RequestDraft, Transport } from "./transport.ts";
export { fileTransport } from "./file_transport.ts";
export {
  currentRun,
  type CurrentRunOptions,
  currentSnapshot,
  snapshot,
} from "./current_run.ts";
export { type Snapshot } from "./snapshot.ts";
export { type LogEntry, type Outcome } from "./log_entry.ts";
export { followLog, log } from "./read_log.ts";
export {
  type ChainedFile,
  type LogFinding,
  type LogFindingKind,
  type LogVerification,
  verifyLog,
} from "./verify_log.ts";
export {
  eventByteBatches,
  type EventLine,
  eventLineBatches,
  eventLines,
  events,
  type EventsFrom,
  type EventsOptions,
  eventTextBatches,
} from "./events.ts";
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
  newRequest,
  type RequestOptions,
  type SentRequest,
} from "./request.ts";
export { type RequestOutcome, requestOutcome } from "./request_outcome.ts";
export {
  waitForOutcome,
  type WaitOptions,
  type WaitResult,
} from "./wait_for_outcome.ts";
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
