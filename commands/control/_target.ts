/**
 * The flags that name a run's TARGET instead, and telling a TARGET word
 * from a steer's text: shared by the control planner and `status`.
 *
 * @module
 */

// Files, not the lib barrels: every control command starts here.
import { resolve } from "../../lib/shared/posix_path.ts";
import { isPacketDir } from "../../lib/workspace/resolve_run_location.ts";
import { isWorkspaceId } from "../../lib/workspace/workspace_file.ts";
import { lookupWorkspace } from "../../lib/workspace/registry.ts";
import { type FlagSpec, type ParsedArgs, stringFlag } from "../_args.ts";

/** The flags that name a workspace instead of TARGET (DESIGN §8). */
export const WORKSPACE_FLAGS = {
  workspace: { type: "string" },
  packet: { type: "string" },
} as const satisfies Record<string, FlagSpec>;

/** `--workspace FILE` and `--packet DIR`, as given. */
export interface WorkspaceFlags {
  /** `--workspace FILE`. */
  workspace?: string | undefined;
  /** `--packet DIR`. */
  packet?: string | undefined;
}

/** Reads `--workspace` and `--packet`. */
export function workspaceFlags(args: ParsedArgs): WorkspaceFlags {
  return {
    workspace: stringFlag(args, "workspace"),
    packet: stringFlag(args, "packet"),
  };
}

/**
 * Tells whether a command's first word names a TARGET (a packet directory, a
 * prepared workspace's id, or a fleet run) rather than starting its text.
 */
export async function isTargetWord(
  word: string,
  cwd: string,
): Promise<boolean> {
  return word.startsWith("fleet:") || await isPacketDir(resolve(cwd, word)) ||
    (isWorkspaceId(word) && await lookupWorkspace(word) !== null);
}
