/**
 * Where the control plane keeps its files inside a state root.
 *
 * @module
 */

import {
  type StateRootPaths,
  stateRootPaths,
} from "../shared/state_root_layout.ts";

/** A reference to one run: its state root and its id. */
export interface RunRef {
  /** The state root holding the run (`PACKET/.prompt_runner` by default). */
  state_root: string;
  /** The run's id. */
  run_id: string;
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
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(requestFile),
  );
  const hex = Array.from(
    new Uint8Array(digest),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
  return `~${hex}.json`;
}

/** Makes a name safe as a file name: anything but `[A-Za-z0-9._-]` becomes `_`. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_");
}
