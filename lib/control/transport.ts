/**
 * The transport seam of the client API: every way a client reaches a run
 * (its snapshot, its events, its audit log, its requests) goes through one
 * {@linkcode Transport}. The file transport (the state root's files) is the
 * first; a {@linkcode RunRef} names another in its `transport` field, and
 * the client functions (`snapshot`, `events`, `log`, `setView`, `steer`,
 * `requestOutcome`, …) and every command calling them work over it
 * unchanged.
 *
 * @module
 */

import type { EventLine } from "./_event_text.ts";
import type { LogEntry } from "./log_entry.ts";
import type { RunRef, TransportName } from "./paths.ts";
import type { RequestOptions, SentRequest } from "./request.ts";
import type { RequestOutcome } from "./outcome.ts";
import type { Snapshot } from "./snapshot.ts";
import type { EventsOptions } from "./subscribe.ts";

/** Options for `followLog`. */
export interface FollowLogOptions {
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/** A request a client sends, before the transport makes it durable. */
export interface RequestDraft extends RequestOptions {
  /** `set_view` or `steer`. */
  command: string;
  /** The command's parameters, already checked by the client. */
  params: Record<string, unknown>;
  /** The prompt a steer is for, normalised. */
  prompt_id?: string;
}

/**
 * How the client API reaches runs: one implementation per transport (the
 * state root's files; a fleet's streams and buckets; memory in tests).
 * Every method answers as the file transport does: the same values, the
 * same errors (`NotFoundError`, `StateError`, `RunLostError`, `UsageError`).
 */
export interface Transport extends TransportName {
  /** The transport's name (`file`, `memory`, …). */
  readonly name: string;
  /**
   * Reads the snapshot of the newest run at an address (a state root), or
   * `null` when no run was ever recorded there. Reads never touch the run.
   *
   * @throws {StateError} when the snapshot cannot be read.
   */
  readSnapshot(address: string): Promise<Snapshot | null>;
  /**
   * Follows a run's events from a `seq` (or the start, or the current end)
   * in `seq` order, each once, as batches (never empty) of verified events
   * with the line each is stored as, ending after `run_finished`.
   *
   * @throws {NotFoundError} when there is no record of the run.
   * @throws {RunLostError} when the run is gone, or another run took over,
   * before `run_finished`.
   */
  eventLineBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncIterable<EventLine[]>;
  /**
   * The same events as {@linkcode Transport.eventLineBatches}, as the text
   * of their stored lines (each with its newline), a batch at a time: the
   * bytes a `--json` follower passes through.
   */
  eventTextBatches(ref: RunRef, options: EventsOptions): AsyncIterable<string>;
  /**
   * The same text as {@linkcode Transport.eventTextBatches}, as bytes: a
   * block may be a view of the transport's read buffer, valid only until
   * the next block is asked for (so a `--json` follower writes verified
   * blocks through without copying or re-encoding them).
   */
  eventByteBatches(
    ref: RunRef,
    options: EventsOptions,
  ): AsyncIterable<Uint8Array>;
  /** Reads a run's audit log entries, oldest first. */
  log(ref: RunRef): Promise<LogEntry[]>;
  /**
   * Yields a run's audit log entries, then new ones, until the run ends.
   *
   * @throws {RunLostError} when the runner is gone before the run ended.
   */
  followLog(ref: RunRef, options: FollowLogOptions): AsyncIterable<LogEntry>;
  /**
   * Sends a request to a live run and returns once it is durable (accepted
   * for delivery, not yet applied).
   *
   * @throws {StateError} when the run is not running, or the request cannot
   * be made durable.
   * @throws {UsageError} when the request is too large.
   */
  submit(ref: RunRef, request: RequestDraft): Promise<SentRequest>;
  /**
   * Tells what became of a request.
   *
   * @throws {NotFoundError} when there is no trace of the request.
   */
  requestOutcome(ref: RunRef, requestId: string): Promise<RequestOutcome>;
}
