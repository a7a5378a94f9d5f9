/**
 * Reading a state root's audit trail for verification, in the order that
 * keeps a live run's writers from looking like tampering: `requests/`, then
 * the receipts, then the amendments, then the log (each writer makes the
 * earlier of these durable before the later), while holding the amendments
 * lock shared, so no amend or relax is half recorded meanwhile.
 *
 * @module
 */

import { anchored, openExisting } from "../shared/files.ts";
import { join } from "../shared/posix_path.ts";
import { amendmentsLockFile } from "./amendment_log.ts";
import { type ChainCheck, checkChain } from "./_verify_chain.ts";
import {
  readReceipts,
  type ReceiptFiles,
  unreadable,
} from "./_verify_links.ts";
import { controlPaths } from "./paths.ts";
import type { LogFinding } from "./log_finding.ts";

/** How long verification waits for an amend or relax to finish. */
const LOCK_WAIT_MS = 30_000;

/** A chained file as read: its check, or why it cannot be read. */
export type ReadChain = ChainCheck | LogFinding;

/** The trail as read. */
export interface Trail {
  /** What `requests/` and `outcomes/` held. */
  receipts: ReceiptFiles;
  /** The log (`null`: none yet). */
  log: ReadChain | null;
  /** Each amendments file, by name relative to the root. */
  amendments: [string, ReadChain][];
  /** `amendments/` itself, when it cannot be read. */
  findings: LogFinding[];
}

/** The log's name relative to the state root. */
export const LOG_FILE = "control/log.jsonl";

async function readBytes(
  path: string,
  root: string,
): Promise<Uint8Array | null> {
  const file = await openExisting(path, { within: root });
  if (file === null) return null;
  try {
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (;;) {
      const chunk = new Uint8Array(64 * 1024);
      const n = await file.read(chunk);
      if (n === null) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
    }
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    return bytes;
  } finally {
    file.close();
  }
}

/** Checks one chained file; a file that cannot be read is a finding. */
async function readChain(
  root: string,
  path: string,
  file: string,
): Promise<ReadChain | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await readBytes(path, root);
  } catch (error) {
    return unreadable(file, error, "it is not a regular file");
  }
  return bytes === null ? null : checkChain(bytes, file);
}

/**
 * Takes the amendments lock shared (writers take it exclusive), when it
 * exists; after a while, goes on without it.
 */
async function shareAmendmentsLock(root: string): Promise<Deno.FsFile | null> {
  let file: Deno.FsFile | null;
  try {
    file = await openExisting(amendmentsLockFile(root), { within: root });
  } catch {
    return null; // A link or a directory: nobody writes amendments through it.
  }
  if (file === null) return null;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 5; Date.now() < deadline; pause = Math.min(pause * 2, 100)) {
    if (await file.tryLock(false)) return file;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return file;
}

/** Reads the trail of a state root (which exists). */
export async function readTrail(root: string): Promise<Trail> {
  const paths = controlPaths(root);
  const lock = await shareAmendmentsLock(root);
  try {
    const receipts = await readReceipts(paths);
    const trail: Trail = { receipts, log: null, amendments: [], findings: [] };
    let names: string[] = [];
    try {
      names = anchored(root, paths.amendments, (here) => here.list())
        .filter((e) =>
          e.isFile && !e.name.startsWith(".") && e.name.endsWith(".jsonl")
        )
        .map((e) => e.name).sort();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        trail.findings.push(
          unreadable("amendments", error, "it is not a directory"),
        );
      }
    }
    for (const name of names) {
      const file = `amendments/${name}`;
      const read = await readChain(root, join(paths.amendments, name), file);
      if (read !== null) trail.amendments.push([file, read]);
    }
    trail.log = await readChain(root, paths.log, LOG_FILE);
    return trail;
  } finally {
    lock?.close();
  }
}
