/**
 * The fuzz's checks of the planted links: each moved aside and logged,
 * never followed, and names the plane cannot represent reported as such.
 * Exported so tests can plant violations and see each one fire.
 *
 * @module
 */

import { join, relative } from "node:path";
import { listNames, lstatOrNull } from "../../_audit/mod.ts";
import type { Violations } from "../../_harness/mod.ts";

/** What the link check counted. */
export interface LinkCheck {
  /** Planted links moved aside (with their log entry). */
  movedAside: number;
  /** Planted links replaced by the runner's own file (an atomic rename over them). */
  replaced: number;
  /** Planted links still in place at the end (the runner never went there). */
  untouched: number;
}

/**
 * Every link the runner moved aside (`NAME.link-refused-TIME`) has its
 * `link_refused` log entry; every planted link (symbolic, or `hard`) is
 * accounted for (moved aside, replaced by an atomic rename, or never
 * reached).
 */
export async function checkLinks(
  stateRoot: string,
  plants: readonly { path: string; target: string; hard?: boolean }[],
  log: readonly Record<string, unknown>[],
  violations: Violations,
): Promise<LinkCheck> {
  const logged = new Set<string>();
  for (const entry of log) {
    if (entry.command !== "link_refused") continue;
    const params = entry.params as Record<string, unknown>;
    logged.add(String(params?.moved_to));
    if (typeof entry.reason !== "string" || entry.reason === "") {
      violations.add(
        "links moved aside",
        `link_refused without a reason: ${JSON.stringify(params)}`,
      );
    }
  }
  const result: LinkCheck = { movedAside: 0, replaced: 0, untouched: 0 };
  const byPath = new Map<string, number>();
  for (const { path } of plants) byPath.set(path, (byPath.get(path) ?? 0) + 1);
  for (const [path, planted] of byPath) {
    const dir = join(stateRoot, path, "..");
    const base = path.split("/").pop()!;
    const aside = (await listNames(dir)).filter((name) =>
      name.startsWith(`${base}.link-refused-`)
    );
    for (const name of aside) {
      const rel = relative(stateRoot, join(dir, name));
      if (!logged.has(rel)) {
        violations.add(
          "links moved aside",
          `${rel}: moved aside, but no link_refused log entry names it`,
        );
      }
    }
    const now = await lstatOrNull(join(stateRoot, path));
    const still = now?.isSymlink ||
        (now?.isFile && (now.nlink ?? 1) > 1 &&
          plants.some((p) => p.path === path && p.hard))
      ? 1
      : 0;
    // A link put there in the instant before a rename is replaced
    // unfollowed, and reported as replaced (the runner cannot see it first).
    const reported = log.filter((entry) =>
      entry.command === "link_refused" &&
      (entry.params as Record<string, unknown>)?.path === path &&
      (entry.params as Record<string, unknown>)?.kind === "replaced"
    ).length;
    const replaced = Math.max(0, planted - aside.length - still - reported);
    if (planted - aside.length - still < 0) {
      violations.add(
        "links moved aside",
        `${path}: ${aside.length} moved aside, but ${planted} planted`,
      );
    }
    if (replaced > 0) {
      // Not followed, but not refused either: the design asks for a logged refusal.
      violations.add(
        "links moved aside",
        `${path}: ${replaced} of ${planted} planted links were replaced by the runner's own file, without a link_refused entry`,
      );
    }
    result.movedAside += aside.length;
    result.untouched += still;
    result.replaced += Math.max(0, replaced);
  }
  return result;
}

/** A name written with `\xNN` escapes, as Deno reads it back: invalid UTF-8 becomes U+FFFD. */
export function lossyName(escaped: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i++) {
    if (escaped.startsWith("\\x", i)) {
      bytes.push(parseInt(escaped.slice(i + 2, i + 4), 16));
      i += 3;
    } else bytes.push(...new TextEncoder().encode(escaped[i]!));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * A file whose name is not UTF-8 cannot be read or removed through Deno:
 * each must have a logged rejection saying so, naming the file as Deno
 * reads it; one in place only after the last run's final status
 * (`lateAfter`) may have none (see checkDropped).
 *
 * @returns How many have none, and of those how many came late.
 */
export function checkUnrepresentable(
  names: readonly { name: string; at: number }[],
  log: readonly Record<string, unknown>[],
  violations: Violations,
  lateAfter: number = Infinity,
): { missing: number; late: number } {
  const explained = new Set<string>();
  for (const entry of log) {
    if (!/not valid UTF-8/.test(String(entry.reason))) continue;
    explained.add(String((entry.params as Record<string, unknown>)?.file));
  }
  let missing = 0;
  let late = 0;
  for (const { name, at } of names) {
    if (explained.has(lossyName(name))) continue;
    if (at >= lateAfter) {
      late++;
      continue;
    }
    missing++;
    violations.add(
      "unrepresentable names explained",
      `${name}: no rejection names ${JSON.stringify(lossyName(name))}`,
    );
  }
  return { missing, late };
}
