/**
 * The request inbox: learns of request files from a cheap probe of
 * `requests/` (its mtime) backed by a slow sweep, instead of
 * listing the directory at every boundary; decides each in name order, and makes the decision durable in a
 * fixed order — receipt, log entry, removal — before it is applied. It
 * finishes what a killed runner left half done, and removes the temporary
 * files it left.
 *
 * @module
 */

import type { RunStatus } from "../shared/events.ts";
import { removeStaleTemps } from "../shared/files.ts";
import type { BoundaryCommand } from "../shared/run_hooks.ts";
import { errorKind, type PlaneContext } from "./_plane_context.ts";
import { decideRequest, loggable } from "./decide_request.ts";
import { runEndedReason } from "./_run_end_reason.ts";
import { requestIdOf } from "./paths.ts";
import { publishReceipt, readReceipt, type Receipt } from "./receipt.ts";
import {
  pendingRequestNames,
  readRequestFile,
  readRequestQuietly,
  removeRequestFile,
} from "./_request_files.ts";
import type { SteerLedger } from "./steer_ledger.ts";
import type { LogEntry, Outcome } from "./log_entry.ts";
import { errorText } from "../shared/errors.ts";
import { isRecord } from "../shared/is_record.ts";

/**
 * How much request work one boundary may do while events flow, and while
 * they do not: a flood of requests never starves the agent's stream, and
 * the backlog still drains in order.
 */
const BUSY_BUDGET = { count: 8, ms: 20 };
const IDLE_BUDGET = { count: 200, ms: 250 };

/** However quiet `requests/` looks, it is listed this often. */
export const SWEEP_MS = 500;
/** How often a busy boundary looks at `requests/` at most, in milliseconds. */
const PROBE_MS = 1;

/** A directory changed this close to its listing is listed again (coarse file times). */
const SETTLE_MS = 20;

/** Dot-files in `requests/` untouched this long are a killed client's leftovers. */
const STALE_CLIENT_FILE_MS = 10 * 60 * 1000;

/** The pending requests of a run, and their processing. */
export class RequestInbox {
  readonly #ctx: PlaneContext;
  readonly #ledger: SteerLedger;
  readonly #maxSteers: () => number;
  /** Request files decided and not yet removed (a failed removal is retried, never re-applied). */
  #handled = new Set<string>();
  /** Request files listed and not yet processed, in order. */
  #queue: string[] = [];
  /** A backlog is left: list again once it is done. */
  #woken = true;
  #lastSweep = 0;
  #lastProbe = -Infinity;
  /** The mtime of `requests/` when it was last listed, and when that was (wall clock). */
  #listedMtime: number | null = null;
  #listedAt = 0;
  /** Steers this process logged accepted and no lane has settled yet, by request id. */
  readonly openSteers = new Map<string, Omit<LogEntry, "v" | "at">>();
  /** How many requests this process decided. */
  decided = 0;

  constructor(
    ctx: PlaneContext,
    ledger: SteerLedger,
    maxSteers: () => number,
  ) {
    this.#ctx = ctx;
    this.#ledger = ledger;
    this.#maxSteers = maxSteers;
  }

  /** Removes the dot-temp files a killed runner (or client) left behind. */
  async cleanTemps(): Promise<void> {
    const ctx = this.#ctx;
    const paths = ctx.paths;
    try {
      // Only this runner (it holds the run lock) writes these now; a client
      // settling a late receipt writes its temp file again if it vanishes.
      for (const dir of [paths.dir, paths.outcomes, paths.archive]) {
        await removeStaleTemps(dir, ctx.within);
      }
      await removeStaleTemps(paths.requests, {
        ...ctx.within,
        olderThanMs: STALE_CLIENT_FILE_MS,
      });
    } catch (error) {
      await ctx.warn(
        "temps",
        `cannot remove leftover temporary files: ${errorText(error)}`,
      );
    }
  }

  /** The request files waiting in `requests/`, in name order. */
  async pendingNames(): Promise<string[]> {
    const ctx = this.#ctx;
    return await ctx.guard(async () => {
      await Promise.resolve();
      return pendingRequestNames(ctx.paths);
    }, ctx.paths.requests);
  }

