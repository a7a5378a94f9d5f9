/**
 * Amending a prompt's contract: `amend` adds requirements, `relax` removes or
 * weakens them (and needs confirmation), both with a mandatory reason and an
 * audit trail. Amendments live in the state root, never in the packet
 * (unless persisted on purpose), and every verification enforces them.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import { type Clause, CLAUSES, isClause } from "../packet/contract.ts";
import { UsageError } from "../shared/errors.ts";
import type { AmendTarget } from "./contract_transport.ts";
import { contractTransportOf } from "./file_contracts.ts";

/** Options for {@linkcode amend}. */
export interface AmendOptions {
  /** The clause to add to (`files_exist`, `changed_paths_only`, `commands`, `contains`, …). */
  clause: string;
  /** The entries to add, in the clause's shape. */
  entries: unknown[];
  /** Why: required and non-empty, never defaulted. */
  reason: string;
  /** Who amends; `$USER` when absent. */
  author?: string;
  /** Also write the change into the prompt file's `verify:` front matter. */
  persist?: boolean;
  /**
   * How long to wait for other amendments of the same state root or prompt
   * file to finish, in milliseconds (default 30 000).
   */
  lockTimeoutMs?: number;
  /**
   * The request the change answers, when it came as one (a fleet's
   * `amend` or `relax`): its audit-log entry names it.
   */
  requestId?: string;
}

/** Options for {@linkcode relax}. */
export interface RelaxOptions {
  /** The clause to drop, or whose entries to replace. */
  clause: string;
  /** Why: required and non-empty, never defaulted. */
  reason: string;
  /** Must be `true`: weakening a contract is the risky direction. */
  confirm: boolean;
  /** Replace the clause's entries with these instead of dropping it. */
  entries?: unknown[];
  /** Who relaxes; `$USER` when absent. */
  author?: string;
  /** Also write the change into the prompt file's `verify:` front matter. */
  persist?: boolean;
  /**
   * How long to wait for other amendments of the same state root or prompt
   * file to finish, in milliseconds (default 30 000).
   */
  lockTimeoutMs?: number;
  /**
   * The request the change answers, when it came as one (a fleet's
   * `amend` or `relax`): its audit-log entry names it.
   */
  requestId?: string;
}

function checkReason(reason: unknown): string {
  if (typeof reason !== "string" || reason.trim() === "") {
    throw new UsageError(
      "A contract change needs a reason: --reason is mandatory",
      {
        code: "REASON_REQUIRED",
        hint:
          "Say why the contract changes; a missing reason is refused, never defaulted",
      },
    );
  }
  return reason.trim();
}

function checkClause(clause: unknown): Clause {
  if (typeof clause !== "string" || !isClause(clause)) {
    throw new UsageError(
      `Unknown clause ${JSON.stringify(clause)}: known clauses are ${
        CLAUSES.join(", ")
      }`,
      { code: "UNKNOWN_CLAUSE" },
    );
  }
  return clause;
}

/**
 * Adds requirements to a prompt's contract. The amendment is recorded (and
 * synced) in the state root's `amendments/<prompt>.jsonl` and its audit log;
 * every later verification from that state root enforces it, including a
 * verification already under way. With `persist`, the prompt file's
 * `verify:` front matter is rewritten too (the rest of the file is kept byte
 * for byte) and the record is not replayed on top of it.
 *
 * Concurrent amendments take turns (a kernel lock on the state root's
 * `amendments/.lock`, and on the prompt file while it is rewritten), so
 * each one is recorded, enforced and persisted, or fails having recorded
 * nothing.
 *
 * Requires `--allow-read`, `--allow-write` and `--allow-env`.
 *
 * @param target The packet (and state root).
 * @param promptId The prompt to amend.
 * @param options The clause, the entries, the reason, the author.
 * @returns The amendment as recorded.
 * @throws {UsageError} for a missing reason, an unknown clause (naming the
 * known ones), an entry of the wrong shape, or a malformed prompt id.
 * @throws {NotFoundError} for an unknown prompt or packet.
 * @throws {StateError} when other amendments hold the lock past
 * `lockTimeoutMs`, or the state root cannot be written (nothing is
 * recorded then).
 * @throws {LinkRefusedError} for a link in the state root, or below the
 * packet directory (the manifest, the prompt directory, the prompt file):
 * the packet is read, and with `persist` rewritten, only inside it.
 *
 * @example Usage
 * ```ts
 * import { amend, contract } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_notes.prompt.md`,
 *   "---\nverify: {files_exist: [NOTES.md]}\n---\nWrite notes.\n",
 * );
 * const record = await amend(dir, "01", {
 *   clause: "files_exist",
 *   entries: ["lib/foo.ts"],
 *   reason: "the notes name it",
 *   author: "ada",
 * });
 * assert.equal(record.phase, "pre_verify");
 * const view = await contract(dir, "01");
 * assert.deepEqual(view.enforced.files_exist, ["NOTES.md", "lib/foo.ts"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function amend(
  target: AmendTarget,
  promptId: string,
  options: AmendOptions,
): Promise<AmendmentRecord> {
  const reason = checkReason(options.reason);
  const clause = checkClause(options.clause);
  return await contractTransportOf(target).recordAmendment(target, promptId, {
    direction: "add",
    clause,
    operation: "add",
    entries: options.entries,
    reason,
  }, options);
}

/**
 * Removes or weakens requirements of a prompt's contract: drops a clause, or
 * replaces its entries. Needs `confirm: true`, since this is the risky
 * direction. Recorded, enforced and persisted like {@linkcode amend}.
 *
 * Requires `--allow-read`, `--allow-write` and `--allow-env`.
 *
 * @param target The packet (and state root).
 * @param promptId The prompt to relax.
 * @param options The clause, the reason, the confirmation, and optional
 * replacement entries.
 * @returns The amendment as recorded.
 * @throws {UsageError} without confirmation, without a reason, for an
 * unknown clause or a malformed entry.
 * @throws {NotFoundError} for an unknown prompt or packet.
 * @throws {StateError} like {@linkcode amend}.
 *
 * @example Dropping a requirement, with a reason and a confirmation
 * ```ts
 * import { contract, relax } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_notes.prompt.md`,
 *   "---\nverify: {files_exist: [NOTES.md, CHANGELOG.md]}\n---\nWrite notes.\n",
 * );
 * await relax(dir, "01", {
 *   clause: "files_exist",
 *   entries: ["NOTES.md"],
 *   reason: "no changelog in this repo",
 *   confirm: true,
 *   author: "ada",
 * });
 * const view = await contract(dir, "01");
 * assert.deepEqual(view.enforced.files_exist, ["NOTES.md"]);
 * assert.deepEqual(view.packet.files_exist, ["NOTES.md", "CHANGELOG.md"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function relax(
  target: AmendTarget,
  promptId: string,
  options: RelaxOptions,
): Promise<AmendmentRecord> {
  if (options.confirm !== true) {
    throw new UsageError(
      "Relaxing a contract needs confirmation: pass --confirm",
      {
        code: "CONFIRMATION_REQUIRED",
        hint:
          "Removing requirements is the risky direction; to add requirements use 'control amend'",
      },
    );
  }
  const reason = checkReason(options.reason);
  const clause = checkClause(options.clause);
  return await contractTransportOf(target).recordAmendment(target, promptId, {
    direction: "relax",
    clause,
    operation: options.entries === undefined ? "drop" : "replace",
    entries: options.entries ?? [],
    reason,
  }, options);
}
