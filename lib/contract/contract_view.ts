/**
 * A prompt's contract as the packet states it and as runs enforce it, with
 * every amendment and the diff between the two (`control contract`).
 *
 * @module
 */

import type {
  AmendmentRecord,
  ContractData,
} from "../control/amendment_log.ts";
import { type Contract, describeEntry } from "../packet/contract.ts";
import { type AmendTarget, resolvePrompt } from "./amendment_target.ts";
import { promptContract } from "./enforced_contract.ts";

/** One line of a contract diff. */
export interface ContractDiffEntry {
  /** Kept, added by amendments, or removed by them. */
  change: "same" | "added" | "removed";
  /** The clause. */
  clause: string;
  /** The entry's label (its path, or `key=value` pairs). */
  entry: string;
}

/** A prompt's contract as the packet states it and as runs enforce it. */
export interface ContractView {
  /** The prompt. */
  prompt_id: string;
  /** The contract in the prompt file. */
  packet: Contract;
  /** The contract every run from this state root enforces. */
  enforced: Contract;
  /** Every amendment of the prompt, oldest first (persisted ones included). */
  amendments: AmendmentRecord[];
  /** The packet contract against the enforced one, clause by clause. */
  diff: ContractDiffEntry[];
}

function diffContracts(before: Contract, after: Contract): ContractDiffEntry[] {
  const a = before as ContractData;
  const b = after as ContractData;
  const clauses = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const diff: ContractDiffEntry[] = [];
  for (const clause of clauses) {
    const left = (a[clause] ?? []).map(describeEntry);
    const right = (b[clause] ?? []).map(describeEntry);
    const remaining = [...right];
    const removed: string[] = [];
    for (const label of left) {
      const index = remaining.indexOf(label);
      if (index >= 0) {
        remaining.splice(index, 1);
        diff.push({ change: "same", clause, entry: label });
      } else {
        removed.push(label);
      }
    }
    for (const label of removed) {
      diff.push({ change: "removed", clause, entry: label });
    }
    for (const label of remaining) {
      diff.push({ change: "added", clause, entry: label });
    }
  }
  return diff;
}

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
  const { packet, prompt, stateRoot } = await resolvePrompt(target, promptId);
  const current = await promptContract(prompt, {
    stateRoot,
    repos: packet.repos.map((repo) => repo.name),
    packetDir: packet.dir,
  });
  return {
    prompt_id: prompt.id,
    packet: current.packet,
    enforced: current.contract,
    amendments: current.records,
    diff: diffContracts(current.packet, current.contract),
  };
}
