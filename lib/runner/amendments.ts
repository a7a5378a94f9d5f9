/**
 * Amending a prompt's contract: `amend` adds requirements, `relax` removes or
 * weakens them (and needs confirmation), both with a mandatory reason and an
 * audit trail. Amendments live in the state root, never in the packet
 * (unless persisted on purpose), and every verification enforces them.
 *
 * @module
 */

import { defaultStateRoot } from "../workspace/run_location.ts";
import { basename, dirname, join } from "node:path";
import {
  type AmendmentPhase,
  type AmendmentRecord,
  AMENDMENTS_LOCK_TIMEOUT_MS,
  amendmentsFile,
  amendmentsSize,
  appendAmendment,
  type ContractData,
  logAmendment,
  readAmendments,
  replayAmendments,
  withAmendmentsLock,
} from "../control/amendments.ts";
import { controlPaths } from "../control/paths.ts";
import { readSnapshotFile } from "../control/snapshot.ts";
import {
  checkEntry,
  type Clause,
  CLAUSES,
  type Contract,
  describeEntry,
  isClause,
  parseContract,
} from "../packet/contract.ts";
import { parseFrontMatter, setFrontMatterKey } from "../packet/front_matter.ts";
import {
  loadPacket,
  normalizePromptId,
  type Packet,
  type PromptSpec,
} from "../packet/load_packet.ts";
import { NotFoundError, StateError, UsageError } from "../shared/errors.ts";
import { FILE_MODE, syncDir, writeAll } from "../shared/files.ts";
import { waitForLock } from "../shared/lock_file.ts";
import { openStateRoot } from "../shared/state_root.ts";
import { defaultAuthor } from "../control/request.ts";
import { readState } from "./state_file.ts";

/**
 * Where an amendment applies: a packet directory (its state root is
 * `PACKET/.prompt_runner`), or a packet with an explicit state root.
 */
export type AmendTarget = string | {
  /** The packet directory. */
  packet_dir: string;
  /** The state root; `PACKET/.prompt_runner` when absent. */
  state_root?: string;
};

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
}

/** The enforced contract of a prompt, and what it was made from. */
export interface EnforcedContract {
  /** The contract the verifier enforces. */
  contract: Contract;
  /** The amendments folded in (empty when none). */
  amendments: unknown[];
  /** The amendments file, relative to the state root, when there is one. */
  amendments_file: string | null;
}

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

interface Resolved {
  packet: Packet;
  prompt: PromptSpec;
  stateRoot: string;
}

/** Normalises a prompt id given by a user, refusing anything but digits. */
export function checkPromptId(promptId: unknown): string {
  const id = typeof promptId === "string" && /^\s*\d{1,6}\s*$/.test(promptId)
    ? normalizePromptId(promptId)
    : null;
  if (id === null) {
    throw new UsageError(
      `Invalid prompt id ${
        JSON.stringify(promptId)
      }: expected digits such as "01"`,
      { code: "INVALID_PROMPT_ID" },
    );
  }
  return id;
}

async function resolve(
  target: AmendTarget,
  promptId: string,
): Promise<Resolved> {
  const id = checkPromptId(promptId);
  const packetDir = typeof target === "string" ? target : target.packet_dir;
  const packet = await loadPacket(packetDir);
  const stateRoot = typeof target !== "string" && target.state_root
    ? target.state_root
    : defaultStateRoot(packet.dir);
  const prompt = packet.prompts.find((p) => p.id === id);
  if (prompt === undefined) {
    throw new NotFoundError(
      `Unknown prompt id "${id}" in packet "${packet.dir}": the packet has ${
        packet.prompts.map((p) => p.id).join(", ")
      }`,
      { code: "PROMPT_NOT_FOUND" },
    );
  }
  return { packet, prompt, stateRoot };
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

function checkEntries(
  clause: Clause,
  entries: unknown,
  packet: Packet,
): unknown[] {
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new UsageError(`Name at least one ${clause} entry`, {
      code: "NO_ENTRIES",
    });
  }
  const repos = packet.repos.map((repo) => repo.name);
  return entries.map((entry) => {
    try {
      return checkEntry(clause, entry, repos);
    } catch (error) {
      throw new UsageError(
        `Invalid ${clause} entry ${JSON.stringify(entry)}: ${
          (error as Error).message
        }`,
        { code: "INVALID_ENTRY" },
      );
    }
  });
}

