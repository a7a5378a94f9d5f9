/**
 * The fleet transport: the client API's `Transport` and `ContractTransport`
 * over a fleet (DESIGN §12). A run's snapshot is its `PR_RUNS` entry, its
 * events `pr.ev.<key>`, its audit log `pr.log.<key>`, its contracts
 * `PR_CONTRACTS`; a request is published to `pr.req.<key>` and is durable
 * once JetStream acknowledges it. Every answer is the file transport's:
 * the same values, errors and exit codes.
 *
 * Addresses: a run's home is `fleet:<node>/<root>` (its newest run is its
 * current one, as a state root's is), and a run is
 * `fleet:<node>/<root>/<run_id>`.
 *
 * @module
 */

import type { EventLine } from "../control/_event_text.ts";
import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { LogEntry } from "../control/log_entry.ts";
import type { RunRef } from "../control/paths.ts";
import { newRequest, type SentRequest } from "../control/request.ts";
import {
  loggedOutcome,
  pendingOutcome,
  type RequestOutcome,
} from "../control/outcome.ts";
import { parseSnapshot, type Snapshot } from "../control/snapshot.ts";
import type { EventsOptions } from "../control/subscribe.ts";
import type {
  FollowLogOptions,
  RequestDraft,
  Transport,
} from "../control/transport.ts";
import type {
  AmendmentChange,
  AmendmentOptions,
  AmendTarget,
  ContractTransport,
  ContractView,
} from "../contract/contract_transport.ts";
import {
  errorText,
  NotFoundError,
  StateError,
  UsageError,
} from "../shared/errors.ts";
import type { FleetLink } from "./_link.ts";
import {
  fleetEventBytes,
  fleetEventLines,
  fleetEventText,
  fleetLog,
  type FleetRunState,
  type FollowContext,
} from "./_fleet_follow.ts";
import { findRequest, scanRuns } from "./_fleet_scan.ts";
import {
  type ContractContext,
  fleetContract,
  recordFleetAmendment,
} from "./_fleet_contracts.ts";
import { patiently } from "./_patience.ts";
import {
  eventsSubject,
  FLEET_PREFIX,
  logSubject,
  requestSubject,
  RUNS_BUCKET,
} from "./fleet_names.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A `running` run last heard from longer ago than this is unreachable. */
export const STALE_MS = 10_000;

/** Options for a {@linkcode FleetTransport}. */
export interface FleetTransportOptions {
  /** The fleet's address as messages show it. */
  shown: string;
  /** When a silent running run reads as unreachable (default 10 s). */
  staleMs?: number;
  /** How long an amendment may wait to be recorded (default 30 s). */
  amendTimeoutMs?: number;
}

/** A fleet address's parts. */
function parseAddress(address: string): { home: string; runId: string | null } {
  const parts = address.startsWith(FLEET_PREFIX)
    ? address.slice(FLEET_PREFIX.length).split("/")
    : [];
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === "")) {
    throw new UsageError(
      `Not a fleet address: ${JSON.stringify(address)}`,
      { code: "BAD_FLEET_ADDRESS" },
    );
  }
  return {
    home: `${parts[0]}.${parts[1]}`,
    runId: parts.length === 3 ? parts[2]! : null,
  };
}

/** The key of the run a reference names. */
export function keyOfRef(ref: RunRef): string {
  const { home } = parseAddress(ref.state_root);
  return `${home}.${ref.run_id}`;
}

/** The fleet transport (see the module's description). */
export class FleetTransport implements Transport, ContractTransport {
  readonly name = "fleet";
  readonly #link: FleetLink;
  readonly #staleMs: number;
  readonly #amendTimeoutMs: number;
  readonly #shown: string;
  readonly #sent = new Set<string>();

  /**
   * A transport over an open fleet connection (`openFleetClient` makes
   * one; its `transport` is this).
   */
  constructor(link: FleetLink, options: FleetTransportOptions) {
    this.#link = link;
    this.#shown = options.shown;
    this.#staleMs = options.staleMs ?? STALE_MS;
    this.#amendTimeoutMs = options.amendTimeoutMs ?? 30_000;
  }