  /**
   * Requests an earlier process decided (a runner receipt exists) but did
   * not finish, with their receipts.
   */
  async decidedLeftovers(): Promise<Map<string, Receipt>> {
    const found = new Map<string, Receipt>();
    for (const name of await this.pendingNames()) {
      const receipt = await readReceipt(this.#ctx.paths, name);
      if (receipt !== null && receipt.decided_by !== "client") {
        found.set(name, receipt);
      }
    }
    return found;
  }

  /**
   * Finishes a request an earlier process decided: the receipt exists, so
   * the decision stands; the log entry is written if `logged` lacks it, and
   * the request file is removed. Nothing is applied again.
   *
   * @returns The log entry written, if one was.
   */
  async finishDecided(
    name: string,
    receipt: Receipt,
    logged: ReadonlySet<Outcome> | undefined,
  ): Promise<Omit<LogEntry, "v" | "at"> | null> {
    let entry: Omit<LogEntry, "v" | "at"> | null = null;
    if (!logged?.has(receipt.outcome)) {
      const request = await readRequestQuietly(this.#ctx.paths, name);
      entry = {
        run_id: receipt.run_id,
        request_id: receipt.request_id,
        command: receipt.command,
        params: isRecord(request?.params)
          ? loggable(request.params, name)
          : { file: name },
        author: typeof request?.author === "string" ? request.author : null,
        outcome: receipt.outcome,
        reason: receipt.reason,
        prompt_id: typeof request?.prompt_id === "string"
          ? request.prompt_id
          : null,
        attempt: null,
      };
      await this.#ctx.appendLog(entry);
    }
    this.#handled.add(name);
    await this.#remove(name);
    return entry;
  }

  async #remove(name: string): Promise<void> {
    try {
      await Promise.resolve();
      removeRequestFile(this.#ctx.paths, name);
      this.#handled.delete(name);
    } catch (error) {
      await this.#ctx.warn(
        `delete:${errorKind(error)}`,
        `cannot remove request "${name}" from "${this.#ctx.paths.requests}": ${
          errorText(error)
        }`,
      );
    }
  }

  /**
   * Decides one request and makes the decision durable: receipt, log
   * entry, removal. With `ended`, the run is over and nothing is applied.
   *
   * @returns The command to apply, if any.
   */
  async process(
    name: string,
    ended: RunStatus | null,
  ): Promise<BoundaryCommand | null> {
    const ctx = this.#ctx;
    if (this.#handled.has(name)) {
      await this.#remove(name);
      return null;
    }
    const existing = await ctx.guard(() => readReceipt(ctx.paths, name));
    if (existing !== null) {
      if (existing.decided_by === "client") {
        // Its client claimed it back as the run ended, and logs it itself.
        return null;
      }
      // Decided by an earlier process of the runner that died before finishing.
      await this.finishDecided(name, existing, undefined);
      return null;
    }
    const read = await ctx.guard(() => readRequestFile(ctx.paths, name));
    if (read === null) return null;
    const promptInFlight = ctx.promptInFlight;
    let verdict = decideRequest(name, read, {
      run_id: ctx.runId,
      promptInFlight,
      delivered: promptInFlight === null
        ? 0
        : this.#ledger.count(promptInFlight),
      pending: promptInFlight === null
        ? 0
        : this.#ledger.pending(promptInFlight),
      max_steers: this.#maxSteers(),
    });
    if (ended !== null && verdict.outcome !== "rejected") {
      verdict = {
        ...verdict,
        outcome: "rejected",
        reason: runEndedReason(ended),
        apply: null,
      };
    }
    ctx.fault?.("request_decided");
    const id = requestIdOf(name);
    const receipt: Receipt = {
      request_id: id,
      run_id: ctx.runId,
      command: verdict.command,
      outcome: verdict.outcome,
      reason: verdict.reason,
      recorded_at: new Date().toISOString(),
    };
    if (
      !(await ctx.guard(
        () => publishReceipt(ctx.paths, name, receipt),
        ctx.paths.outcomes,
      ))
    ) {
      // A client settled it first (the run was ending): it logs it too.
      return null;
    }
    ctx.fault?.("receipt_written");
    const entry = {
      run_id: ctx.runId,
      request_id: id,
      command: verdict.command,
      params: verdict.params,
      author: verdict.author,
      outcome: verdict.outcome,
      reason: verdict.reason,
      prompt_id: verdict.prompt_id,
      attempt: ctx.attempt,
    };
    await ctx.appendLog(entry);
    if (verdict.apply?.command === "steer") this.openSteers.set(id, entry);
    ctx.fault?.("log_written");
    this.#handled.add(name);
    this.decided++;
    await this.#remove(name);
    ctx.fault?.("request_deleted");
    if (verdict.apply?.command === "steer") {
      this.#ledger.accept(verdict.apply.prompt_id);
    }
    return verdict.apply;
  }

  /**
   * Whether `requests/` must be listed now to find what waits there. A
   * request present when a boundary starts is always seen by it: the
   * directory's mtime (one `lstat`) changes with every entry added or
   * removed; a change within {@linkcode SETTLE_MS} of the last listing
   * (file times are coarse) keeps it listing, and the sweep covers what
   * the probe cannot see (the directory replaced, its times reset).
   *
   * Not `Deno.watchFs`: measured on Deno 2.9.6, a named pipe created in a
   * watched directory wedges the watcher (no events, and its close never
   * lets the process exit), and anyone who can write `requests/` can make
   * one; nor could a watch's news, which lags, promise that a request
   * present at a boundary is seen by it.
   */
  #mustList(idle: boolean): boolean {
    if (idle || this.#woken || this.#listedMtime === null) return true;
    const now = performance.now();
    // While events flow faster than one a millisecond, look once a millisecond.
    if (now - this.#lastProbe < PROBE_MS) return false;
    this.#lastProbe = now;
    if (now - this.#lastSweep >= SWEEP_MS) return true;
    const mtime = this.#mtime();
    return mtime === null || mtime !== this.#listedMtime ||
      mtime >= this.#listedAt - SETTLE_MS;
  }

  /** The mtime of `requests/` in ms, or `null` (a hint only: never followed). */
  #mtime(): number | null {
    try {
      return Deno.lstatSync(this.#ctx.paths.requests).mtime?.getTime() ?? null;
    } catch {
      return null;
    }
  }

  /**
   * Consumes pending requests, in order, within the boundary's budget;
   * returns the commands to apply.
   */
  async consume(idle: boolean): Promise<BoundaryCommand[]> {
    const commands: BoundaryCommand[] = [];
    if (this.#queue.length === 0) {
      if (!this.#mustList(idle)) return commands;
      this.#woken = false;
      this.#lastSweep = performance.now();
      this.#listedAt = Date.now();
      this.#listedMtime = this.#mtime();
      try {
        this.#queue = await this.pendingNames();
      } catch (error) {
        this.#listedMtime = null;
        await this.#ctx.warn(
          `list:${errorKind(error)}`,
          `cannot list requests: ${errorText(error)}`,
        );
        return commands;
      }
    }
    const budget = idle ? IDLE_BUDGET : BUSY_BUDGET;
    const started = performance.now();
    let done = 0;
    while (this.#queue.length > 0) {
      if (
        done > 0 &&
        (done >= budget.count || performance.now() - started >= budget.ms)
      ) break;
      const name = this.#queue[0]!;
      try {
        const command = await this.process(name, null);
        if (command) commands.push(command);
      } catch (error) {
        // The request stays first in line and is tried at the next boundary.
        await this.#ctx.warn(
          `consume:${errorKind(error)}`,
          `cannot process request ${JSON.stringify(name)}: ${errorText(error)}`,
        );
        break;
      }
      this.#queue.shift();
      done++;
    }
    // A backlog left for the next boundary keeps it listing when it is done.
    if (this.#queue.length > 0) this.#woken = true;
    return commands;
  }

  /**
   * The run ended: every request still waiting is refused with a reason.
   * One that cannot be settled stays for the next run (or `--resume`).
   */
  async settleAll(status: RunStatus): Promise<void> {
    const ctx = this.#ctx;
    let names: string[] = [];
    try {
      names = await this.pendingNames();
    } catch (error) {
      await ctx.warn(
        `close:${errorKind(error)}`,
        `cannot settle late requests: ${errorText(error)}`,
      );
    }
    for (const name of names) {
      try {
        await this.process(name, status);
      } catch (error) {
        await ctx.warn(
          `close:${errorKind(error)}`,
          `cannot settle late request ${JSON.stringify(name)}: ${
            errorText(error)
          }`,
        );
      }
    }
  }
}
