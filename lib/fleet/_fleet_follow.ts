/**
 * Following a fleet run's events and audit log, as the file transport
 * follows its files: the same lines chosen the same way (each `seq` once,
 * in order, up to `run_finished`, an interrupted run's continuation
 * followed), ending with `RunLostError` when the run ends without
 * `run_finished` or goes unreachable (the fleet stopped hearing from it).
 *
 * @module
 */

import {
  selectBytes,
  selectLines,
  type SelectState,
  selectText,
} from "../control/_event_text.ts";
import type { EventLine } from "../control/_event_text.ts";
import { type LogEntry, parseLogLines } from "../control/log_entry.ts";
import type { RunRef } from "../control/paths.ts";
import type { EventsOptions } from "../control/subscribe.ts";
import { NotFoundError, RunLostError } from "../shared/errors.ts";
import type { FleetLink } from "./_link.ts";
import { readSubject } from "./_reader.ts";
import { EVENTS_STREAM, LOG_STREAM } from "./fleet_names.ts";

/** How a fleet run stands, as its followers need it. */
export interface FleetRunState {
  /** `running`, an end status, `unreachable`, or `none` (no record). */
  state: string;
  /** Why it is unreachable, for the error. */
  detail: string;
  /** The last event `seq` its snapshot records (0: none). */
  lastSeq: number;
}

/** What a follower needs of the fleet transport. */
export interface FollowContext {
  link: FleetLink;
  /** The run's key. */
  key: string;
  /** How the run stands now. */
  runState(): Promise<FleetRunState>;
}

/** How often a caught-up follower asks how the run stands. */
const CHECK_MS = 500;
const NEWLINE = 0x0a;
const decoder = new TextDecoder();

function lostError(ref: RunRef, now: FleetRunState): RunLostError {
  return now.state === "unreachable"
    ? new RunLostError(
      `The runner of run ${ref.run_id} is gone: ${now.detail} (unreachable), and it had not finished the run`,
    )
    : new RunLostError(
      `Run ${ref.run_id} ended (${now.state}) without run_finished`,
    );
}

/** The event `seq` a stored message's id names (`<run_id>:<seq>`). */
function eventSeqOf(msgId: string | undefined): number {
  const n = Number(msgId?.slice(msgId.lastIndexOf(":") + 1));
  return Number.isInteger(n) ? n : 0;
}

/**
 * The stream sequence to read a subject from so as to reach event `seq`
 * first (the events are in seq order on their subject): a binary search
 * of the stored messages, a few reads for a long run.
 */
async function streamSeqOf(
  link: FleetLink,
  subject: string,
  seq: number,
): Promise<number> {
  const first = await link.nextMessage(EVENTS_STREAM, subject, 1);
  const last = await link.lastMessage(EVENTS_STREAM, subject);
  if (first === null || last === null) return 1;
  let low = first.seq;
  let high = last.seq;
  if (eventSeqOf(first.msgId) >= seq) return low;
  if (eventSeqOf(last.msgId) < seq) return high + 1;
  // The first stored message of the subject with an event seq >= `seq`
  // lies in (low, high].
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const found = await link.nextMessage(EVENTS_STREAM, subject, middle);
    if (found === null || found.seq >= high) {
      high = middle;
      continue;
    }
    if (eventSeqOf(found.msgId) >= seq) high = found.seq;
    else low = found.seq;
  }
  return high;
}

/** Joins messages into one block of lines, each ending with a newline. */
function block(messages: { data: Uint8Array }[]): Uint8Array {
  let size = 0;
  for (const message of messages) size += message.data.length + 1;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const message of messages) {
    bytes.set(message.data, at);
    at += message.data.length;
    bytes[at++] = NEWLINE;
  }
  return bytes;
}

/**
 * Follows a run's events through the fleet, as batches chosen by `select`
 * from blocks of stored lines.
 */
