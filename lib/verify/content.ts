/**
 * The `contains` and `matches` clauses.
 *
 * @module
 */

import type { ContainsEntry, MatchesEntry } from "../packet/contract.ts";
import type { VerifyItem } from "./report.ts";
import { resolveEntry, type VerifyScope } from "./scope.ts";
import { errorText } from "../shared/errors.ts";

type Read = { text: string } | { missing: string } | { error: string };

async function read(path: string): Promise<Read> {
  try {
    return { text: await Deno.readTextFile(path) };
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      return { missing: `missing file: ${path}` };
    }
    if (error instanceof Deno.errors.IsADirectory) {
      return { missing: `not a file: ${path}` };
    }
    return { error: `cannot read ${path}: ${errorText(error)}` };
  }
}

function quote(text: string): string {
  const short = text.length > 80 ? text.slice(0, 77) + "..." : text;
  return JSON.stringify(short);
}

/** Checks that each file contains its text literally. */
export async function checkContains(
  entries: ContainsEntry[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const items: VerifyItem[] = [];
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const result = await read(target.absolute);
    const base = {
      clause: "contains" as const,
      label: `${target.label} contains ${quote(entry.text)}`,
      ...(target.repo === undefined ? {} : { repo: target.repo }),
      resolved_path: target.absolute,
    };
    if ("text" in result) {
      const found = result.text.includes(entry.text);
      items.push({
        ...base,
        status: found ? "pass" : "fail",
        reason: found
          ? "found"
          : `${target.label} does not contain ${quote(entry.text)}`,
      });
    } else if ("missing" in result) {
      items.push({ ...base, status: "fail", reason: result.missing });
    } else {
      items.push({ ...base, status: "fault", reason: result.error });
    }
  }
  return items;
}

/** Checks that each file matches its regular expression somewhere. */
export async function checkMatches(
  entries: MatchesEntry[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const items: VerifyItem[] = [];
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const base = {
      clause: "matches" as const,
      label: `${target.label} matches /${entry.pattern}/`,
      ...(target.repo === undefined ? {} : { repo: target.repo }),
      resolved_path: target.absolute,
    };
    let pattern: RegExp;
    try {
      pattern = new RegExp(entry.pattern, "m");
    } catch (error) {
      items.push({
        ...base,
        status: "fault",
        reason: `invalid pattern: ${errorText(error)}`,
      });
      continue;
    }
    const result = await read(target.absolute);
    if ("text" in result) {
      const found = pattern.test(result.text);
      items.push({
        ...base,
        status: found ? "pass" : "fail",
        reason: found
          ? "matched"
          : `${target.label} has no match for /${entry.pattern}/`,
      });
    } else if ("missing" in result) {
      items.push({ ...base, status: "fail", reason: result.missing });
    } else {
      items.push({ ...base, status: "fault", reason: result.error });
    }
  }
  return items;
}
