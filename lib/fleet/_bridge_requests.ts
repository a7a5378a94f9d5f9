/**
 * A bridge's requests loop: takes the run's requests from the fleet's work
 * queue (`pr.req.<key>`, a durable consumer with explicit acks) and hands
 * each to the run exactly as a local client would, acknowledging it only
 * once that is durable. `set_view`, `steer` and anything else become a
 * request file the plane decides with its usual checks, audit and
 * refusals (a message that is not JSON, too large, for another run or an
 * unknown command is refused there, with a logged reason); `amend` and
 * `relax` are recorded here, by the same code and locks as `control
 * amend`. A redelivered request (the bridge died before its ack) that
 * already has a request file, a receipt or a log entry is acknowledged
 * without being handed over again.
 *
 * @module
 */

import { amend, relax } from "../contract/amend_contract.ts";
import { appendLogEntry } from "../control/log_entry.ts";
import { controlPaths } from "../control/paths.ts";
import { placeRequest, requestKnown } from "../control/place_request.ts";
import { log } from "../control/read_log.ts";
import type { ControlRequest } from "../control/request.ts";
import { errorText } from "../shared/errors.ts";
import { isRecord } from "../shared/is_record.ts";
import { sha256Hex } from "../shared/sha256_hex.ts";
import type { QueuedMessage } from "./_link.ts";
import { type BridgeRun, isAbort } from "./_bridge_run.ts";
import { REQUESTS_STREAM, requestSubject } from "./fleet_names.ts";

/** A request id that is also a safe file name. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const decoder = new TextDecoder();

/** Where a bridge's test fault stops it (`tests/_helpers/fault_main.ts`). */
export type BridgeFault = "request_written" | null;

/** The durable consumer's name for a run: one per key, in the names NATS allows. */
export async function durableName(key: string): Promise<string> {
  return `pr_req_${(await sha256Hex(key)).slice(0, 24)}`;
}

/** The request a message holds, as far as it can be read. */
function readRequest(
  text: string,
  seq: number,
  runId: string,
): { request: ControlRequest; raw: Record<string, unknown> | null } {
  let raw: Record<string, unknown> | null = null;
  try {
    const value = JSON.parse(text);
    if (isRecord(value)) raw = value;
  } catch {
    // Not JSON: the plane refuses it, with the reason.
  }
  const id = typeof raw?.id === "string" && SAFE_ID.test(raw.id)
    ? raw.id
    : `fleet-${seq}`;
  const request: ControlRequest = {
    v: 1,
    id,
    command: typeof raw?.command === "string" ? raw.command : "unparseable",
    params: isRecord(raw?.params) ? raw.params : {},
    run_id: typeof raw?.run_id === "string" ? raw.run_id : runId,
    author: typeof raw?.author === "string" ? raw.author : "unknown",
    issued_at: typeof raw?.issued_at === "string"
      ? raw.issued_at
      : new Date().toISOString(),
    ...(typeof raw?.prompt_id === "string" ? { prompt_id: raw.prompt_id } : {}),
  };
  return { request, raw };
}

/** Records an `amend` or `relax` that came from the fleet, or its refusal. */
async function amendFromFleet(
  run: BridgeRun,
  request: ControlRequest,
): Promise<void> {
  const paths = controlPaths(run.ref.state_root);
  const logged = await log(run.ref).catch(() => []);
  if (logged.some((entry) => entry.request_id === request.id)) return;
  const params = request.params;
  const promptId = request.prompt_id;
  try {
    if (request.run_id !== run.ref.run_id) {
      throw new Error(
        `the request targets run ${request.run_id}, but this is run ${run.ref.run_id}`,
      );
    }
    if (promptId === undefined) throw new Error("the request names no prompt");
    if (run.packetDir === null) {
      throw new Error("the bridge does not know the run's packet");
    }
    const target = {
      packet_dir: run.packetDir,
      state_root: run.ref.state_root,
    };
    const common = {
      clause: String(params.clause),
      reason: typeof params.reason === "string" ? params.reason : "",
      author: request.author,
      persist: params.persist === true,
      requestId: request.id,
    };
    const entries = Array.isArray(params.entries) ? params.entries : undefined;
    if (request.command === "amend") {
      await amend(target, promptId, { ...common, entries: entries ?? [] });
    } else {
      await relax(target, promptId, {
        ...common,
        confirm: params.confirm === true,
        ...(entries === undefined ? {} : { entries }),
      });
    }
    run.contractChanged(promptId);
  } catch (error) {
    await appendLogEntry(paths, {
      run_id: run.ref.run_id,
      request_id: request.id,
      command: request.command,
      params,
      author: request.author,
      outcome: "rejected",
      reason: errorText(error),
      prompt_id: promptId ?? null,
      attempt: null,
    });
  }
}

/** Hands one queued request to the run; durable when it returns. */
async function takeRequest(
  run: BridgeRun,
  message: QueuedMessage,
  fault: BridgeFault,
): Promise<void> {
  const paths = controlPaths(run.ref.state_root);
  const text = decoder.decode(message.data);
  const { request, raw } = readRequest(text, message.seq, run.ref.run_id);
  if (
    raw !== null && (request.command === "amend" || request.command === "relax")
  ) {
    await amendFromFleet(run, request);
    return;
  }
  const name = `${request.id}.json`;
  if (await requestKnown(paths, name)) return;
  await placeRequest(paths, name, text, request, run.ref.run_id);
  if (fault === "request_written") Deno.kill(Deno.pid, "SIGKILL");
}

/**
 * Takes the run's requests from the fleet until `until` aborts (or the
 * bridge stops). An outage is waited out; a request taken but not
 * acknowledged comes again, and is handed over once.
 */
export async function bridgeRequests(
  run: BridgeRun,
  until: AbortSignal,
  fault: BridgeFault = null,
): Promise<void> {
  const durable = await durableName(run.names.key);
  const subject = requestSubject(run.names.key);
  const stop = AbortSignal.any([until, run.stop]);
  while (!stop.aborted) {
    try {
      const link = await run.session.ready(stop);
      for await (
        const message of link.takeQueued(
          REQUESTS_STREAM,
          durable,
          subject,
          stop,
        )
      ) {
        await takeRequest(run, message, fault);
        await message.ack();
        run.progress.requests++;
        run.progress.lastProgress = Date.now();
      }
    } catch (error) {
      if (isAbort(error) || stop.aborted) return;
      await run.session.backoff(error, stop);
    }
  }
}