async function* follow<T>(
  context: FollowContext,
  ref: RunRef,
  subject: string,
  options: EventsOptions,
  select: (
    bytes: Uint8Array,
    state: SelectState,
  ) => { batch: T | null; finished: boolean },
): AsyncGenerator<T> {
  const first = await context.runState();
  if (first.state === "none") {
    throw new NotFoundError(`No fleet run ${ref.run_id} in ${ref.state_root}`, {
      code: "RUN_NOT_FOUND",
      hint: "'prompt_runner fleet ls --fleet URL' lists the fleet's runs",
    });
  }
  const from = options.from ?? "start";
  if (from === "current" && first.state !== "running") return;
  // From "current": what the fleet has not stored yet, and nothing the
  // run's snapshot already counted (a bridge catching up publishes those).
  const state: SelectState = {
    lastSeq: 0,
    minSeq: typeof from === "number"
      ? from
      : from === "current"
      ? first.lastSeq + 1
      : 1,
  };
  const stop = new AbortController();
  const signal = options.signal === undefined
    ? stop.signal
    : AbortSignal.any([stop.signal, options.signal]);
  let lastCheck = Date.now();
  let lastStreamSeq = 0;
  try {
    for await (
      const batch of readSubject(context.link, {
        stream: EVENTS_STREAM,
        subject,
        from: from === "current"
          ? "new"
          : typeof from === "number" && from > 1
          ? { seq: await streamSeqOf(context.link, subject, from) }
          : "all",
        signal,
        idleTickMs: CHECK_MS,
      })
    ) {
      if (batch.messages.length > 0) {
        lastStreamSeq = batch.messages.at(-1)!.seq;
        const chosen = select(block(batch.messages), state);
        if (chosen.batch !== null) yield chosen.batch;
        if (chosen.finished) {
          if (state.ended !== "interrupted" || batch.caughtUp) return;
        }
        if (!batch.caughtUp) continue;
      }
      if (options.signal?.aborted) return;
      if (!batch.caughtUp || Date.now() - lastCheck < CHECK_MS) continue;
      lastCheck = Date.now();
      const now = await context.runState();
      if (now.state === "running") continue;
      if (state.ended === "interrupted") return;
      // It ended: its bridge published every event before the final
      // snapshot, so whatever is stored after what was read comes first.
      const last = await context.link.lastMessage(EVENTS_STREAM, subject)
        .catch(() => null);
      if (last !== null && last.seq > lastStreamSeq) continue;
      throw lostError(ref, now);
    }
  } finally {
    stop.abort();
  }
}

/** A run's events as blocks of stored bytes (see `Transport.eventByteBatches`). */
export function fleetEventBytes(
  context: FollowContext,
  ref: RunRef,
  subject: string,
  options: EventsOptions,
): AsyncGenerator<Uint8Array> {
  return follow(context, ref, subject, options, selectBytes);
}

/** A run's events as stored text (see `Transport.eventTextBatches`). */
export function fleetEventText(
  context: FollowContext,
  ref: RunRef,
  subject: string,
  options: EventsOptions,
): AsyncGenerator<string> {
  return follow(context, ref, subject, options, (bytes, state) => {
    const chosen = selectText(decoder.decode(bytes), state);
    return {
      batch: chosen.text === "" ? null : chosen.text,
      finished: chosen.finished,
    };
  });
}

/** A run's events with their lines (see `Transport.eventLineBatches`). */
export function fleetEventLines(
  context: FollowContext,
  ref: RunRef,
  subject: string,
  options: EventsOptions,
): AsyncGenerator<EventLine[]> {
  return follow(context, ref, subject, options, (bytes, state) => {
    const chosen = selectLines(decoder.decode(bytes), state);
    return {
      batch: chosen.lines.length > 0 ? chosen.lines : null,
      finished: chosen.finished,
    };
  });
}

/**
 * A run's audit-log entries: those stored, then (with `follow`) new ones
 * until the run ends.
 */
export async function* fleetLog(
  context: FollowContext,
  ref: RunRef,
  subject: string,
  options: { follow: boolean; signal?: AbortSignal },
): AsyncGenerator<LogEntry> {
  const stop = new AbortController();
  const signal = options.signal === undefined
    ? stop.signal
    : AbortSignal.any([stop.signal, options.signal]);
  let lastCheck = 0;
  let ending: "done" | RunLostError | null = null;
  try {
    for await (
      const batch of readSubject(context.link, {
        stream: LOG_STREAM,
        subject,
        from: "all",
        signal,
        idleTickMs: CHECK_MS,
      })
    ) {
      if (batch.messages.length > 0) {
        yield* parseLogLines(decoder.decode(block(batch.messages)));
      }
      if (!batch.caughtUp) continue;
      if (!options.follow || ending === "done") return;
      if (ending !== null) throw ending;
      if (Date.now() - lastCheck < CHECK_MS) continue;
      lastCheck = Date.now();
      const now = await context.runState();
      if (now.state === "running") continue;
      // Take what came meanwhile, then end.
      ending = now.state === "unreachable" || now.state === "none"
        ? lostError(ref, now)
        : "done";
    }
  } finally {
    stop.abort();
  }
}
