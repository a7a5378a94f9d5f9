/**
 * A transport that keeps its runs in memory: the second implementation of
 * the client API's `Transport`, driven by a test as a runner would drive a
 * state root (open a run, record events, decide requests, finish or die).
 * It answers as the file transport does, so the same client-contract tests
 * pass against both.
 *
 * @module
 */

import type { EventLine } from "../../lib/control/_event_text.ts";
import {
  type AmendmentRecord,
  type ContractData,
  replayAmendments,
} from "../../lib/control/amendment_log.ts";
import type { LogEntry } from "../../lib/control/log_entry.ts";
import type { RunRef } from "../../lib/control/paths.ts";
import {
  pendingOutcome,
  type RequestOutcome,
} from "../../lib/control/outcome.ts";
import {
  type ControlRequest,
  newRequest,
  type SentRequest,
} from "../../lib/control/request.ts";
import { type Snapshot, snapshotOfRun } from "../../lib/control/snapshot.ts";
import type { EventsOptions } from "../../lib/control/subscribe.ts";
import type {
  FollowLogOptions,
  RequestDraft,
  Transport,
} from "../../lib/control/transport.ts";
import {
  NotFoundError,
  RunLostError,
  StateError,
} from "../../lib/shared/errors.ts";
import type { RunEvent, RunStatus } from "../../lib/shared/events.ts";
import { checkPromptId } from "../../lib/shared/prompt_id.ts";
import { contractViewOf } from "../../lib/contract/contract_diff.ts";
import type {
  AmendmentChange,
  AmendmentOptions,
  AmendTarget,
  ContractTransport,
  ContractView,
} from "../../lib/contract/contract_transport.ts";
import type { Clause, Contract } from "../../lib/packet/contract.ts";
import { checkEntries } from "../../lib/contract/file_contracts.ts";
import { defaultAuthor } from "../../lib/control/request.ts";

/** One run kept in memory. */
interface MemoryRun {
  snapshot: Snapshot;
  lines: EventLine[];
  gone: boolean;
  pending: ControlRequest[];
  outcomes: Map<string, RequestOutcome>;
}

/** One address (a state root's stand-in) and its runs, newest last. */
interface MemoryHome {
  runs: Map<string, MemoryRun>;
  current: string | null;
  log: LogEntry[];
  /** The packet's contract of each prompt. */
  contracts: Map<string, Contract>;
  /** The amendments of each prompt, oldest first. */
  amendments: Map<string, AmendmentRecord[]>;
}

/** Wakes every waiter at once; a new wait waits for the next change. */
class Changes {
  #wake: () => void = () => {};
  #next: Promise<void> = this.#renew();

  #renew(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
  }

  changed(): void {
    const wake = this.#wake;
    this.#next = this.#renew();
    wake();
  }

  /** Resolves at the next change, or when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    if (signal === undefined) return this.#next;
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done);
      this.#next.then(done);
    });
  }
}

/** The in-memory transport, and the runner's side of it for tests. */
export class MemoryTransport implements Transport, ContractTransport {
  readonly name = "memory";
  readonly #homes = new Map<string, MemoryHome>();
  readonly #changes = new Changes();

