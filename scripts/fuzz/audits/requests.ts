/**
 * The fuzz's checks of the request files: every one got a receipt and a
 * final log entry with a reason, and was removed. Exported so tests can
 * plant violations and see each one fire.
 *
 * @module
 */

import { join } from "node:path";
import { receiptFileName, requestIdOf } from "../../../lib/control/paths.ts";
import { listNames, lstatOrNull } from "../../_audit/mod.ts";
import type { Violations } from "../../_harness/mod.ts";
import type { Dropped } from "../state.ts";

function parseLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    try {
      const value = JSON.parse(line);
      if (typeof value === "object" && value !== null) out.push(value);
    } catch {
      // Torn or empty.
    }
  }
  return out;
}

/** A receipt, and whether the fuzzer moved it (with its directory) to plant a link. */
export interface FoundReceipt {
  /** The receipt. */
  receipt: Record<string, unknown>;
  /** Found in a copy of `outcomes/` the fuzzer moved aside. */
  moved: boolean;
}

/** Every log entry and receipt found, receipts by file name. */
export interface Records {
  /** Log entries, from the log and the copies moved aside. */
  log: Record<string, unknown>[];
  /** Receipts by file name, from `outcomes/` and the copies moved aside. */
  receipts: Map<string, FoundReceipt[]>;
}

/**
 * Every log entry and receipt the state root holds, including those in
 * copies the fuzzer moved aside (to `saved/`) to plant links.
 */
export async function collectRecords(
  stateRoot: string,
  saved: string,
): Promise<Records> {
  const log: Record<string, unknown>[] = [];
  const receipts = new Map<string, FoundReceipt[]>();
  const addReceipts = async (dir: string, moved: boolean): Promise<void> => {
    for (const name of await listNames(dir)) {
      const path = join(dir, name);
      const info = await Deno.lstat(path);
      if (!info.isFile) continue;
      try {
        const receipt = JSON.parse(await Deno.readTextFile(path));
        receipts.set(name, [...(receipts.get(name) ?? []), { receipt, moved }]);
      } catch {
        // Not a receipt: reported by the request check when one is missing.
      }
    }
  };
  const addLog = async (path: string): Promise<void> => {
    const info = await lstatOrNull(path);
    if (info === null || !info.isFile) return;
    log.push(...parseLines(await Deno.readTextFile(path)));
  };
  await addLog(join(stateRoot, "control", "log.jsonl"));
  await addReceipts(join(stateRoot, "control", "outcomes"), false);
  for (const name of await listNames(saved)) {
    if (name.endsWith("-log.jsonl")) await addLog(join(saved, name));
    if (name.endsWith("-outcomes")) await addReceipts(join(saved, name), true);
  }
  return { log, receipts };
}

/** What the request check counted. */
export interface RequestCheck {
  /** Files checked. */
  checked: number;
  /** Final outcomes, by outcome. */
  outcomes: Record<string, number>;
  /**
   * Requests decided again after the fuzzer moved `outcomes/` (and their
   * receipt) away before their log entry was written.
   */
  redecided: number;
  /** Files in place after the last run's final status, left undecided. */
  late: number;
}

/**
 * Every dropped file got exactly one receipt (named as the product names
 * it) for its request id, a final log entry for it (a rejection with a
 * reason), and is gone from `requests/`. A file in place only after the
 * last run published its final status (`lateAfter`) may also be left
 * whole, with neither: the runner's last sweep may have passed, and the
 * protocol leaves such a request to its writer (a client settles it
 * itself; the fuzzer's raw files do not).
 */
export async function checkDropped(
  requests: string,
  dropped: readonly Dropped[],
  records: Records,
  violations: Violations,
  lateAfter: number = Infinity,
): Promise<RequestCheck> {
  const finals = new Map<string, Record<string, unknown>[]>();
  for (const entry of records.log) {
    if (
      typeof entry.request_id === "string" &&
      (entry.outcome === "applied" || entry.outcome === "rejected")
    ) {
      finals.set(entry.request_id, [
        ...(finals.get(entry.request_id) ?? []),
        entry,
      ]);
    }
  }
  const filesPerId = new Map<string, number>();
  for (const { name } of dropped) {
    const id = requestIdOf(name);
    filesPerId.set(id, (filesPerId.get(id) ?? 0) + 1);
  }
  const left = new Set(await listNames(requests));
  const result: RequestCheck = {
    checked: 0,
    outcomes: {},
    redecided: 0,
    late: 0,
  };
  for (const { name, kind, at } of dropped) {
    result.checked++;
    const id = requestIdOf(name);
    const tag = `${kind} ${
      JSON.stringify(name.length > 60 ? name.slice(0, 40) + "…" : name)
    }`;
    const receipts = records.receipts.get(await receiptFileName(name)) ?? [];
    if (
      at >= lateAfter && receipts.length === 0 && left.has(name) &&
      !finals.has(id)
    ) {
      result.late++;
      continue;
    }
    // A receipt the fuzzer moved away before the log entry was written is
    // not there for the runner any more: it decides the request again.
    const redecided = receipts.length > 1 &&
      receipts.filter((r) => !r.moved).length <= 1;
    if (redecided) result.redecided++;
    else if (receipts.length !== 1) {
      violations.add("one receipt", `${tag}: ${receipts.length} receipts`);
    }
    for (const { receipt } of receipts) {
      if (receipt.request_id !== id) {
        violations.add(
          "one receipt",
          `${tag}: the receipt names request ${
            JSON.stringify(receipt.request_id)
          }`,
        );
      }
    }
    const entries = finals.get(id) ?? [];
    const expected = filesPerId.get(id)!;
    const allowed = redecided ? expected + receipts.length - 1 : expected;
    if (entries.length < expected || entries.length > allowed) {
      violations.add(
        "one final log entry",
        `${tag}: ${entries.length} final log entries for ${expected} file(s) with request id ${
          JSON.stringify(id.slice(0, 60))
        }`,
      );
    }
    for (const entry of entries) {
      const outcome = String(entry.outcome);
      result.outcomes[outcome] = (result.outcomes[outcome] ?? 0) + 1;
      if (
        outcome === "rejected" &&
        (typeof entry.reason !== "string" || entry.reason.trim() === "")
      ) {
        violations.add(
          "rejection has a reason",
          `${tag}: rejected without a reason`,
        );
      }
    }
    if (left.has(name)) {
      violations.add("requests removed", `${tag}: still in requests/`);
    }
  }
  return result;
}
