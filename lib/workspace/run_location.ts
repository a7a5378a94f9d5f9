/**
 * Where a run lives: the packet directory, its state root and the run. The
 * state root's folder name is defined here and nowhere else.
 *
 * @module
 */

import { join } from "node:path";

/** The folder, inside a packet directory, that is its default state root. */
export const STATE_DIR_NAME = ".prompt_runner";

/** The default state root of the packet in `packetDir`. */
export function defaultStateRoot(packetDir: string): string {
  return join(packetDir, STATE_DIR_NAME);
}