  #home(address: string): MemoryHome {
    let home = this.#homes.get(address);
    if (home === undefined) {
      home = {
        runs: new Map(),
        current: null,
        log: [],
        contracts: new Map(),
        amendments: new Map(),
      };
      this.#homes.set(address, home);
    }
    return home;
  }

  #run(address: string, runId: string): MemoryRun {
    const run = this.#home(address).runs.get(runId);
    if (run === undefined) throw new Error(`no run ${runId} at ${address}`);
    return run;
  }

  // The runner's side.

  /** A run opens at `address` and becomes its current run. */
  open(address: string, snapshot: Snapshot): void {
    const home = this.#home(address);
    home.runs.set(snapshot.run_id, {
      snapshot: { ...snapshot, status: "running" },
      lines: [],
      gone: false,
      pending: [],
      outcomes: new Map(),
    });
    home.current = snapshot.run_id;
    this.#changes.changed();
  }

  /** The run records an event, stored as its JSON line. */
  observe(address: string, event: RunEvent): void {
    const run = this.#run(address, event.run_id);
    run.lines.push({ line: JSON.stringify(event), event });
    run.snapshot = { ...run.snapshot, last_seq: event.seq };
    this.#changes.changed();
  }

  /** The runner decides every pending request: each is applied. */
  decide(address: string, runId: string): void {
    const run = this.#run(address, runId);
    for (const request of run.pending.splice(0)) {
      const at = new Date().toISOString();
      this.#home(address).log.push({
        v: 1,
        at,
        run_id: runId,
        request_id: request.id,
        command: request.command,
        params: request.params,
        author: request.author,
        outcome: "applied",
        reason: null,
        prompt_id: request.prompt_id ?? null,
        attempt: null,
      } as LogEntry);
      run.outcomes.set(request.id, {
        request_id: request.id,
        command: request.command,
        outcome: "applied",
        final: true,
        reason: null,
        at,
      });
    }
    this.#changes.changed();
  }

  /** The run ends with `status`. */
  close(address: string, runId: string, status: RunStatus): void {
    const run = this.#run(address, runId);
    run.snapshot = { ...run.snapshot, status };
    this.#changes.changed();
  }

  /** The runner dies: the run stays `running`, nobody is there. */
  die(address: string, runId: string): void {
    this.#run(address, runId).gone = true;
    this.#changes.changed();
  }

  /** The packet at `address` has prompt `promptId` with this contract. */
  prompt(address: string, promptId: string, contract: Contract): void {
    this.#home(address).contracts.set(promptId, contract);
  }

  // The client's side: the Transport.

  readSnapshot(address: string): Promise<Snapshot | null> {
    const home = this.#home(address);
    const run = home.current === null ? undefined : home.runs.get(home.current);
    return Promise.resolve(run === undefined ? null : { ...run.snapshot });
  }

  async *eventLineBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncGenerator<EventLine[]> {
    const home = this.#home(ref.state_root);
    if (home.current === null) {
      throw new NotFoundError(
        `No run recorded in state root "${ref.state_root}"`,
        { code: "RUN_NOT_FOUND" },
      );
    }
    const run = home.runs.get(ref.run_id);
    if (run === undefined) {
      throw new NotFoundError(
        `Run ${ref.run_id} has no events in "${ref.state_root}"`,
        { code: "RUN_NOT_FOUND" },
      );
    }
    const from = options.from ?? "start";
    const live = home.current === ref.run_id;
    if (from === "current" && live && run.snapshot.status !== "running") {
      return;
    }
    let next = from === "current" ? run.lines.length : 0;
    const minSeq = typeof from === "number" ? from : 1;
    let lastSeq = 0;
    for (;;) {
      const batch: EventLine[] = [];
      let finished = false;
      while (next < run.lines.length && !finished) {
        const line = run.lines[next++]!;
        if (line.event.seq <= lastSeq || line.event.seq < minSeq) continue;
        lastSeq = line.event.seq;
        batch.push(line);
        finished = line.event.type === "run_finished" &&
          !(line.event.data.status === "interrupted" &&
            next < run.lines.length);
      }
      if (batch.length > 0) yield batch;
      if (finished) return;
      if (next < run.lines.length) continue;
      if (options.signal?.aborted) return;
      const changed = this.#changes.wait(options.signal);
      if (home.current !== ref.run_id) {
        throw new RunLostError(
          `Run ${ref.run_id} was superseded by run ${home.current} before it finished`,
        );
      }
      if (run.gone) {
        throw new RunLostError(
          `The runner of run ${ref.run_id} (pid ${run.snapshot.pid}) is gone: it stopped without finishing the run`,
        );
      }
      if (run.snapshot.status !== "running") {
        throw new RunLostError(
          `Run ${ref.run_id} ended (${run.snapshot.status}) without run_finished`,
        );
      }
      await changed;
    }
  }

  async *eventTextBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncGenerator<string> {
    for await (const batch of this.eventLineBatches(ref, options)) {
      yield batch.map(({ line }) => line + "\n").join("");
    }
  }

  async *eventByteBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncGenerator<Uint8Array> {
    const encoder = new TextEncoder();
    for await (const text of this.eventTextBatches(ref, options)) {
      yield encoder.encode(text);
    }
  }

  log(ref: RunRef): Promise<LogEntry[]> {
    return Promise.resolve(
      this.#home(ref.state_root).log.filter((entry) =>
        entry.run_id === ref.run_id
      ),
    );
  }

  async *followLog(
    ref: RunRef,
    options: FollowLogOptions,
  ): AsyncGenerator<LogEntry> {
    const home = this.#home(ref.state_root);
    let next = 0;
    for (;;) {
      const changed = this.#changes.wait(options.signal);
      const ended = this.#ended(home, ref);
      while (next < home.log.length) {
        const entry = home.log[next++]!;
        if (entry.run_id === ref.run_id) yield entry;
      }
      if (options.signal?.aborted) return;
      if (ended instanceof Error) throw ended;
      if (ended) return;
      await changed;
    }
  }

  /** Whether a followed run is over (`true`), lost (an error), or lives. */
  #ended(home: MemoryHome, ref: RunRef): boolean | RunLostError {
    const run = home.runs.get(ref.run_id);
    if (run === undefined || home.current !== ref.run_id) return true;
    if (run.gone) {
      return new RunLostError(
        `The runner of run ${ref.run_id} (pid ${run.snapshot.pid}) is gone: it stopped without finishing the run`,
      );
    }
    return run.snapshot.status !== "running";
  }

  async submit(ref: RunRef, draft: RequestDraft): Promise<SentRequest> {
    const current = snapshotOfRun(await this.readSnapshot(ref.state_root), ref);
    if (current.status !== "running") {
      throw new StateError(
        `Run ${ref.run_id} is ${current.status}, not running`,
        { code: "RUN_NOT_RUNNING" },
      );
    }
    const run = this.#run(ref.state_root, ref.run_id);
    if (run.gone) {
      throw new StateError(
        `Run ${ref.run_id} is not running: its runner (pid ${current.pid}) is gone`,
        { code: "RUN_GONE" },
      );
    }
    const { command, params, ...options } = draft;
    const { request } = await newRequest(ref, command, params, options);
    run.pending.push(request);
    this.#changes.changed();
    return { request_id: request.id, run_id: ref.run_id };
  }

  requestOutcome(ref: RunRef, requestId: string): Promise<RequestOutcome> {
    const run = this.#home(ref.state_root).runs.get(ref.run_id);
    const decided = run?.outcomes.get(requestId);
    if (decided !== undefined) return Promise.resolve({ ...decided });
    if (run?.pending.some((request) => request.id === requestId)) {
      return Promise.resolve(pendingOutcome(requestId));
    }
    return Promise.reject(
      new NotFoundError(
        `No request ${
          JSON.stringify(requestId)
        } in state root "${ref.state_root}"`,
        { code: "REQUEST_NOT_FOUND" },
      ),
    );
  }

  // The client's side: the ContractTransport.

  /** The address and prompt a contract call is about. */
  #prompt(
    target: AmendTarget,
    promptId: string,
  ): { home: MemoryHome; id: string; packet: Contract } {
    const address = typeof target === "string" ? target : target.state_root;
    if (address === undefined) throw new Error("no address in the target");
    const home = this.#home(address);
    const id = checkPromptId(promptId);
    const packet = home.contracts.get(id);
    if (packet === undefined) {
      throw new NotFoundError(
        `Unknown prompt id "${id}" in packet "${address}": the packet has ${
          [...home.contracts.keys()].join(", ")
        }`,
        { code: "PROMPT_NOT_FOUND" },
      );
    }
    return { home, id, packet };
  }

  async recordAmendment(
    target: AmendTarget,
    promptId: string,
    change: AmendmentChange,
    options: AmendmentOptions,
  ): Promise<AmendmentRecord> {
    const { home, id } = this.#prompt(target, promptId);
    const entries = change.operation === "drop"
      ? []
      : checkEntries(change.clause as Clause, change.entries, []);
    const record: AmendmentRecord = {
      at: new Date().toISOString(),
      prompt: id,
      author: await defaultAuthor(options.author),
      reason: change.reason,
      phase: "pre_verify",
      direction: change.direction,
      clause: change.clause,
      operation: change.operation,
      entries,
      run_id: home.current,
      persisted: false,
    };
    home.amendments.set(id, [...(home.amendments.get(id) ?? []), record]);
    return record;
  }

  contract(target: AmendTarget, promptId: string): Promise<ContractView> {
    const { home, id, packet } = this.#prompt(target, promptId);
    const records = home.amendments.get(id) ?? [];
    const enforced = replayAmendments(packet as ContractData, records);
    return Promise.resolve(
      contractViewOf(id, packet, enforced as Contract, [...records]),
    );
  }
}
