/**
 * Amendment records: `amendments/<prompt>.jsonl` in a state root, one synced
 * line per amend or relax, and their replay onto a packet's contract.
 *
 * @module
 */

import { join } from "../shared/posix_path.ts";
import { errorText, StateError } from "../shared/errors.ts";
import {
  checkPath,
  ensurePrivateDir,
  readTextIfExists,
} from "../shared/files.ts";
import { lockFile } from "../shared/lock_file.ts";
import { appendChainedLine } from "./append_chained_line.ts";
import type { LogEntry } from "./log_entry.ts";
import { controlPaths, safeName } from "./paths.ts";
import { isRecord } from "../shared/is_record.ts";

/** When an amendment was made, relative to the prompt's verification history. */
export type AmendmentPhase = "pre_verify" | "post_failure" | "post_success";

/** One amendment of a prompt's contract. */
export interface AmendmentRecord {
  /** When it was made (ISO 8601). */
  at: string;
  /** The prompt it amends. */
  prompt: string;
  /** Who made it (self-declared). */
  author: string;
  /** Why: required, never defaulted. */
  reason: string;
  /** `pre_verify` (never verified), `post_failure` or `post_success` (the last verification's verdict). */
  phase: AmendmentPhase;
  /** `add` strengthens the contract; `relax` weakens it. */
  direction: "add" | "relax";
  /** The clause it changes. */
  clause: string;
  /** `add` entries, `drop` the clause, or `replace` its entries. */
  operation: "add" | "drop" | "replace";
  /** The entries added or put in place (`[]` for a drop). */
  entries: unknown[];
  /** The state root's current run when it was made, or `null`. */
  run_id: string | null;
  /** Whether it was also written into the prompt file (then it is not replayed). */
  persisted: boolean;
  /**
   * The SHA-256 (hex) of the file's line before this one; on its first
   * line, of its `run_id` (of "" when that is `null`). Absent on records
   * not written yet, and on lines written before the chain existed.
   */
  prev?: string;
}

/** A contract as plain data: clause name to entries. */
export type ContractData = Record<string, unknown[]>;

const OPERATIONS = ["add", "drop", "replace"];
const PHASES = ["pre_verify", "post_failure", "post_success"];

/** The path of a prompt's amendments file. */
export function amendmentsFile(stateRoot: string, promptId: string): string {
  return join(
    controlPaths(stateRoot).amendments,
    `${safeName(promptId)}.jsonl`,
  );
}

function checkRecord(value: unknown): string | null {
  if (!isRecord(value)) return "not a JSON object";
  for (const key of ["at", "prompt", "author", "reason", "clause"]) {
    if (typeof value[key] !== "string") return `"${key}" is not a string`;
  }
  if (!PHASES.includes(value.phase as string)) {
    return `unknown phase ${JSON.stringify(value.phase)}`;
  }
  if (value.direction !== "add" && value.direction !== "relax") {
    return `unknown direction ${JSON.stringify(value.direction)}`;
  }
  if (!OPERATIONS.includes(value.operation as string)) {
    return `unknown operation ${JSON.stringify(value.operation)}`;
  }
  if (!Array.isArray(value.entries)) return `"entries" is not a list`;
  if (typeof value.persisted !== "boolean") {
    return `"persisted" is not true or false`;
  }
  return null;
}

/**
 * Reads a prompt's amendments, oldest first. Every line must be a complete,
 * valid record: a torn or invalid line is an error naming the file and the
 * line, never skipped (a skipped amendment would silently not be enforced).
 *
 * @throws {StateError} for a torn or invalid line.
 * @throws {LinkRefusedError} when a link stands in the way: never read
 * through, even when the file is missing.
 */
export async function readAmendments(
  stateRoot: string,
  promptId: string,
): Promise<AmendmentRecord[]> {
  const path = amendmentsFile(stateRoot, promptId);
  const text = await readTextIfExists(path, { within: stateRoot });
  if (text === null || text === "") return [];
  const lines = text.split("\n");
  const last = lines.pop();
  const records: AmendmentRecord[] = [];
  const fail = (line: number, problem: string): never => {
    throw new StateError(
      `Cannot read amendments "${path}" line ${line}: ${problem}`,
      {
        code: "AMENDMENTS_CORRUPT",
        hint:
          "Fix or remove that line; until then the prompt cannot be verified",
      },
    );
  };
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      fail(index + 1, `not JSON (${errorText(error)})`);
    }
    const problem = checkRecord(value);
    if (problem !== null) fail(index + 1, problem);
    records.push(value as AmendmentRecord);
  });
  if (last !== undefined && last !== "") {
    fail(lines.length + 1, "the line is torn (no newline at its end)");
  }
  return records;
}

