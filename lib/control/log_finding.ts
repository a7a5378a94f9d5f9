/**
 * What verifying a state root's audit trail (`verifyLog`) finds: a line
 * that does not hold, or a note that is not tampering.
 *
 * @module
 */

/**
 * What a finding says. Problems: `edited` (a line was changed), `removed`
 * (a line is missing), `reordered` (lines were moved), `edited_or_removed`
 * (the chain breaks after a line: that line was edited, or one after it
 * removed; nothing tells which), `receipt_unlogged` (a receipt's decision is
 * not in the log), `amendment_unlogged` (an amendment is not in the log),
 * `unreadable` (a file that is not what it should be). Notes, not
 * tampering: `torn` (a line cut short by a crash), `pending` (a receipt
 * whose runner stopped before logging it), `unchained` (lines written
 * before the chain existed).
 */
export type LogFindingKind =
  | "edited"
  | "removed"
  | "reordered"
  | "edited_or_removed"
  | "receipt_unlogged"
  | "amendment_unlogged"
  | "unreadable"
  | "torn"
  | "pending"
  | "unchained";

/** One thing `verifyLog()` found. */
export interface LogFinding {
  /** What it is. */
  kind: LogFindingKind;
  /** Whether it breaks the trail (`false` for `torn`, `pending`, `unchained`). */
  problem: boolean;
  /** The file, relative to the state root (`control/log.jsonl`). */
  file: string;
  /** The line it names (1 for the first), or `null`. */
  line: number | null;
  /** What does not hold, and why, in a sentence. */
  message: string;
}