  /** A run's snapshot and when the fleet last heard of it, or `null`. */
  async entry(
    key: string,
  ): Promise<{ snapshot: Snapshot; time: number } | null> {
    const entry = await this.#link.kvGet(RUNS_BUCKET, key);
    if (entry === null) return null;
    return {
      snapshot: parseSnapshot(
        decoder.decode(entry.value),
        `of fleet run ${key}`,
      ),
      time: entry.time,
    };
  }

  /** How a run stands: its status, `unreachable`, or `none`. */
  async runState(key: string): Promise<FleetRunState> {
    const entry = await this.entry(key);
    if (entry === null) return { state: "none", detail: "", lastSeq: 0 };
    const lastSeq = entry.snapshot.last_seq;
    const silent = Date.now() - entry.time;
    if (entry.snapshot.status === "running" && silent > this.#staleMs) {
      return {
        state: "unreachable",
        detail: `the fleet has not heard from it for ${
          Math.round(silent / 1000)
        } s`,
        lastSeq,
      };
    }
    return { state: entry.snapshot.status, detail: "", lastSeq };
  }

  #context(ref: RunRef): FollowContext {
    const key = keyOfRef(ref);
    return { link: this.#link, key, runState: () => this.runState(key) };
  }

  async readSnapshot(address: string): Promise<Snapshot | null> {
    const { home, runId } = parseAddress(address);
    if (runId !== null) {
      return (await this.entry(`${home}.${runId}`))?.snapshot ?? null;
    }
    const runs = await scanRuns(this.#link, `${home}.>`);
    const newest = runs.sort((a, b) =>
      a.snapshot.run_started_at.localeCompare(b.snapshot.run_started_at) ||
      a.time - b.time
    ).at(-1);
    return newest?.snapshot ?? null;
  }

  eventLineBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncIterable<EventLine[]> {
    const context = this.#context(ref);
    return fleetEventLines(context, ref, eventsSubject(context.key), options);
  }

  eventTextBatches(ref: RunRef, options: EventsOptions): AsyncIterable<string> {
    const context = this.#context(ref);
    return fleetEventText(context, ref, eventsSubject(context.key), options);
  }

  eventByteBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncIterable<Uint8Array> {
    const context = this.#context(ref);
    return fleetEventBytes(context, ref, eventsSubject(context.key), options);
  }

  async log(ref: RunRef): Promise<LogEntry[]> {
    const context = this.#context(ref);
    const entries: LogEntry[] = [];
    for await (
      const entry of fleetLog(context, ref, logSubject(context.key), {
        follow: false,
      })
    ) {
      if (entry.run_id === ref.run_id) entries.push(entry);
    }
    return entries;
  }

  async *followLog(
    ref: RunRef,
    options: FollowLogOptions,
  ): AsyncIterable<LogEntry> {
    const context = this.#context(ref);
    for await (
      const entry of fleetLog(context, ref, logSubject(context.key), {
        follow: true,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      })
    ) {
      if (entry.run_id === ref.run_id) yield entry;
    }
  }

  /** Refuses a request to a run that is not running (as files do). */
  async #requireRunning(ref: RunRef, key: string): Promise<void> {
    const now = await this.runState(key);
    if (now.state === "none") {
      throw new NotFoundError(
        `No fleet run ${ref.run_id} in ${ref.state_root}`,
        { code: "RUN_NOT_FOUND" },
      );
    }
    if (now.state === "unreachable") {
      throw new StateError(`Run ${ref.run_id} is not running: ${now.detail}`, {
        code: "RUN_GONE",
        hint:
          "Resume it on its machine with 'prompt_runner run PACKET --resume'",
      });
    }
    if (now.state !== "running") {
      throw new StateError(`Run ${ref.run_id} is ${now.state}, not running`, {
        code: "RUN_NOT_RUNNING",
        hint: now.state === "interrupted"
          ? "Requests only reach a live run; continue this one with 'prompt_runner run PACKET --resume'"
          : "Requests only reach a live run; start one with 'prompt_runner run'",
      });
    }
  }

