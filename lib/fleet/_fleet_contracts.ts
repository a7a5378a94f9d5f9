/**
 * A fleet run's contract (DESIGN §12): read from `PR_CONTRACTS`, where its
 * bridge puts what `control contract --json` prints; amended by a request
 * the run's machine records with the same code and locks as `control
 * amend`, answered once the record is in the run's audit log and the
 * fleet's contract shows it.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { LogEntry } from "../control/log_entry.ts";
import type { RunRef } from "../control/paths.ts";
import type { SentRequest } from "../control/request.ts";
import type { RequestDraft } from "../control/transport.ts";
import { checkEntries } from "../contract/file_contracts.ts";
import type {
  AmendmentChange,
  AmendmentOptions,
  AmendTarget,
  ContractView,
} from "../contract/contract_transport.ts";
import type { Clause } from "../packet/contract.ts";
import { NotFoundError, StateError } from "../shared/errors.ts";
import { checkPromptId } from "../shared/prompt_id.ts";
import type { FleetLink } from "./_link.ts";
import { fleetLog, type FollowContext } from "./_fleet_follow.ts";
import { scanBucket } from "./_fleet_scan.ts";
import { contractKey, CONTRACTS_BUCKET, logSubject } from "./fleet_names.ts";

const decoder = new TextDecoder();

/** What the contract calls need of the fleet transport. */
export interface ContractContext {
  link: FleetLink;
  /** How long an amendment may wait to be recorded. */
  amendTimeoutMs: number;
  /** The run a contract target names. */
  runOf(target: AmendTarget): Promise<RunRef>;
  /** The packet name of a run. */
  packetOf(key: string): Promise<string>;
  /** Publishes a request to a run; durable once acknowledged. */
  publish(ref: RunRef, draft: RequestDraft): Promise<SentRequest>;
  /** What a follower of a run's log needs. */
  follow(ref: RunRef): FollowContext;
}

/** The key of the run a reference names (`fleet:<node>/<root>[/<run_id>]`). */
function keyOfRef(ref: RunRef): string {
  const parts = ref.state_root.slice("fleet:".length).split("/");
  return `${parts[0]}.${parts[1]}.${ref.run_id}`;
}

/** A prompt's contract, from `PR_CONTRACTS`. */
export async function fleetContract(
  ctx: ContractContext,
  target: AmendTarget,
  promptId: string,
): Promise<ContractView> {
  const id = checkPromptId(promptId);
  const ref = await ctx.runOf(target);
  const key = keyOfRef(ref);
  const entry = await ctx.link.kvGet(
    CONTRACTS_BUCKET,
    contractKey(key, id),
  );
  if (entry === null) {
    const prompts = (await scanBucket(ctx.link, CONTRACTS_BUCKET, `${key}.*`))
      .map((found) => found.key.slice(key.length + 1)).sort();
    const packet = await ctx.packetOf(key);
    throw new NotFoundError(
      `Unknown prompt id "${id}" in packet "${packet}" of fleet run ${ref.run_id}: the packet has ${
        prompts.length > 0 ? prompts.join(", ") : "no prompts the fleet knows"
      }`,
      { code: "PROMPT_NOT_FOUND" },
    );
  }
  return JSON.parse(decoder.decode(entry.value)) as ContractView;
}

/**
 * Sends an amendment to the run's machine through the fleet, and returns
 * the record once that machine has recorded it (and the fleet's contract
 * shows it).
 */
export async function recordFleetAmendment(
  ctx: ContractContext,
  target: AmendTarget,
  promptId: string,
  change: AmendmentChange,
  options: AmendmentOptions,
): Promise<AmendmentRecord> {
  const id = checkPromptId(promptId);
  if (change.operation !== "drop") {
    // The shape here; whether a named repo exists, on the run's machine.
    const named = change.entries.flatMap((entry) =>
      typeof (entry as { repo?: unknown })?.repo === "string"
        ? [(entry as { repo: string }).repo]
        : []
    );
    checkEntries(change.clause as Clause, change.entries, named);
  }
  await fleetContract(ctx, target, id);
  const ref = await ctx.runOf(target);
  const sent = await ctx.publish(ref, {
    command: change.direction === "add" ? "amend" : "relax",
    params: {
      clause: change.clause,
      ...(change.operation === "drop" ? {} : { entries: change.entries }),
      reason: change.reason,
      persist: options.persist === true,
      ...(change.direction === "relax" ? { confirm: true } : {}),
    },
    prompt_id: id,
    ...(options.author === undefined ? {} : { author: options.author }),
  });
  return await recorded(ctx, ref, sent.request_id);
}

/**
 * Waits until the prompt's contract in the fleet shows a recorded
 * amendment (its bridge puts it just after logging it), so a `contract`
 * call that follows sees it.
 */
async function contractShows(
  ctx: ContractContext,
  ref: RunRef,
  record: AmendmentRecord,
  stop: AbortSignal,
): Promise<void> {
  const key = contractKey(keyOfRef(ref), record.prompt);
  while (!stop.aborted) {
    const entry = await ctx.link.kvGet(CONTRACTS_BUCKET, key);
    const view = entry === null
      ? null
      : JSON.parse(decoder.decode(entry.value)) as ContractView;
    if (
      view?.amendments.some((a) =>
        a.at === record.at && a.author === record.author
      )
    ) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for the run's machine to record an amendment, and returns it. */
async function recorded(
  ctx: ContractContext,
  ref: RunRef,
  requestId: string,
): Promise<AmendmentRecord> {
  const stop = AbortSignal.timeout(ctx.amendTimeoutMs);
  const context = ctx.follow(ref);
  try {
    for (;;) {
      for await (
        const entry of fleetLog(context, ref, logSubject(context.key), {
          follow: true,
          signal: stop,
        })
      ) {
        if (entry.request_id !== requestId) continue;
        if (entry.outcome === "rejected") {
          throw new StateError(
            `The run's machine refused the amendment: ${entry.reason ?? ""}`,
            { code: "AMENDMENT_REFUSED" },
          );
        }
        const record = recordOf(entry);
        await contractShows(ctx, ref, record, stop);
        return record;
      }
      if (stop.aborted) break;
      // The run ended: its sidecar may still record it.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } catch (error) {
    if (!stop.aborted || error instanceof StateError) throw error;
  }
  throw new StateError(
    `No bridge recorded the amendment (request ${requestId}) within ${
      ctx.amendTimeoutMs / 1000
    } s: it waits in the fleet for the run's machine`,
    {
      code: "AMENDMENT_PENDING",
      hint:
        "It is recorded when the run's bridge next runs (its runner, or 'prompt_runner fleet join' on its machine)",
    },
  );
}

/** The amendment a log entry records. */
function recordOf(entry: LogEntry): AmendmentRecord {
  const params = entry.params;
  return {
    at: entry.at,
    prompt: entry.prompt_id ?? "",
    author: entry.author ?? "",
    reason: entry.reason ?? "",
    phase: params.phase as AmendmentRecord["phase"],
    direction: entry.command === "amend" ? "add" : "relax",
    clause: params.clause as AmendmentRecord["clause"],
    operation: params.operation as AmendmentRecord["operation"],
    entries: Array.isArray(params.entries) ? params.entries : [],
    run_id: entry.run_id,
    persisted: params.persisted === true,
  };
}
