/**
 * Where runs live: packet directories, state roots and run refs, resolved in
 * one place for every command and the runner.
 *
 * @module
 */

export { defaultStateRoot, STATE_DIR_NAME } from "./run_location.ts";