  /** Publishes a request to the run's work queue; durable once acknowledged. */
  async #publish(
    ref: RunRef,
    key: string,
    draft: RequestDraft,
  ): Promise<SentRequest> {
    const { command, params, ...options } = draft;
    const { request, text } = await newRequest(ref, command, params, options);
    let answer;
    try {
      // Sent again while the fleet elects a leader: its id keeps it once.
      answer = await patiently(
        () =>
          this.#link.request(requestSubject(key), encoder.encode(text), {
            timeoutMs: 5_000,
            headers: { "Nats-Msg-Id": request.id },
          }),
        { patienceMs: 20_000, shown: this.#shown, what: "taking a request" },
      );
    } catch (error) {
      if (error instanceof StateError) throw error;
      throw new StateError(
        `The fleet at ${this.#shown} did not take the request: ${
          errorText(error)
        }`,
        {
          code: "FLEET_REFUSED",
          hint:
            "A user that may only watch the fleet cannot steer it: ask for one that may publish pr.req.>",
          cause: error,
        },
      );
    }
    const ack = answer.status === 0
      ? JSON.parse(decoder.decode(answer.data))
      : { error: { description: `${answer.status} ${answer.description}` } };
    if (ack.error !== undefined) {
      throw new StateError(
        `The fleet at ${this.#shown} did not take the request: ${
          ack.error.description ?? "refused"
        }`,
        { code: "FLEET_REFUSED" },
      );
    }
    this.#sent.add(request.id);
    return { request_id: request.id, run_id: ref.run_id };
  }

  async submit(ref: RunRef, draft: RequestDraft): Promise<SentRequest> {
    const key = keyOfRef(ref);
    await this.#requireRunning(ref, key);
    return await this.#publish(ref, key, draft);
  }

  async requestOutcome(
    ref: RunRef,
    requestId: string,
  ): Promise<RequestOutcome> {
    const logged = loggedOutcome(await this.log(ref), requestId);
    if (logged !== null) return logged;
    if (
      this.#sent.has(requestId) ||
      await findRequest(this.#link, requestSubject(keyOfRef(ref)), requestId)
    ) {
      return pendingOutcome(requestId);
    }
    throw new NotFoundError(
      `No request ${
        JSON.stringify(requestId)
      } for run ${ref.run_id} in the fleet`,
      { code: "REQUEST_NOT_FOUND" },
    );
  }

  /** The run a contract target names: its address's run, else its home's newest. */
  async #runOf(target: AmendTarget): Promise<RunRef> {
    if (typeof target === "string" || !("transport" in target)) {
      throw new UsageError("A fleet contract needs a fleet address", {
        code: "BAD_FLEET_ADDRESS",
      });
    }
    const { runId } = parseAddress(target.state_root);
    const snapshot = await this.readSnapshot(target.state_root);
    if (snapshot === null || (runId !== null && snapshot.run_id !== runId)) {
      throw new NotFoundError(`No fleet run at ${target.state_root}`, {
        code: "RUN_NOT_FOUND",
      });
    }
    return { state_root: target.state_root, run_id: snapshot.run_id };
  }

  /** The parts of this transport its contract calls use. */
  #contracts(): ContractContext {
    return {
      link: this.#link,
      amendTimeoutMs: this.#amendTimeoutMs,
      runOf: (target) => this.#runOf(target),
      packetOf: async (key) => (await this.entry(key))?.snapshot.packet ?? "",
      publish: (ref, draft) => this.#publish(ref, keyOfRef(ref), draft),
      follow: (ref) => this.#context(ref),
    };
  }

  contract(target: AmendTarget, promptId: string): Promise<ContractView> {
    return fleetContract(this.#contracts(), target, promptId);
  }

  recordAmendment(
    target: AmendTarget,
    promptId: string,
    change: AmendmentChange,
    options: AmendmentOptions,
  ): Promise<AmendmentRecord> {
    return recordFleetAmendment(
      this.#contracts(),
      target,
      promptId,
      change,
      options,
    );
  }
}
