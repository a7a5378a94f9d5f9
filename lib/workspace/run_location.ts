/**
 * Where a run lives: the packet directory, its state root and the run. The
 * state root's folder name is defined here and nowhere else.
 *
 * @module
 */

import { join } from "../shared/posix_path.ts";
import { STATE_DIR_NAME } from "../shared/state_root_layout.ts";
import type { NotifyRule } from "../shared/notify_rule.ts";

export { STATE_DIR_NAME };

/** The default state root of the packet in `packetDir`. */
export function defaultStateRoot(packetDir: string): string {
  return join(packetDir, STATE_DIR_NAME);
}

/**
 * Where a run lives. The run itself is found from here: the state root's
 * current run (its snapshot) is the run a control command acts on.
 */
export interface RunLocation {
  /** The packet directory, or `null` when only a state root was named. */
  packet_dir: string | null;
  /** The state root holding the run's state and control files. */
  state_root: string;
  /**
   * Whether the state root is the packet's own (`PACKET/.prompt_runner`),
   * found from the packet rather than named.
   */
  default_state_root: boolean;
  /** The workspace the run belongs to (DESIGN §10), or `null`. */
  workspace_id: string | null;
  /** The workspace's file (`workspace.yml`), or `null`. */
  workspace_file: string | null;
  /**
   * The workspace's repo overrides: repo name → the path that replaces the
   * packet's (empty outside a workspace, and when only a state root is
   * needed).
   */
  repo_overrides: Readonly<Record<string, string>>;
  /** The fleet the workspace's runs join (its file's `fleet:`), when it names one. */
  fleet?: string;
  /** The workspace file's `notify:` rules, when it has any. */
  notify?: NotifyRule[];
}

/** A location outside any workspace. */
export function plainLocation<P extends string | null>(
  packetDir: P,
  stateRoot: string,
  defaultRoot: boolean,
): RunLocation & { packet_dir: P } {
  return {
    packet_dir: packetDir,
    state_root: stateRoot,
    default_state_root: defaultRoot,
    workspace_id: null,
    workspace_file: null,
    repo_overrides: {},
  };
}

/** A run location whose packet is known. */
export type PacketRunLocation = RunLocation & { packet_dir: string };

/**
 * Where the library API is told a run lives: a packet directory (its state
 * root is `PACKET/.prompt_runner`), or a packet with an explicit state root.
 */
export type RunTarget = string | {
  /** The packet directory. */
  packet_dir: string;
  /** The state root; `PACKET/.prompt_runner` when absent. */
  state_root?: string;
};

/**
 * The location of a {@linkcode RunTarget} once its packet is loaded.
 *
 * @param target What the caller named.
 * @param packetDir The loaded packet's directory (its real path), whose
 * default state root is used when the target names none.
 */
export function locateRunTarget(
  target: RunTarget,
  packetDir: string,
): PacketRunLocation {
  if (typeof target !== "string" && target.state_root) {
    return plainLocation(packetDir, target.state_root, false);
  }
  return plainLocation(packetDir, defaultStateRoot(packetDir), true);
}

/**
 * The {@linkcode RunTarget} naming a location that has a packet: the packet
 * alone when its state root is the default one.
 */
export function runTargetOf(location: PacketRunLocation): RunTarget {
  return location.default_state_root
    ? location.packet_dir
    : { packet_dir: location.packet_dir, state_root: location.state_root };
}
