/**
 * Waiting for a request's final outcome: the run's audit log followed
 * through its transport (never touching the run) until the request's final
 * entry comes, the run ends, or a time limit passes.
 *
 * @module
 */

import { NotFoundError, RunLostError, UsageError } from "../shared/errors.ts";
import { readRunLock } from "../shared/run_lock.ts";
import { isRunEndReason } from "./_run_end_reason.ts";
import { transportOf } from "./_transport_of.ts";
import { fileTransport } from "./file_transport.ts";
import type { LogEntry } from "./log_entry.ts";
import type { RunRef } from "./paths.ts";
import type { Transport } from "./transport.ts";

/** Options for {@linkcode waitForOutcome}. */
export interface WaitOptions {
  /** Give up after this many milliseconds (`timed_out`); none: wait until the outcome is final or the run ends. */
  timeoutMs?: number;
  /** Aborting it ends the wait by throwing the signal's reason. */
  signal?: AbortSignal;
}

/** How a wait for a request's outcome ended. */
export interface WaitResult {
  /**
   * `applied` or `rejected`: the request's final outcome. `run_ended`: the
   * run ended, or its runner died, before the request was applied (a
   * rejection because the run ended counts here, not as `rejected`).
   * `timed_out`: the time limit passed first.
   */
  outcome: "applied" | "rejected" | "run_ended" | "timed_out";
  /**
   * The request's last log entry: its final one for `applied` and
   * `rejected` (and for `run_ended` when the run refused it as it ended),
   * else the latest seen (a steer's `accepted`), or `null` when none was
   * written yet.
   */
  entry: LogEntry | null;
  /**
   * Why it was not applied: the rejection's reason, how the run ended, or
   * the outcome it still had when the time passed (`pending`, `accepted`);
   * `null` when applied.
   */
  reason: string | null;
}

/** After a run's end, how long a transport gets to show the entries written as it closed. */
const SETTLE_MS = { file: 10_000, other: 2_000 };
const SETTLE_POLL_MS = 100;

function isFinal(entry: LogEntry): boolean {
  return entry.outcome === "applied" || entry.outcome === "rejected";
}

/** The result a final entry gives. */
function finalResult(entry: LogEntry): WaitResult {
  if (entry.outcome === "applied") {
    return { outcome: "applied", entry, reason: null };
  }
  return {
    outcome: isRunEndReason(entry.reason) ? "run_ended" : "rejected",
    entry,
    reason: entry.reason ?? "it was refused",
  };
}

