/**
 * Where runs stand: the state file the runner keeps (`state.json`), what
 * `status` gathers from a state root, and the rollup that reconciles it.
 *
 * @module
 */

export {
  type AttemptRecord,
  type AttemptStatus,
  type PromptState,
  type PromptStatus,
  readState,
  type StateFile,
  type VerifierCounts,
} from "./state_file.ts";
export { type GatherOptions, gatherStatus } from "./gather_status.ts";
export {
  type LastAmendment,
  type LastEvent,
  type LastSteer,
  type RunWord,
  type StatusInputs,
  type StatusRollup,
  type UnmetItem,
} from "./status_types.ts";
export { statusRollup } from "./status_rollup.ts";
export {
  type StatusLocation,
  statusOf,
  type StatusOfOptions,
} from "./status_of.ts";
export { attentionText, spendingText } from "./attention_text.ts";
