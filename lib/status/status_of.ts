/**
 * The status rollup of a location in one call: what `prompt_runner status
 * --json` prints, for a client that has resolved its TARGET already.
 *
 * @module
 */

import { loadPacket } from "../packet/load_packet.ts";
import { gatherStatus } from "./gather_status.ts";
import { statusRollup } from "./status_rollup.ts";
import type { StatusRollup } from "./status_types.ts";

/** Where {@linkcode statusOf} reads from: a resolved TARGET. */
export interface StatusLocation {
  /** The state root. */
  state_root: string;
  /** The packet directory, when known (its prompts count as selected). */
  packet_dir?: string | null;
  /** The workspace the state root belongs to, when it is one's. */
  workspace_id?: string | null;
  /** What the rollup's `target` names (default: workspace, packet, root). */
  target?: string;
}

/** Options for {@linkcode statusOf}. */
export interface StatusOfOptions {
  /** The current time in ms since the epoch (default: now). */
  now?: number;
}

/**
 * Reads a state root and folds it into the status rollup (DESIGN §10): the
 * newest run's status, progress, attempt, verifier, provider activity,
 * steers, amendments and lease. Reads never touch the run. The packet's
 * prompts come from `packet_dir`, else from the packet the snapshot names
 * (a packet that cannot be loaded is left out).
 *
 * Requires `--allow-read` (and `--allow-sys=hostname` to tell this host's
 * runners from others').
 *
 * @param location The state root, and the packet and workspace when known.
 * @param options The clock.
 * @returns The rollup; every field present, `null` when unknown.
 * @throws {StateError} when the snapshot or `state.json` is unreadable.
 *
 * @example A state root that never ran
 * ```ts
 * import { statusOf } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * const rollup = await statusOf({ state_root: root });
 * assert.equal(rollup.run.status, "never_run");
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function statusOf(
  location: StatusLocation,
  options: StatusOfOptions = {},
): Promise<StatusRollup> {
  const packetDir = location.packet_dir ?? null;
  const workspaceId = location.workspace_id ?? null;
  const named = packetDir === null
    ? null
    : await loadPacket(packetDir).catch(() => null);
  const { inputs } = await gatherStatus({
    target: location.target ?? workspaceId ?? packetDir ??
      location.state_root,
    workspace_id: workspaceId,
    state_root: location.state_root,
    packet_prompts: named?.prompts.map((p) => ({ id: p.id, name: p.name })) ??
      null,
  });
  if (named === null && inputs.snapshot?.packet_dir) {
    const packet = await loadPacket(inputs.snapshot.packet_dir).catch(() =>
      null
    );
    if (packet !== null) {
      inputs.packet_prompts = packet.prompts.map((p) => ({
        id: p.id,
        name: p.name,
      }));
    }
  }
  return statusRollup(inputs, options.now ?? Date.now());
}
