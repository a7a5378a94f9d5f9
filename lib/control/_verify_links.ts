/**
 * What the audit log must hold besides its own chain: the decision of every
 * receipt in `control/outcomes/`, and every amendment of `amendments/` (and,
 * the other way, every applied amendment it logs is in its prompt's file).
 *
 * @module
 */

import { LinkRefusedError, StateError } from "../shared/errors.ts";
import { anchored, readTextIfExists } from "../shared/files.ts";
import { join } from "../shared/posix_path.ts";
import { amendmentLogEntry, type AmendmentRecord } from "./amendment_log.ts";
import type { ChainLine } from "./_verify_chain.ts";
import type { ControlPaths } from "./paths.ts";
import type { LogFinding } from "./log_finding.ts";

/** Something the log should hold but does not, with when it happened. */
export interface Missing {
  /** When it was made (a receipt's `recorded_at`, an amendment's `at`). */
  at: string;
  /** What it is, for a message. */
  what: string;
}

/** What the cross-checks found. */
export interface LinkCheck {
  /** How many receipts were checked. */
  receipts: number;
  /** How many amendments were checked. */
  amendments: number;
  /** Problems and notes. */
  findings: LogFinding[];
  /**
   * Lines that differ from what vouches for them (a receipt, an amendment
   * and its log line), as `FILE:LINE`.
   */
  differs: Set<string>;
  /** Receipts and amendments with no log line at all. */
  missing: Missing[];
  /** Applied amendments the log holds that no amendments file does. */
  unrecorded: Missing[];
}

/** A directory's entries, or `null` when it is missing. */
function listNames(
  paths: ControlPaths,
  dir: string,
): Deno.DirEntry[] | null {
  try {
    return anchored(paths.root, dir, (here) => here.list());
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** What `requests/` and `outcomes/` held, read before the log. */
export interface ReceiptFiles {
  /** The names in `requests/` (requests still being finished). */
  requests: Set<string>;
  /** Each receipt's file (relative to the root) and content (`null`: not a receipt). */
  receipts: { file: string; value: Record<string, unknown> | null }[];
  /** Directories that could not be read. */
  findings: LogFinding[];
}

/**
 * The finding for a file or directory of the trail that cannot be read:
 * `what` says why, unless it is a link (never followed). Throws anything
 * that is not a {@linkcode StateError}.
 */
export function unreadable(
  file: string,
  error: unknown,
  what: string,
): LogFinding {
  if (!(error instanceof StateError)) throw error;
  return {
    kind: "unreadable",
    problem: true,
    file,
    line: null,
    message: `${file} cannot be checked: ${
      error instanceof LinkRefusedError ? "it is a link, never followed" : what
    }`,
  };
}

/**
 * Reads the receipts, after listing `requests/`: a runner publishes a
 * receipt, then logs it, then removes the request, so a receipt read now
 * whose line is not in the log read later has its request listed here.
 */
export async function readReceipts(paths: ControlPaths): Promise<ReceiptFiles> {
  const result: ReceiptFiles = {
    requests: new Set(),
    receipts: [],
    findings: [],
  };
  try {
    for (const entry of listNames(paths, paths.requests) ?? []) {
      result.requests.add(entry.name);
    }
  } catch (error) {
    result.findings.push(
      unreadable("control/requests", error, "it is not a directory"),
    );
  }
  let names: string[] = [];
  try {
    names = (listNames(paths, paths.outcomes) ?? [])
      .filter((e) =>
        e.isFile && !e.name.startsWith(".") && e.name.endsWith(".json")
      )
      .map((e) => e.name).sort();
  } catch (error) {
    result.findings.push(
      unreadable("control/outcomes", error, "it is not a directory"),
    );
  }
  for (const name of names) {
    const text = await readTextIfExists(join(paths.outcomes, name), {
      within: paths.root,
    }).catch((error) => {
      if (error instanceof StateError) return "";
      throw error;
    });
    if (text === null) continue;
    let value: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text);
      if (
        typeof parsed === "object" && parsed !== null &&
        typeof parsed.request_id === "string" &&
        typeof parsed.outcome === "string"
      ) value = parsed;
    } catch {
      // Not a receipt.
    }
    result.receipts.push({ file: `control/outcomes/${name}`, value });
  }
  return result;
}

function fieldsOf(value: Record<string, unknown>, keys: string[]): string {
  return JSON.stringify(keys.map((key) => value[key] ?? null));
}

const RECEIPT_KEYS = ["request_id", "run_id", "command", "outcome", "reason"];

/** Whether a receipt's request is still being finished (its file is there). */
function inFlight(requests: Set<string>, requestId: string): boolean {
  const file = `${requestId}.json`;
  return requests.has(file) || requests.has(requestId) ||
    requests.has(`.${file}.claimed`);
}

const LOG = "control/log.jsonl";