/**
 * The phase of an amendment made now, from the prompt's verification history
 * in the state root (its latest verification, whichever run made it).
 */
export async function amendmentPhase(
  stateRoot: string,
  promptId: string,
): Promise<AmendmentPhase> {
  const state = await readState(stateRoot);
  const attempts = state.prompts[promptId]?.attempts ?? [];
  const last = attempts.findLast((attempt) => attempt.verifier !== null);
  if (last === undefined) return "pre_verify";
  return last.verifier!.passed ? "post_success" : "post_failure";
}

/** A prompt file held by {@linkcode withPromptFile}. */
interface HeldPromptFile {
  /** The file's content when it was taken. */
  text: string;
  /** Replaces the file atomically (same mode), keeping it held. */
  replace(text: string): Promise<void>;
}

/**
 * Holds a prompt file while a persisted amendment rewrites it. The state
 * root's amendments lock does not reach a writer from another state root
 * (another operator workspace on the same packet), so the prompt file is
 * locked too, without leaving a lock file in the packet: the kernel lock
 * is taken on the file itself, and counts only if that file is still the
 * one its path names (a writer that replaced it meanwhile makes the lock
 * stale: lock the new file). A replacement is locked before it is renamed
 * into place, so a writer that opens it waits until this one has recorded
 * its change, or put the old content back.
 */
async function withPromptFile<T>(
  file: string,
  deadline: number,
  work: (held: HeldPromptFile) => Promise<T>,
): Promise<T> {
  const handles: Deno.FsFile[] = [];
  const busy = (): StateError =>
    new StateError(
      `Cannot change the contract: another amend or relax (from another state root) kept the prompt file "${file}" busy for too long`,
      {
        code: "PROMPT_FILE_LOCKED",
        hint:
          "Nothing was recorded. Try again once the other amend or relax has finished",
      },
    );
  try {
    for (;;) {
      let handle: Deno.FsFile;
      try {
        handle = await Deno.open(file, { read: true });
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) {
          throw new NotFoundError(
            `Cannot change the contract: the prompt file "${file}" no longer exists`,
            { code: "PROMPT_FILE_GONE", cause: error },
          );
        }
        throw error;
      }
      handles.push(handle);
      if (!(await waitForLock(handle, deadline))) throw busy();
      const opened = await handle.stat();
      const named = await Deno.stat(file).catch(() => null);
      if (named?.ino === opened.ino && named?.dev === opened.dev) break;
      handles.pop()!.close();
      if (Date.now() > deadline) throw busy();
    }
    const mode = (await handles[0]!.stat()).mode;
    const held: HeldPromptFile = {
      text: await Deno.readTextFile(file),
      async replace(text: string): Promise<void> {
        const temp = join(
          dirname(file),
          `.${basename(file)}.${crypto.randomUUID().slice(0, 8)}.tmp`,
        );
        const next = await Deno.open(temp, {
          write: true,
          createNew: true,
          mode: mode === null ? FILE_MODE : mode & 0o777,
        });
        handles.push(next);
        try {
          await writeAll(next, new TextEncoder().encode(text));
          await next.sync();
          // The mode given at creation is cut by the umask.
          if (mode !== null) await Deno.chmod(temp, mode & 0o777);
          if (!(await next.tryLock(true))) {
            throw new Error(`cannot lock the new file "${temp}"`);
          }
          await Deno.rename(temp, file);
        } catch (error) {
          await Deno.remove(temp).catch(() => {});
          throw error;
        }
        await syncDir(dirname(file));
      },
    };
    return await work(held);
  } finally {
    for (const handle of handles) handle.close();
  }
}

/**
 * Appends an amendment and logs it, whole or not at all: when either
 * fails, the amendments file is cut back to its old size and `undo` runs
 * (it puts the prompt file back). Called under the amendments lock, so no
 * other writer appends meanwhile.
 */
