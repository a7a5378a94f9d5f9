/**
 * Checking one hash-chained file (the audit log, a prompt's amendments):
 * every line's `prev` must be the SHA-256 of the line before it, or of its
 * own run id on the first line. A line cut short by a crash is *torn*: it is
 * not JSON, and the chain passes over it (appenders chain round it), or it
 * is the last bytes of the file, without a newline. Anything else that does
 * not hold is a line edited, removed or moved.
 *
 * @module
 */

import { chainHash, firstPrev, parseChainLine } from "./_chain_hash.ts";
import type { LogFinding } from "./log_finding.ts";

const NEWLINE = 0x0a;

/** A whole line of a chained file that is a JSON object. */
export interface ChainLine {
  /** Its number in the file (1 for the first). */
  line: number;
  /** What it holds. */
  value: Record<string, unknown>;
}

/** Where a chain stops holding, for a verdict that may look further. */
export interface ChainBreak {
  /** The line before, whose hash was expected (`null`: the file's first). */
  before: ChainLine | null;
  /** The line whose `prev` does not hold. */
  at: ChainLine;
}

/** What checking one chained file found. */
export interface ChainCheck {
  /** Its lines that are JSON objects, in order (all of them, past a break). */
  lines: ChainLine[];
  /** How many lines it has (torn ones included). */
  count: number;
  /** The first line that does not hold, or `null`. */
  problem: LogFinding | null;
  /** A break a verdict may refine (`problem` says `edited_or_removed`). */
  broken: ChainBreak | null;
  /** Torn and unchained lines: not tampering. */
  notes: LogFinding[];
}

/** Splits bytes into lines; the last element is what follows the last newline. */
function splitLines(bytes: Uint8Array): Uint8Array[] {
  const lines: Uint8Array[] = [];
  let start = 0;
  for (;;) {
    const at = bytes.indexOf(NEWLINE, start);
    if (at < 0) break;
    lines.push(bytes.subarray(start, at));
    start = at + 1;
  }
  lines.push(bytes.subarray(start));
  return lines;
}

function finding(
  kind: LogFinding["kind"],
  file: string,
  line: number | null,
  message: string,
): LogFinding {
  const note = kind === "torn" || kind === "pending" || kind === "unchained";
  return { kind, problem: !note, file, line, message };
}

/**
 * Checks the chain of one file's bytes.
 *
 * @param bytes The file's content.
 * @param file Its name relative to the state root, for the findings.
 */
export function checkChain(bytes: Uint8Array, file: string): ChainCheck {
  const all = splitLines(bytes);
  const rest = all.pop()!;
  const hashes = all.map((line) => chainHash(line));
  const lineOfHash = new Map(hashes.map((hash, i) => [hash, i + 1]));
  const check: ChainCheck = {
    lines: [],
    count: all.length + (rest.length > 0 ? 1 : 0),
    problem: null,
    broken: null,
    notes: [],
  };
  let before: ChainLine | null = null;
  let beforeHash: string | null = null;
  let chained = false;
  let legacy = 0;
  let torn: number[] = [];
  for (let i = 0; i < all.length; i++) {
    const number = i + 1;
    const value = parseChainLine(all[i]!);
    if (value === null) {
      torn.push(number);
      continue;
    }
    const line = { line: number, value };
    check.lines.push(line);
    if (check.problem !== null) continue;
    if (typeof value.prev !== "string") {
      if (!chained && torn.length === 0) {
        legacy++;
        before = line;
        beforeHash = hashes[i]!;
        continue;
      }
      check.problem = finding(
        "edited",
        file,
        number,
        `line ${number} has no "prev": it was edited (or written by a prompt_runner that did not chain its lines)`,
      );
      continue;
    }
    chained = true;
    const want = beforeHash ?? firstPrev(value.run_id);
    if (value.prev === want) {
      for (const n of torn) check.notes.push(tornNote(file, n, true));
      torn = [];
      before = line;
      beforeHash = hashes[i]!;
      continue;
    }
    check.problem = breakFinding(file, before, line, torn, lineOfHash);
    if (check.problem.kind === "edited_or_removed") {
      check.broken = { before, at: line };
    }
  }
  if (legacy > 0) {
    check.notes.unshift(
      finding(
        "unchained",
        file,
        1,
        `lines 1-${legacy} have no "prev": written before the log was chained, so nothing vouches for them`,
      ),
    );
  }
  if (check.problem === null) {
    // Torn lines no whole line follows: a crash's last, unfinished writes.
    for (const n of torn) check.notes.push(tornNote(file, n, false));
    if (rest.length > 0) {
      check.notes.push(
        finding(
          "torn",
          file,
          all.length + 1,
          `line ${
            all.length + 1
          } is torn: the file ends without its newline (a write cut short by a crash); readers skip it`,
        ),
      );
    }
  }
  return check;
}

function tornNote(file: string, line: number, passed: boolean): LogFinding {
  return finding(
    "torn",
    file,
    line,
    passed
      ? `line ${line} is torn (a write cut short by a crash); the chain passes over it`
      : `line ${line} is torn (a write cut short by a crash)`,
  );
}

/** Says why line `at`'s `prev` does not hold. */
function breakFinding(
  file: string,
  before: ChainLine | null,
  at: ChainLine,
  torn: number[],
  lineOfHash: Map<string, number>,
): LogFinding {
  const n = at.line;
  if (torn.length > 0) {
    // The chain does not pass over the line that is not JSON: it was whole.
    return finding(
      "edited",
      file,
      torn[0]!,
      `line ${
        torn[0]
      } is not a JSON line, and line ${n}'s prev is not the hash of the line before it: line ${
        torn[0]
      } was edited`,
    );
  }
  const other = lineOfHash.get(at.value.prev as string);
  if (other !== undefined) {
    return finding(
      "reordered",
      file,
      n,
      `line ${n} is out of place: its prev is the hash of line ${other}, not of ${
        before === null
          ? "its run id (as the first line)"
          : `line ${before.line}`
      }: lines were moved`,
    );
  }
  if (before === null) {
    return finding(
      "edited_or_removed",
      file,
      n,
      `line ${n}, the first, does not hold: its prev is not the hash of its run id: its run_id was edited, or the lines before it were removed`,
    );
  }
  return finding(
    "edited_or_removed",
    file,
    before.line,
    `line ${before.line} does not hold: line ${n}'s prev is not its hash: line ${before.line} was edited, or a line after it was removed`,
  );
}
