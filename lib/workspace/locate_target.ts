/**
 * Resolving a TARGET as a client names it (a workspace id, a state root, a
 * packet directory) to where its runs live, for clients of `mod.ts`.
 *
 * @module
 */

import { resolveRunLocation } from "./resolve_run_location.ts";

/** Where a TARGET's runs live. */
export interface TargetLocation {
  /** The state root holding the runs' state and control files. */
  state_root: string;
  /** The packet directory, or `null` when only a state root was named. */
  packet_dir: string | null;
  /** The workspace the state root belongs to, or `null`. */
  workspace_id: string | null;
}

/** Options for {@linkcode locateTarget}. */
export interface LocateTargetOptions {
  /** The directory relative paths are resolved against (default: the process's). */
  cwd?: string;
}

/**
 * Resolves a TARGET the way the CLI's commands do (DESIGN §10), in order: a
 * prepared workspace's id; a state root (a directory holding `state.json` or
 * `control/`); a packet directory. Without a TARGET: the current directory
 * when it is one of those, else the one prepared workspace whose packet or
 * repos contain it.
 *
 * Requires `--allow-read` and `--allow-env` (the state home).
 *
 * @param target What the user named, or `undefined`.
 * @param options The directory paths are relative to.
 * @returns The state root, and the packet and workspace when known.
 * @throws {NotFoundError} when TARGET is none of those (the message names
 * it), or names a workspace that is not prepared.
 * @throws {UsageError} for an invalid workspace file, or several workspaces
 * related to the current directory.
 *
 * @example A packet directory
 * ```ts
 * import { locateTarget } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\n---\n");
 * const location = await locateTarget(dir);
 * assert.equal(location.state_root, `${dir}/.prompt_runner`);
 * assert.equal(location.packet_dir, dir);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function locateTarget(
  target: string | undefined,
  options: LocateTargetOptions = {},
): Promise<TargetLocation> {
  const location = await resolveRunLocation(target, {
    needs: "state_root",
    cwd: options.cwd ?? Deno.cwd(),
  });
  return {
    state_root: location.state_root,
    packet_dir: location.packet_dir,
    workspace_id: location.workspace_id,
  };
}
