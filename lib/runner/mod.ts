/**
 * The runner: plans and runs a packet, records state, and exposes the hooks
 * the control plane plugs into.
 *
 * @module
 */

export {
  type EnforcedContract,
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