/** How long an amendment waits for others of the same state root to finish. */
export const AMENDMENTS_LOCK_TIMEOUT_MS = 30_000;

/** The lock file that serialises a state root's amendment writers. */
export function amendmentsLockFile(stateRoot: string): string {
  return join(controlPaths(stateRoot).amendments, ".lock");
}

/**
 * Runs `work` while holding the state root's amendments lock, so amendment
 * writers take turns: each reads what the one before wrote, and records
 * land in the order they were made. The lock is a kernel lock on
 * `amendments/.lock` (never replaced, never followed through a link), so a
 * writer that dies lets go at once.
 *
 * @param stateRoot The state root; it must exist.
 * @param work What to do under the lock.
 * @param options How long to wait for the lock (default 30 s).
 * @returns What `work` returns.
 * @throws {StateError} when another writer held the lock for that long,
 * or the lock file is unusable (a link, not a regular file).
 */
export async function withAmendmentsLock<T>(
  stateRoot: string,
  work: () => Promise<T>,
  options: { timeoutMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? AMENDMENTS_LOCK_TIMEOUT_MS;
  await ensurePrivateDir(controlPaths(stateRoot).amendments, {
    within: stateRoot,
  });
  const path = amendmentsLockFile(stateRoot);
  const lock = await lockFile(path, { within: stateRoot, timeoutMs });
  if (lock === null) {
    throw new StateError(
      `Cannot change the contract: another amend or relax of state root "${stateRoot}" has held its lock "${path}" for ${
        timeoutMs / 1000
      } s`,
      {
        code: "AMENDMENTS_LOCKED",
        hint:
          "Nothing was recorded. Try again once the other amend or relax has finished (the lock is let go when its process ends)",
      },
    );
  }
  try {
    return await work();
  } finally {
    lock.close();
  }
}

/** The size of a prompt's amendments file (0 when missing), to undo an append. */
export async function amendmentsSize(
  stateRoot: string,
  promptId: string,
): Promise<number> {
  const info = await checkPath(stateRoot, amendmentsFile(stateRoot, promptId));
  return info?.size ?? 0;
}

/** Appends an amendment (synced) to its prompt's file, chained (`prev`). */
export async function appendAmendment(
  stateRoot: string,
  record: AmendmentRecord,
): Promise<string> {
  const paths = controlPaths(stateRoot);
  await ensurePrivateDir(paths.amendments, { within: stateRoot });
  const path = amendmentsFile(stateRoot, record.prompt);
  await appendChainedLine(path, record, { within: stateRoot });
  return path;
}

/** The audit log entry an amendment is logged with (`requestId`: the request it answers). */
export function amendmentLogEntry(
  record: AmendmentRecord,
  requestId: string | null = null,
): LogEntry {
  return {
    v: 1,
    at: record.at,
    run_id: record.run_id,
    request_id: requestId,
    command: record.direction === "add" ? "amend" : "relax",
    params: {
      clause: record.clause,
      operation: record.operation,
      entries: record.entries,
      phase: record.phase,
      persisted: record.persisted,
    },
    author: record.author,
    outcome: "applied",
    reason: record.reason,
    prompt_id: record.prompt,
    attempt: null,
  };
}

/** Records an amendment in the state root's audit log (`control/log.jsonl`), chained. */
export async function logAmendment(
  stateRoot: string,
  record: AmendmentRecord,
  requestId: string | null = null,
): Promise<void> {
  const paths = controlPaths(stateRoot);
  await ensurePrivateDir(paths.dir, { within: stateRoot });
  const entry = amendmentLogEntry(record, requestId);
  await appendChainedLine(paths.log, entry, { within: stateRoot });
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Replays amendments onto a contract, in order: `add` appends the entries
 * not already there, `drop` removes the clause, `replace` sets its entries.
 * Persisted amendments are skipped: the packet already holds them.
 */
export function replayAmendments(
  contract: ContractData,
  records: AmendmentRecord[],
): ContractData {
  const result: ContractData = structuredClone(contract);
  for (const record of records) {
    if (record.persisted) continue;
    if (record.operation === "drop") {
      delete result[record.clause];
    } else if (record.operation === "replace") {
      result[record.clause] = structuredClone(record.entries);
    } else {
      const entries = result[record.clause] ?? [];
      for (const entry of record.entries) {
        if (!entries.some((existing) => same(existing, entry))) {
          entries.push(structuredClone(entry));
        }
      }
      result[record.clause] = entries;
    }
  }
  return result;
}