async function commit(
  stateRoot: string,
  amendment: AmendmentRecord,
  undo?: () => Promise<void>,
): Promise<void> {
  const size = await amendmentsSize(stateRoot, amendment.prompt);
  try {
    await appendAmendment(stateRoot, amendment);
    await logAmendment(stateRoot, amendment);
  } catch (error) {
    await Deno.truncate(amendmentsFile(stateRoot, amendment.prompt), size)
      .catch(() => {});
    let restored = true;
    try {
      await undo?.();
    } catch {
      restored = false;
    }
    const message = (error as Error).message;
    throw new StateError(
      restored
        ? `Cannot record the amendment in state root "${stateRoot}": ${message}`
        : `Cannot record the amendment in state root "${stateRoot}": ${message}; the prompt file could not be put back and still holds the change`,
      {
        code: "AMENDMENT_NOT_RECORDED",
        hint: restored
          ? "Nothing was recorded. Fix the cause and try again"
          : "Nothing was recorded in the state root: revert the prompt file's verify: change by hand",
        cause: error,
      },
    );
  }
}

async function record(
  resolved: Resolved,
  change: Pick<
    AmendmentRecord,
    "direction" | "clause" | "operation" | "entries" | "reason"
  >,
  options: { author?: string; persist?: boolean; lockTimeoutMs?: number },
): Promise<AmendmentRecord> {
  const { packet, prompt } = resolved;
  const author = await defaultAuthor(options.author);
  const stateRoot = await openStateRoot(resolved.stateRoot, { create: true });
  const timeoutMs = options.lockTimeoutMs ?? AMENDMENTS_LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  // Writers take turns: each reads what the last one wrote (the prompt file
  // included) under the lock, so none is lost, and records keep their order.
  return await withAmendmentsLock(stateRoot, async () => {
    // Refuse a state root whose amendments cannot be read before adding one.
    await readAmendments(stateRoot, prompt.id);
    const snapshot = await readSnapshotFile(controlPaths(stateRoot).snapshot)
      .catch(() => null);
    const amendment: AmendmentRecord = {
      at: new Date().toISOString(),
      prompt: prompt.id,
      author,
      reason: change.reason,
      phase: await amendmentPhase(stateRoot, prompt.id),
      direction: change.direction,
      clause: change.clause,
      operation: change.operation,
      entries: change.entries,
      run_id: snapshot?.run_id ?? null,
      persisted: options.persist === true,
    };
    if (!amendment.persisted) {
      await commit(stateRoot, amendment);
      return amendment;
    }
    return await withPromptFile(prompt.file, deadline, async (held) => {
      // The file as it is now, not as the packet loaded before the lock.
      const verify = parseContract(
        parseFrontMatter(held.text, prompt.file).attributes.verify,
        prompt.file,
        packet.repos.map((repo) => repo.name),
      );
      const folded = replayAmendments(verify as ContractData, [
        { ...amendment, persisted: false },
      ]);
      await held.replace(setFrontMatterKey(
        held.text,
        "verify",
        Object.keys(folded).length > 0 ? folded : undefined,
        prompt.file,
      ));
      // Without its record, the change must not stand in the packet either.
      await commit(stateRoot, amendment, () => held.replace(held.text));
      return amendment;
    });
  }, { timeoutMs });
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
  const resolved = await resolve(target, promptId);
  const entries = checkEntries(clause, options.entries, resolved.packet);
  return await record(
    resolved,
    {
      direction: "add",
      clause,
      operation: "add",
      entries,
      reason,
    },
    options,
  );
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
  const resolved = await resolve(target, promptId);
  const entries = options.entries === undefined
    ? []
    : checkEntries(clause, options.entries, resolved.packet);
  return await record(
    resolved,
    {
      direction: "relax",
      clause,
      operation: options.entries === undefined ? "drop" : "replace",
      entries,
      reason,
    },
    options,
  );
}

/** Options for {@linkcode currentContract}. */
export interface CurrentContractOptions {
  /** The state root whose amendments apply; `null` for none (an in-memory run). */
  stateRoot: string | null;
  /** The repo names the packet declares (contract entries may name them). */
  repos: readonly string[];
}

