/**
 * Where runs live: packet directories, state roots and run refs, resolved in
 * one place for every command and the runner.
 *
 * @module
 */

export {
  defaultStateRoot,
  locateRunTarget,
  type PacketRunLocation,
  type RunLocation,
  type RunTarget,
  runTargetOf,
  STATE_DIR_NAME,
} from "./run_location.ts";
export {
  isPacketDir,
  type LocationNeed,
  resolveRunLocation,
  type ResolveRunLocationOptions,
} from "./resolve_run_location.ts";
