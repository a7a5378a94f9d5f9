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

async function checkPresence(
  clause: "files_exist" | "files_absent",
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const wanted = clause === "files_exist";
  const items: VerifyItem[] = [];
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const found = await exists(target.absolute);
    const base = {
      clause,
      label: target.label,
      ...(target.repo === undefined ? {} : { repo: target.repo }),
      resolved_path: target.absolute,
    };
    if (found instanceof Error) {
      items.push({
        ...base,
        status: "fault",
        reason: `cannot check ${target.absolute}: ${found.message}`,
      });
    } else if (found === wanted) {
      items.push({
        ...base,
        status: "pass",
        reason: wanted ? "exists" : "absent",
      });
    } else {
      items.push({
        ...base,
        status: "fail",
        reason: `${wanted ? "missing" : "present"}: ${target.absolute}`,
      });
    }
  }
  return items;
}

/** Checks that each path exists (a file, a directory or a link). */
export function checkFilesExist(
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  return checkPresence("files_exist", entries, scope);
}

/** Checks that no path exists. */
export function checkFilesAbsent(
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  return checkPresence("files_absent", entries, scope);
}
