/**
 * Unknown keys in a manifest or a prompt's front matter: refused at every
 * level the packet format defines, naming the file, the key by its dotted
 * path and the known key it most likely meant. A key a typo hides would
 * otherwise leave a setting at its default: a budget unbounded, a check
 * never made.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";

/**
 * The edit distance between two strings: insertions, deletions,
 * substitutions and swaps of neighbours each count one.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i, ...Array.from({ length: b.length }, (_, j) => j + 1)]);
  }
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row[j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** Case and `-` for `_` are no typo worth counting. */
function folded(key: string): string {
  return key.toLowerCase().replaceAll("-", "_");
}

/**
 * The candidate nearest to `key`, compared by its last dotted segment, or
 * `null` when none is near enough to be what was meant (at most a third of
 * the key's letters wrong, and at least one).
 */
export function nearestKey(
  key: string,
  candidates: readonly string[],
): string | null {
  const wanted = folded(key);
  const limit = Math.max(1, Math.floor(wanted.length / 3));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const name = folded(candidate.slice(candidate.lastIndexOf(".") + 1));
    const distance = editDistance(wanted, name);
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Where a block sits in its file, for {@linkcode refuseUnknownKeys}. */
export interface KeyPlace {
  /** The block's dotted path (`recovery.retry`, `verify.commands[0]`); none at the top. */
  at?: string;
  /**
   * Dotted paths elsewhere in the file a key here may have been meant for
   * (`recovery.max_steers` for a top-level `max_steer`), tried when no key
   * of this block is near.
   */
  elsewhere?: readonly string[];
}

/**
 * Refuses a key of `block` that is not in `known`.
 *
 * @param block The mapping as parsed from front matter.
 * @param known The keys the packet format defines for it.
 * @param file The file it is in, named in the error.
 * @param place Its dotted path, and keys elsewhere worth suggesting.
 * @throws {UsageError} (`INVALID_PACKET`, exit 2) naming the file and the
 * key's dotted path, with the nearest known key as its hint.
 */
export function refuseUnknownKeys(
  block: Record<string, unknown>,
  known: readonly string[],
  file: string,
  place: KeyPlace = {},
): void {
  const prefix = place.at ? `${place.at}.` : "";
  for (const key of Object.keys(block)) {
    if (known.includes(key)) continue;
    const near = nearestKey(key, known.map((name) => prefix + name)) ??
      nearestKey(key, place.elsewhere ?? []);
    const list = `${place.at ? `Known keys of ${place.at}` : "Known keys"}: ${
      known.join(", ")
    }`;
    throw new UsageError(
      `Invalid packet file "${file}": unknown key ${
        JSON.stringify(prefix + key)
      }`,
      {
        code: "INVALID_PACKET",
        hint: near === null ? list : `Did you mean "${near}"? ${list}`,
      },
    );
  }
}
