/**
 * Putting a request file into a run's `requests/` and making sure someone
 * decides it: the one way every request reaches a run's plane, whether a
 * local client wrote it or a fleet's bridge took it from the work queue.
 *
 * A request the client acknowledges gets exactly one receipt and one final
 * log entry. The runner publishes its final status before its last sweep of
 * `requests/`, so a writer that still sees the run running after its
 * request is durable can rely on the runner; one that sees the run ended
 * claims its request back and settles it itself (the receipt, published
 * without replacing one, decides who settles).
 *
 * @module
 */

import { join } from "../shared/posix_path.ts";
import { errorText, StateError } from "../shared/errors.ts";
import {
  anchored,
  checkPath,
  currentUid,
  type Here,
  pathExists,
  writeFileNoReplace,
} from "../shared/files.ts";
import { appendLogEntry } from "./log_entry.ts";
import { type ControlPaths, receiptFileName } from "./paths.ts";
import { publishReceipt, readReceipt, type Receipt } from "./receipt.ts";
import { runEndedReason, runReplacedReason } from "./_run_end_reason.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";

/** What the writer of a request file knows of it, to settle it itself. */
export interface PlacedRequest {
  /** Its id (its file name without `.json`). */
  id: string;
  /** Its command (`unparseable` when it could not be read). */
  command: string;
  /** Its parameters. */
  params: Record<string, unknown>;
  /** The run it names. */
  run_id: string;
  /** Who asked. */
  author: string;
  /** The prompt it is for, if it names one. */
  prompt_id?: string;
}

/** What became of a request file put in place. */
export type Placed =
  | {
    /** The runner will decide it. */
    state: "placed";
  }
  | {
    /** The run ended first: the writer settled it (or the runner had). */
    state: "settled";
    receipt: Receipt;
    /** The snapshot seen after writing it. */
    after: Snapshot | null;
  }
  | {
    /** A file, a claim or a receipt of that name is there: nothing written. */
    state: "known";
  };

/** Refuses to write into a state root of another user (its runner could not read it). */
async function checkWritable(paths: ControlPaths): Promise<void> {
  const info = await Deno.stat(paths.root);
  const uid = currentUid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new StateError(
      `Refused to write to state root "${paths.root}": it belongs to user ${info.uid}, not to this user (${uid})`,
      {
        code: "STATE_ROOT_NOT_OURS",
        hint: "Send requests as the user who runs the run",
      },
    );
  }
  await checkPath(paths.root, paths.requests);
}

/**
 * Whether a request of this file name was put in place before: its file
 * waits in `requests/` (or is claimed back), or it has a receipt (every
 * decided request has one, written before its log entry).
 */
export async function requestKnown(
  paths: ControlPaths,
  name: string,
): Promise<boolean> {
  return await pathExists(join(paths.requests, name)) ||
    await pathExists(join(paths.requests, `.${name}.claimed`)) ||
    await pathExists(join(paths.outcomes, await receiptFileName(name)));
}

/**
 * Writes request file `name` with `text` into `requests/` durably (a
 * dot-temp file synced, then linked into place, never replacing a file),
 * then makes sure someone will decide it: when the run ended meanwhile,
 * the writer settles it itself (receipt and log entry, `rejected`).
 *
 * @param request The request as parsed, for the writer's own settling.
 * @param runId The run it is put in place for (the plane refuses a
 * request naming another).
 * @throws {StateError} when it cannot be written.
 */
export async function placeRequest(
  paths: ControlPaths,
  name: string,
  text: string,
  request: PlacedRequest,
  runId: string = request.run_id,
): Promise<Placed> {
  try {
    await checkWritable(paths);
    await writeFileNoReplace(join(paths.requests, name), text, {
      within: paths.root,
    });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return { state: "known" };
    if (error instanceof StateError) throw error;
    throw new StateError(
      `Cannot write request to "${paths.requests}": ${errorText(error)}`,
      { code: "REQUEST_WRITE_FAILED", cause: error },
    );
  }
  const after = await readSnapshotFile(paths.snapshot, paths.root).catch(() =>
    null
  );
  if (after?.run_id === runId && after.status === "running") {
    // The runner publishes its final status before its last sweep of
    // requests/, and it was not published yet: the runner will decide this.
    return { state: "placed" };
  }
  return {
    state: "settled",
    receipt: await settleLate(paths, name, request, after),
    after,
  };
}

/**
 * Settles a request whose run ended while it was written: claims the file
 * back (so no runner takes it any more), and publishes a `rejected`
 * receipt and log entry, unless the runner decided it first.
 */
async function settleLate(
  paths: ControlPaths,
  name: string,
  request: PlacedRequest,
  after: Snapshot | null,
): Promise<Receipt> {
  const claimed = `.${name}.claimed`;
  const inRequests = (work: (here: Here) => void): void =>
    anchored(paths.root, paths.requests, work);
  try {
    inRequests((here) => here.rename(name, claimed));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    // The runner took it: its receipt follows.
    return await waitForReceipt(paths, name);
  }
  const receipt: Receipt = {
    request_id: request.id,
    run_id: request.run_id,
    command: request.command,
    outcome: "rejected",
    reason: after === null || after.run_id !== request.run_id
      ? runReplacedReason(request.run_id, after?.run_id ?? null)
      : runEndedReason(after.status),
    recorded_at: new Date().toISOString(),
    decided_by: "client",
  };
  try {
    if (await publishReceipt(paths, name, receipt)) {
      await appendLogEntry(paths, {
        run_id: request.run_id,
        request_id: request.id,
        command: request.command,
        params: request.params,
        author: request.author,
        outcome: "rejected",
        reason: receipt.reason,
        prompt_id: request.prompt_id ?? null,
        attempt: null,
      });
      return receipt;
    }
    return await waitForReceipt(paths, name);
  } finally {
    try {
      inRequests((here) => here.remove(claimed));
    } catch {
      // Removed with the other leftovers when the next run opens.
    }
  }
}

async function waitForReceipt(
  paths: ControlPaths,
  name: string,
): Promise<Receipt> {
  for (let look = 0; look < 100; look++) {
    const receipt = await readReceipt(paths, name);
    if (receipt !== null) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new StateError(
    `The runner took request ${name} as its run ended, but published no receipt for it`,
    {
      code: "RECEIPT_MISSING",
      hint: "Resume the run to finish it: 'prompt_runner run PACKET --resume'",
    },
  );
}