/** A prompt's contract as it stands at one moment, and what it was made from. */
export interface CurrentContract extends EnforcedContract {
  /** The contract in the prompt file, as read just now. */
  packet: Contract;
  /** Every amendment of the prompt, oldest first (persisted ones included). */
  records: AmendmentRecord[];
}

/**
 * Reads a prompt file's `verify:` as the file is now.
 *
 * @throws {NotFoundError} when the file is gone, {UsageError} when it cannot
 * be read or its front matter or contract is invalid; both name the file.
 */
async function readPromptContract(
  file: string,
  repos: readonly string[],
): Promise<Contract> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new NotFoundError(
        `Cannot read prompt file "${file}": it no longer exists`,
        { code: "PROMPT_FILE_GONE", cause: error },
      );
    }
    throw new UsageError(
      `Cannot read prompt file "${file}": ${(error as Error).message}`,
      { code: "INVALID_PACKET", cause: error },
    );
  }
  return parseContract(
    parseFrontMatter(text, file).attributes.verify,
    file,
    repos,
  );
}

/**
 * The contract a prompt has now: its prompt file's `verify:` read afresh
 * (a `--persist` amendment rewrites it, maybe while a run holds the packet
 * it loaded at start), then the state root's amendments that are not
 * persisted, replayed in order. Both `control contract` and every
 * verification of a run compute it this way, so they agree.
 *
 * @param prompt The prompt: its id and its file.
 * @param options The state root and the packet's repo names.
 * @returns The enforced contract, the packet's, and every amendment.
 * @throws {NotFoundError} when the prompt file is gone.
 * @throws {UsageError} when the prompt file cannot be read or is invalid,
 * naming the file.
 * @throws {StateError} when an amendment line is torn or invalid.
 */
export async function currentContract(
  prompt: Pick<PromptSpec, "id" | "file">,
  options: CurrentContractOptions,
): Promise<CurrentContract> {
  const { stateRoot, repos } = options;
  if (stateRoot === null) {
    const packet = await readPromptContract(prompt.file, repos);
    return {
      packet,
      contract: packet,
      amendments: [],
      amendments_file: null,
      records: [],
    };
  }
  // The file and the records are read apart. A writer replaces the file
  // before it appends a persisted record (which replay skips), so a view is
  // consistent unless records were appended between the two reads: then
  // read again. A writer appends moments after it replaces the file, so
  // this settles.
  let records = await readAmendments(stateRoot, prompt.id);
  for (let look = 1;; look++) {
    const packet = await readPromptContract(prompt.file, repos);
    const after = await readAmendments(stateRoot, prompt.id);
    const settled = JSON.stringify(after) === JSON.stringify(records);
    records = after;
    if (settled || look >= 10) {
      return { ...fold(prompt.id, packet, records), packet, records };
    }
  }
}

/**
 * The contract a state root enforces for a prompt: the packet's contract
 * with the state root's amendments replayed in order.
 *
 * @throws {StateError} when an amendment line is torn or invalid, naming
 * the file and the line.
 */
export async function enforcedContract(
  stateRoot: string,
  promptId: string,
  packetContract: Contract,
): Promise<EnforcedContract> {
  return fold(
    promptId,
    packetContract,
    await readAmendments(stateRoot, promptId),
  );
}

/** Replays a prompt's amendments that are not persisted onto its packet contract. */
function fold(
  promptId: string,
  packetContract: Contract,
  all: AmendmentRecord[],
): EnforcedContract {
  const records = all.filter((r) => !r.persisted);
  return {
    contract: replayAmendments(
      packetContract as ContractData,
      records,
    ) as Contract,
    amendments: records,
    amendments_file: records.length > 0 ? `amendments/${promptId}.jsonl` : null,
  };
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
 */
export async function contract(
  target: AmendTarget,
  promptId: string,
): Promise<ContractView> {
  const { packet, prompt, stateRoot } = await resolve(target, promptId);
  const current = await currentContract(prompt, {
    stateRoot,
    repos: packet.repos.map((repo) => repo.name),
  });
  return {
    prompt_id: prompt.id,
    packet: current.packet,
    enforced: current.contract,
    amendments: current.records,
    diff: diffContracts(current.packet, current.contract),
  };
}