/** The request's final entry in `entries`, else its latest, else `null`. */
function entryOf(entries: LogEntry[], requestId: string): LogEntry | null {
  const mine = entries.filter((entry) => entry.request_id === requestId);
  return mine.findLast(isFinal) ?? mine.at(-1) ?? null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Whether the runner of `ref` still holds its state root's lock (closing the run). */
async function runnerHolds(ref: RunRef): Promise<boolean> {
  const lock = await readRunLock(ref.state_root).catch(() => null);
  return lock !== null && lock.alive && lock.info?.run_id === ref.run_id;
}

/**
 * The request's entry once its run has ended. A runner publishes its final
 * status before it settles what is left (requests still waiting, steers no
 * lane settled), so those entries may follow the end a moment later: on
 * files they are awaited while the runner still holds its lock; another
 * transport gets a short while to show them. A runner that died writes
 * nothing more (`settle` false): one look.
 */
async function entryAfterEnd(
  transport: Transport,
  ref: RunRef,
  requestId: string,
  options: { signal: AbortSignal; settle: boolean },
): Promise<LogEntry | null> {
  const { signal, settle } = options;
  const files = transport === fileTransport;
  const until = !settle
    ? 0
    : Date.now() + (files ? SETTLE_MS.file : SETTLE_MS.other);
  for (;;) {
    const holds = files && await runnerHolds(ref);
    const entry = entryOf(await transport.log(ref), requestId);
    if (entry !== null && isFinal(entry)) return entry;
    if ((files && !holds) || Date.now() >= until || signal.aborted) {
      return entry;
    }
    await sleep(SETTLE_POLL_MS, signal);
  }
}

/** How a run that ended stands, in words, for a request it never settled. */
async function howItEnded(
  transport: Transport,
  ref: RunRef,
): Promise<string> {
  const now = await transport.readSnapshot(ref.state_root).catch(() => null);
  if (now === null || now.run_id !== ref.run_id) {
    return `run ${ref.run_id} was replaced by ${
      now?.run_id ?? "another run"
    } before the request had a final outcome`;
  }
  return `the run ended (${now.status}) before the request had a final outcome`;
}

/** Tells whether a request is known, once more after a miss (its file may have just moved on). */
async function checkKnown(
  transport: Transport,
  ref: RunRef,
  requestId: string,
): Promise<void> {
  try {
    await transport.requestOutcome(ref, requestId);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    // The runner removes a request file after its receipt and log entry:
    // a look that fell between them finds the entry on a second look.
    await transport.requestOutcome(ref, requestId);
  }
}

/**
 * Waits until a request sent to a run (`setView`, `steer`) has a final
 * outcome, and tells it: `applied`, `rejected` (with the reason),
 * `run_ended` when the run ended or its runner died first, or `timed_out`.
 * A steer is final when its lane delivers or refuses it, not when it is
 * accepted. A steer its prompt finished before delivering is `rejected`;
 * a request still waiting, or a steer still undelivered, when the run
 * ends is refused by the run as it closes, and that is `run_ended`.
 *
 * It follows the run's audit log through the run's transport, woken by
 * the log's changes rather than polling: reads never touch the run.
 *
 * Requires `--allow-read` permission (the runner's liveness is read from
 * the kernel lock on its `run.lock`).
 *
 * @param ref The run the request was sent to.
 * @param requestId The id `setView` or `steer` returned.
 * @param options A time limit, and a signal to stop early.
 * @returns How the wait ended, with the request's last log entry.
 * @throws {NotFoundError} when the run holds no trace of the request.
 * @throws {UsageError} for a time limit that is not a positive number.
 * @throws The signal's reason when `options.signal` aborts.
 *
 * @example A view change sent to a live run, waited for until applied
 * ```ts
 * import {
 *   currentRun,
 *   runPacket,
 *   setView,
 *   snapshot,
 *   waitForOutcome,
 * } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_slow.prompt.md`,
 *   "---\nsimulate: {attempts: [{repeat: 40, delay_ms: 50, messages: [working]}]}\n---\nWork.\n",
 * );
 * const run = runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const root = `${dir}/.prompt_runner`;
 * for (;;) {
 *   const ref = await currentRun(root).catch(() => null);
 *   if (ref !== null && (await snapshot(ref)).status === "running") break;
 *   await new Promise((resolve) => setTimeout(resolve, 20));
 * }
 * const ref = await currentRun(root);
 * const { request_id } = await setView(ref, { thinking: "hide" });
 * const waited = await waitForOutcome(ref, request_id, { timeoutMs: 30_000 });
 * assert.equal(waited.outcome, "applied");
 * assert.equal(waited.entry?.command, "set_view");
 * await run;
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function waitForOutcome(
  ref: RunRef,
  requestId: string,
  options: WaitOptions = {},
): Promise<WaitResult> {
  const { timeoutMs, signal } = options;
  if (
    timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)
  ) {
    throw new UsageError(
      `Invalid time limit ${timeoutMs}: expected a positive number of milliseconds`,
      { code: "BAD_TIMEOUT" },
    );
  }
  signal?.throwIfAborted();
  const transport = transportOf(ref);
  await checkKnown(transport, ref, requestId);
  const stop = new AbortController();
  let timedOut = false;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, timeoutMs);
  const stopped = signal === undefined
    ? stop.signal
    : AbortSignal.any([stop.signal, signal]);
  let latest: LogEntry | null = null;
  try {
    let lost: RunLostError | null = null;
    try {
      for await (
        const entry of transport.followLog(ref, { signal: stopped })
      ) {
        if (entry.request_id !== requestId) continue;
        if (isFinal(entry)) return finalResult(entry);
        latest = entry;
      }
    } catch (error) {
      if (!(error instanceof RunLostError)) throw error;
      lost = error;
    }
    signal?.throwIfAborted();
    if (timedOut) {
      return {
        outcome: "timed_out",
        entry: latest,
        reason: latest?.outcome ?? "pending",
      };
    }
    // The run ended (or its runner died) before the request's final entry.
    const entry = await entryAfterEnd(transport, ref, requestId, {
      signal: stopped,
      settle: lost === null,
    }).catch(() => latest);
    signal?.throwIfAborted();
    if (entry !== null && isFinal(entry)) return finalResult(entry);
    return {
      outcome: "run_ended",
      entry: entry ?? latest,
      reason: lost?.message ?? await howItEnded(transport, ref),
    };
  } finally {
    clearTimeout(timer);
  }
}
