/**
 * Verifying a state root's audit trail (`control log --verify`): the hash
 * chains of `control/log.jsonl` and `amendments/<prompt>.jsonl`, that every
 * receipt has its log line, and that every amendment is in the log.
 *
 * @module
 */

import { NotFoundError } from "../shared/errors.ts";
import type { LogFinding } from "./log_finding.ts";
import { LOG_FILE, type ReadChain, readTrail } from "./_read_trail.ts";
import type { ChainCheck, ChainLine } from "./_verify_chain.ts";
import { checkLinks, type LinkCheck, type Missing } from "./_verify_links.ts";

export type { LogFinding, LogFindingKind } from "./log_finding.ts";

/** One chained file and its length. */
export interface ChainedFile {
  /** The file, relative to the state root. */
  file: string;
  /** How many lines it has. */
  lines: number;
  /** Whether its chain holds. */
  holds: boolean;
}

/** What {@linkcode verifyLog} found. */
export interface LogVerification {
  /** The state root. */
  state_root: string;
  /** Whether everything holds (torn lines and pending receipts do). */
  holds: boolean;
  /** The chained files: the log first, then each prompt's amendments. */
  files: ChainedFile[];
  /** How many receipts were checked against the log. */
  receipts: number;
  /** How many amendments were checked against the log. */
  amendments: number;
  /** What does not hold, the first line that does not first. */
  problems: LogFinding[];
  /** What holds but is worth saying: torn lines, pending receipts. */
  notes: LogFinding[];
}

const SLACK_MS = 5_000;
/** Whether `at` lies between two lines' times (give or take a few seconds). */
function between(
  at: string,
  before: Record<string, unknown> | null,
  after: Record<string, unknown>,
): boolean {
  const t = Date.parse(at);
  if (Number.isNaN(t)) return false;
  const from = before === null ? -Infinity : Date.parse(String(before.at));
  const to = Date.parse(String(after.at));
  return !(t < from - SLACK_MS) && !(t > to + SLACK_MS);
}

/**
 * Tells an edited line from a removed one where the chain alone cannot:
 * a line that differs from its receipt or amendment was edited; a receipt
 * or amendment with no line, from the time of the gap, was removed.
 */
function refine(
  check: ChainCheck,
  links: LinkCheck,
  missing: Missing[],
): void {
  const broken = check.broken;
  const problem = check.problem;
  if (broken === null || problem === null) return;
  const { before, at } = broken;
  if (before !== null && links.differs.has(`${problem.file}:${before.line}`)) {
    problem.kind = "edited";
    problem.message =
      `line ${before.line} was edited: line ${at.line}'s prev is not its hash, and it differs from what vouches for it`;
    return;
  }
  const gone = missing.find((m) =>
    between(m.at, before?.value ?? null, at.value)
  );
  if (gone === undefined) return;
  problem.kind = "removed";
  problem.line = at.line;
  problem.message = `a line was removed before line ${at.line}${
    before === null ? "" : ` (after line ${before.line})`
  }: ${gone.what} has no line here`;
}

/**
 * Verifies a state root's audit trail: every line of `control/log.jsonl`
 * and of `amendments/<prompt>.jsonl` carries `prev`, the SHA-256 of the
 * line before it (the first line's is of its own `run_id`); every receipt
 * in `control/outcomes/` has its line in the log; every amendment is in the
 * log (and every applied amendment the log holds is in its file). A line
 * edited, removed or moved is a problem; a line cut short by a crash is
 * *torn*, a note: the chain passes over it.
 *
 * Reads only; never touches the run. Requires `--allow-read`.
 *
 * @param stateRoot The state root.
 * @returns What holds and what does not.
 * @throws {NotFoundError} when the state root does not exist.
 *
 * @example A run's trail holds; an edited line does not
 * ```ts
 * import { amend, verifyLog } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(`${dir}/prompts/01_hi.prompt.md`, "---\nverify: {}\n---\nHi.\n");
 * for (const reason of ["one", "two"]) {
 *   await amend(dir, "01", { clause: "files_absent", entries: [reason], reason });
 * }
 * const root = `${dir}/.prompt_runner`;
 * assert.equal((await verifyLog(root)).holds, true);
 *
 * const log = `${root}/control/log.jsonl`;
 * await Deno.writeTextFile(log, (await Deno.readTextFile(log)).replace("one", "uno"));
 * const found = await verifyLog(root);
 * assert.equal(found.holds, false);
 * assert.equal(found.problems[0]?.line, 1);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function verifyLog(stateRoot: string): Promise<LogVerification> {
  try {
    await Deno.stat(stateRoot);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new NotFoundError(`No state root at "${stateRoot}"`, {
      code: "STATE_ROOT_NOT_FOUND",
      hint: "Name a packet directory, a state root or a workspace id",
    });
  }
  const result: LogVerification = {
    state_root: stateRoot,
    holds: true,
    files: [],
    receipts: 0,
    amendments: 0,
    problems: [],
    notes: [],
  };
  const trail = await readTrail(stateRoot);
  result.problems.push(...trail.findings);
  const checks: { file: ChainedFile; check: ChainCheck }[] = [];
  const take = (file: string, read: ReadChain | null): ChainCheck | null => {
    if (read === null) return null;
    if ("kind" in read) {
      result.files.push({ file, lines: 0, holds: false });
      result.problems.push(read);
      return null;
    }
    const entry = { file, lines: read.count, holds: true };
    result.files.push(entry);
    checks.push({ file: entry, check: read });
    return read;
  };
  const logCheck = take(LOG_FILE, trail.log);
  const amendments = new Map<string, ChainLine[]>();
  for (const [file, read] of trail.amendments) {
    const check = take(file, read);
    if (check !== null) amendments.set(file, check.lines);
  }
  const links = checkLinks(trail.receipts, logCheck?.lines ?? [], amendments);
  result.receipts = links.receipts;
  result.amendments = links.amendments;
  for (const { file, check } of checks) {
    refine(check, links, check === logCheck ? links.missing : links.unrecorded);
    if (check.problem !== null) {
      result.problems.push(check.problem);
      file.holds = false;
    }
    result.notes.push(...check.notes);
  }
  for (const found of links.findings) {
    (found.problem ? result.problems : result.notes).push(found);
  }
  result.holds = result.problems.length === 0;
  return result;
}
