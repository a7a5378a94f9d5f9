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
  type AmendTarget,
  contract,
  type ContractDiffEntry,
  type ContractView,
  type EnforcedContract,
  enforcedContract,
  relax,
  type RelaxOptions,
} from "./amendments.ts";
