/**
 * The runner: plans and runs a packet, records state, and exposes the hooks
 * the control plane plugs into.
 *
 * @module
 */

export {
  type PromptOutcome,
  type RunOutput,
  runPacket,
  type RunPacketOptions,
  type RunResult,
} from "./run_packet.ts";
export {
  type AttemptRecord,
  type AttemptStatus,
  type PromptState,
  type PromptStatus,
  readState,
  type RunState,
} from "./state_file.ts";
export {
  amend,
  type AmendOptions,
  relax,
  type RelaxOptions,
} from "./amend_contract.ts";
export type {
  AmendmentChange,
  AmendmentOptions,
  AmendTarget,
  ContractDiffEntry,
  ContractTarget,
  ContractTransport,
  ContractView,
} from "./contract_transport.ts";
export { contract } from "./contract_view.ts";
export { contractViewOf } from "./contract_diff.ts";
export { fileContracts } from "./file_contracts.ts";
export {
  type EnforcedContract,
  enforcedContract,
} from "./enforced_contract.ts";
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
