/**
 * The file transport: a run reached through its state root's files
 * (`control/snapshot.json`, `control/events.jsonl` and its archive,
 * `control/log.jsonl`, `control/requests/`, the receipts). The first
 * transport, and the one a plain `{ state_root, run_id }` names.
 *
 * @module
 */

import { readRequestOutcome } from "./_file_outcome.ts";
import { followRunLog, readRunLog } from "./_file_log.ts";
import { requireRunning, type SentRequest, writeRequest } from "./request.ts";
import { readStateRootSnapshot } from "./snapshot.ts";
import {
  fileEventByteBatches,
  fileEventLineBatches,
  fileEventTextBatches,
} from "./subscribe.ts";
import type { Transport } from "./transport.ts";

/**
 * The file transport: every read is of the state root's files and never
 * touches the run; a request is a file written durably into `requests/`.
 */
export const fileTransport: Transport = {
  name: "file",
  readSnapshot: readStateRootSnapshot,
  eventLineBatches: fileEventLineBatches,
  eventTextBatches: fileEventTextBatches,
  eventByteBatches: fileEventByteBatches,
  log: readRunLog,
  followLog: followRunLog,
  async submit(ref, request): Promise<SentRequest> {
    await requireRunning(ref);
    const { command, params, ...options } = request;
    return await writeRequest(ref, command, params, options);
  },
  requestOutcome: readRequestOutcome,
};
