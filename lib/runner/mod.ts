/**
 * The runner: plans and runs a packet, and reports to the hooks the control
 * plane plugs into.
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
