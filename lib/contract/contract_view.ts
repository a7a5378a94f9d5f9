/**
 * A prompt's contract as the packet states it and as runs enforce it, with
 * every amendment and the diff between the two (`control contract`), read
 * through the target's contract transport.
 *
 * @module
 */

import type { ContractView } from "./contract_transport.ts";
import { type AmendTarget, contractTransportOf } from "./file_contracts.ts";

export type { ContractDiffEntry, ContractView } from "./contract_transport.ts";

/**
 * Shows a prompt's contract: the packet's, the enforced one (with the state
 * root's amendments), every amendment, and the diff between the two.
 *
 * Requires `--allow-read` permission.
 *
 * @param target The packet (and state root).
 * @param promptId The prompt.
 * @returns The contract view.
 * @throws {NotFoundError} for an unknown prompt or packet.
 * @throws {StateError} when an amendment line is torn or invalid.
 * @throws {LinkRefusedError} for a link below the packet directory (the
 * manifest, the prompt directory, the prompt file) or in the state root.
 *
 * @example The packet's contract beside the enforced one
 * ```ts
 * import { amend, contract } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_notes.prompt.md`,
 *   "---\nverify: {files_exist: [NOTES.md, CHANGELOG.md]}\n---\nWrite notes.\n",
 * );
 * await amend(dir, "01", {
 *   clause: "files_exist",
 *   entries: ["README.md"],
 *   reason: "document it",
 *   author: "ada",
 * });
 * const view = await contract(dir, "01");
 * assert.equal(view.amendments.length, 1);
 * assert.deepEqual(
 *   view.diff.filter((entry) => entry.change !== "same"),
 *   [{ change: "added", clause: "files_exist", entry: "README.md" }],
 * );
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function contract(
  target: AmendTarget,
  promptId: string,
): Promise<ContractView> {
  return await contractTransportOf(target).contract(target, promptId);
}
