/**
 * The `files_exist` and `files_absent` clauses.
 *
 * @module
 */

import type { PathEntry } from "../packet/contract.ts";
import type { VerifyItem } from "./report.ts";
import { resolveEntry, type VerifyScope } from "./scope.ts";

async function exists(path: string): Promise<boolean | Error> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    // A path under a regular file cannot exist either.
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      return false;
    }
    return error as Error;
  }
}

/** Checks that each path exists (a file, a directory or a link). */
export async function checkFilesExist(
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const items: VerifyItem[] = [];
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const found = await exists(target.absolute);
    items.push({
      clause: "files_exist",
      label: target.label,
      ...(target.repo === undefined ? {} : { repo: target.repo }),
      resolved_path: target.absolute,
      status: found === true ? "pass" : found === false ? "fail" : "fault",
      reason: found === true
        ? "exists"
        : found === false
        ? `missing: ${target.absolute}`
        : `cannot check ${target.absolute}: ${found.message}`,
    });
  }
  return items;
}

/** Checks that no path exists. */
export async function checkFilesAbsent(
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const items: VerifyItem[] = [];
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const found = await exists(target.absolute);
    items.push({
      clause: "files_absent",
      label: target.label,
      ...(target.repo === undefined ? {} : { repo: target.repo }),
      resolved_path: target.absolute,
      status: found === false ? "pass" : found === true ? "fail" : "fault",
      reason: found === false
        ? "absent"
        : found === true
        ? `present: ${target.absolute}`
        : `cannot check ${target.absolute}: ${found.message}`,
    });
  }
  return items;
}
