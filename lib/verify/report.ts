/**
 * The verify report: one item per contract entry, each passed, failed or
 * faulted, with a reason.
 *
 * @module
 */

import type { Clause } from "../packet/contract.ts";

/**
 * The outcome of one check: `pass`, `fail`, or `fault` when the check could
 * not run (a missing binary, a timeout) and so is evidence of nothing.
 */
export type ItemStatus = "pass" | "fail" | "fault";

/** One checked contract entry. */
export interface VerifyItem {
  /** The clause the entry belongs to. */
  clause: Clause;
  /** A short label for the entry (its path, or its command line). */
  label: string;
  /** The outcome. */
  status: ItemStatus;
  /** Why, in words: quoted in repair prompts and reports. */
  reason: string;
  /** The repo the entry was checked in, when known. */
  repo?: string;
  /** The absolute path checked, for path clauses. */
  resolved_path?: string;
  /** The argv run, for `commands`. */
  argv?: string[];
  /** The exit code, for `commands` that ran. */
  exit_code?: number;
  /** The command's combined output (capped), for `commands`. */
  output?: string;
  /** The changed paths seen, for `changed_paths_only`. */
  changed_paths?: string[];
}

/** The verifier's verdict on a contract. */
export interface VerifyReport {
  /** True when no item failed or faulted (an empty contract passes). */
  passed: boolean;
  /** Every checked entry, clause by clause. */
  items: VerifyItem[];
  /** How many items failed. */
  failures: number;
  /** How many items faulted. */
  faults: number;
}

/** Builds a report from its items. */
export function summarizeItems(items: VerifyItem[]): VerifyReport {
  const failures = items.filter((item) => item.status === "fail").length;
  const faults = items.filter((item) => item.status === "fault").length;
  return { passed: failures === 0 && faults === 0, items, failures, faults };
}