function checkReceipts(
  files: ReceiptFiles,
  log: ChainLine[],
  result: LinkCheck,
): void {
  result.findings.push(...files.findings);
  const byRequest = new Map<string, ChainLine[]>();
  for (const line of log) {
    const id = line.value.request_id;
    if (typeof id !== "string") continue;
    byRequest.set(id, [...byRequest.get(id) ?? [], line]);
  }
  for (const { file, value: receipt } of files.receipts) {
    result.receipts++;
    if (receipt === null) {
      result.findings.push({
        kind: "unreadable",
        problem: true,
        file,
        line: null,
        message:
          `${file} is not a receipt (receipts are written whole, once): it was edited, or put there`,
      });
      continue;
    }
    const id = receipt.request_id as string;
    const want = fieldsOf(receipt, RECEIPT_KEYS);
    const lines = byRequest.get(id) ?? [];
    if (lines.some((line) => fieldsOf(line.value, RECEIPT_KEYS) === want)) {
      continue;
    }
    const said = `${receipt.outcome}${
      receipt.reason ? ` (${JSON.stringify(receipt.reason)})` : ""
    }`;
    if (lines.length > 0) {
      for (const line of lines) result.differs.add(`${LOG}:${line.line}`);
      result.findings.push({
        kind: "receipt_unlogged",
        problem: true,
        file: LOG,
        line: lines[0]!.line,
        message: `receipt ${id} says ${said}, but its log line ${
          lines.map((line) => line.line).join(", ")
        } says otherwise: line ${lines[0]!.line} (or the receipt) was edited`,
      });
    } else if (inFlight(files.requests, id)) {
      result.findings.push({
        kind: "pending",
        problem: false,
        file,
        line: null,
        message:
          `receipt ${id} has no log line yet: its runner stopped before logging it (the next run of the state root finishes it)`,
      });
    } else {
      result.missing.push({
        at: String(receipt.recorded_at ?? ""),
        what: `receipt ${id} (${said})`,
      });
      result.findings.push({
        kind: "receipt_unlogged",
        problem: true,
        file,
        line: null,
        message:
          `receipt ${id} (${said}) has no log line: it was removed from the log`,
      });
    }
  }
}

const AMENDMENT_KEYS = [
  "at",
  "run_id",
  "command",
  "params",
  "author",
  "outcome",
  "reason",
  "prompt_id",
];

function isAmendmentLine(value: Record<string, unknown>): boolean {
  return (value.command === "amend" || value.command === "relax") &&
    value.outcome === "applied";
}

function checkAmendments(
  log: ChainLine[],
  files: Map<string, ChainLine[]>,
  result: LinkCheck,
): void {
  const logged = log.filter((line) => isAmendmentLine(line.value));
  const matched = new Set<number>();
  for (const [file, lines] of files) {
    for (const { line, value } of lines) {
      result.amendments++;
      const entry = amendmentLogEntry(value as unknown as AmendmentRecord);
      const want = fieldsOf(
        entry as unknown as Record<string, unknown>,
        AMENDMENT_KEYS,
      );
      const found = logged.find((l) =>
        !matched.has(l.line) && fieldsOf(l.value, AMENDMENT_KEYS) === want
      );
      if (found !== undefined) {
        matched.add(found.line);
        continue;
      }
      const what = `${file} line ${line} (${entry.command} ${
        JSON.stringify(value.clause)
      } by ${JSON.stringify(value.author)} at ${value.at})`;
      const near = logged.find((l) =>
        !matched.has(l.line) && l.value.at === value.at &&
        l.value.prompt_id === value.prompt
      );
      if (near !== undefined) {
        result.differs.add(`${LOG}:${near.line}`);
        result.differs.add(`${file}:${line}`);
        result.findings.push({
          kind: "amendment_unlogged",
          problem: true,
          file,
          line,
          message:
            `${what} differs from its log line ${near.line}: one of them was edited`,
        });
        matched.add(near.line);
        continue;
      }
      result.missing.push({ at: String(value.at ?? ""), what });
      result.findings.push({
        kind: "amendment_unlogged",
        problem: true,
        file,
        line,
        message: `${what} is not in the log`,
      });
    }
  }
  for (const l of logged) {
    if (matched.has(l.line)) continue;
    const what = `the ${l.value.command} logged on line ${l.line} (prompt ${
      JSON.stringify(l.value.prompt_id)
    }, at ${l.value.at})`;
    result.unrecorded.push({ at: String(l.value.at ?? ""), what });
    result.findings.push({
      kind: "removed",
      problem: true,
      file: LOG,
      line: l.line,
      message:
        `${what} is in no amendments file: it was removed from amendments/`,
    });
  }
}

/**
 * Checks the receipts and amendments against the log.
 *
 * @param receipts What `requests/` and `outcomes/` held (read first).
 * @param log The log's lines.
 * @param amendments Each amendments file's lines, by name relative to the root.
 */
export function checkLinks(
  receipts: ReceiptFiles,
  log: ChainLine[],
  amendments: Map<string, ChainLine[]>,
): LinkCheck {
  const result: LinkCheck = {
    receipts: 0,
    amendments: 0,
    findings: [],
    differs: new Set(),
    missing: [],
    unrecorded: [],
  };
  checkReceipts(receipts, log, result);
  checkAmendments(log, amendments, result);
  return result;
}
