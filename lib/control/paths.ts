/**
 * Where the control plane keeps its files inside a state root.
 *
 * @module
 */

import {
  type StateRootPaths,
  stateRootPaths,
} from "../shared/state_root_layout.ts";
import { sha256Hex } from "../shared/sha256_hex.ts";

/**
 * A reference to one run: where it lives, its id, and the transport it is
 * reached through. A plain `{ state_root, run_id }` names a run in a state
 * root on this machine, reached through its files.
 */
export interface RunRef {
  /**
   * The state root holding the run (`PACKET/.prompt_runner` by default); for
   * a run reached through another transport, the address that transport
   * gives the run's home.
   */
  state_root: string;
  /** The run's id. */
  run_id: string;
  /**
   * The transport the run is reached through (a `Transport`); absent: the
   * file transport, the state root's files.
   */
  transport?: TransportName;
}

/**
 * What a {@linkcode RunRef} holds to name its transport: the transport
 * itself (a `Transport`, which has this name), seen here by its name only.
 */
export interface TransportName {
  /** The transport's name (`file`, `memory`, …), for messages. */
  readonly name: string;
}

/** The control plane's paths in a state root (its whole layout). */
export type ControlPaths = StateRootPaths;

/** Returns the control plane's paths in a state root. */
export const controlPaths: (stateRoot: string) => ControlPaths = stateRootPaths;

const RECEIPT_SAFE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,159}\.json$/;

/** The request id a request file name stands for: its name without `.json`. */
export function requestIdOf(fileName: string): string {
  return fileName.endsWith(".json") ? fileName.slice(0, -5) : fileName;
}

/**
 * The receipt's file name in `outcomes/` for a request file name: the same
 * name when it is short and plain (every id a client makes), otherwise `~`
 * and a SHA-256 of the name, so every request file gets a receipt of its
 * own whatever its name: long, with spaces, accents or other bytes.
 */
export async function receiptFileName(requestFile: string): Promise<string> {
  if (RECEIPT_SAFE.test(requestFile)) return requestFile;
  return `~${await sha256Hex(requestFile)}.json`;
}

/** Makes a name safe as a file name: anything but `[A-Za-z0-9._-]` becomes `_`. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_");
}
