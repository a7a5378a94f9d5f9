/**
 * Receipts: `outcomes/<request>.json`, one immutable record per processed
 * request, published without ever replacing one. Whoever publishes the
 * receipt decided the request (the runner, or a client settling a request
 * its run never saw), and writes its log entry.
 *
 * @module
 */

import { join } from "../shared/posix_path.ts";
import {
  ensurePrivateDir,
  readTextIfExists,
  writeFileNoReplace,
} from "../shared/files.ts";
import type { Outcome } from "./log_entry.ts";
import { type ControlPaths, receiptFileName } from "./paths.ts";

/** A request's receipt. */
export interface Receipt {
  /** The request's id (its file name without `.json`). */
  request_id: string;
  /** The run that decided it. */
  run_id: string;
  /** The request's command (`unparseable` or `unknown` when unreadable). */
  command: string;
  /** The decision: `accepted` for a steer waiting for its lane. */
  outcome: Outcome;
  /** Why it was refused, or `null`. */
  reason: string | null;
  /** When it was decided. */
  recorded_at: string;
  /**
   * `client` when the client that wrote the request settled it (its run
   * ended first; the client writes its log entry too); absent when the
   * runner decided it.
   */
  decided_by?: "client";
}

/** The path of a request file's receipt. */
export async function receiptPath(
  paths: ControlPaths,
  requestFile: string,
): Promise<string> {
  return join(paths.outcomes, await receiptFileName(requestFile));
}

/** Reads a request file's receipt, or `null` when none was published. */
export async function readReceipt(
  paths: ControlPaths,
  requestFile: string,
): Promise<Receipt | null> {
  const text = await readTextIfExists(await receiptPath(paths, requestFile), {
    within: paths.root,
  });
  if (text === null) return null;
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null &&
        typeof value.outcome === "string"
      ? value as Receipt
      : null;
  } catch {
    return null;
  }
}

/**
 * Publishes a receipt, unless one exists (then the request was decided
 * already, by whoever published that one).
 *
 * @returns `true` when this call published it.
 */
export async function publishReceipt(
  paths: ControlPaths,
  requestFile: string,
  receipt: Receipt,
): Promise<boolean> {
  const path = await receiptPath(paths, requestFile);
  const text = JSON.stringify(receipt, null, 2) + "\n";
  try {
    await writeFileNoReplace(path, text, { within: paths.root });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    // outcomes/ is gone (removed by hand): make it again.
    await ensurePrivateDir(paths.outcomes, { within: paths.root });
    try {
      await writeFileNoReplace(path, text, { within: paths.root });
    } catch (again) {
      if (again instanceof Deno.errors.AlreadyExists) return false;
      throw again;
    }
  }
  return true;
}
