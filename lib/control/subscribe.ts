/**
 * The file transport's events: following a run's events file from another
 * process: replay (streamed in
 * bounded batches, or from a `seq` found by seeking), then follow, until
 * `run_finished`; an error when the runner is gone or another run took over.
 *
 * A run interrupted (SIGINT, SIGTERM, SIGHUP, a closed stdout) and then
 * continued with `run --resume` has its `run_finished {status:
 * interrupted}` inside its stream, followed by the resumed runner's
 * `run_resumed` and the rest of the run. A follower that reaches that
 * `run_finished` with nothing after it ends there (the run was over when
 * it looked, as for a follower started before the resume); one that finds
 * the continuation already written follows it to the run's last
 * `run_finished`. Any other `run_finished` ends the stream, whatever
 * follows it.
 *
 * @module
 */

import { basename, join } from "../shared/posix_path.ts";
import { NotFoundError, RunLostError, StateError } from "../shared/errors.ts";
import { openExisting } from "../shared/files.ts";
import {
  followedRunState,
  type RunLiveness,
  runnerGoneError,
} from "./followed_run_state.ts";
import {
  type EventLine,
  selectBytes,
  selectLines,
  type SelectState,
  selectText,
} from "./_event_text.ts";
import { seekSeq } from "./_seek.ts";
import { DirWaker, LineTail } from "./line_tail.ts";
import { controlPaths, type RunRef, safeName } from "./paths.ts";
import { readSnapshotFile } from "./snapshot.ts";

export type { EventLine } from "./_event_text.ts";

/** Where to start following. */
export type EventsFrom = "start" | "current" | number;

/** Options for `events`, `eventLines` and `eventLineBatches`. */
export interface EventsOptions {
  /**
   * `start` replays every event (the default), `current` delivers only
   * events written after the call, a number starts at that `seq`.
   */
  from?: EventsFrom;
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/**
 * Opens a run's events file to read, or `null` when there is none yet. A
 * link on the way, or something that is not a file, is refused.
 */
async function openIfExists(
  path: string,
  ref: RunRef,
): Promise<Deno.FsFile | null> {
  try {
    return await openExisting(path, { within: ref.state_root });
  } catch (error) {
    if (error instanceof StateError && error.code === "NOT_A_FILE") {
      throw new StateError(
        `Cannot read the events of run ${ref.run_id}: "${path}" is not a file`,
        {
          code: "EVENTS_UNREADABLE",
          hint: "Move it aside; the runner writes a new one",
        },
      );
    }
    throw error;
  }
}

async function endsMidLine(file: Deno.FsFile, size: number): Promise<boolean> {
  if (size === 0) return false;
  await file.seek(size - 1, Deno.SeekMode.Start);
  const last = new Uint8Array(1);
  await file.read(last);
  return last[0] !== 0x0a;
}

/** How often a follower with nothing to read checks that its run still lives. */
const CHECK_MS = 250;

/** The events of a run, read batch by batch with `select`. */
async function* follow<T, C = string>(
  ref: RunRef,
  options: EventsOptions,
  select: (chunk: C, state: SelectState) => {
    batch: T | null;
    finished: boolean;
  },
  read: "readText" | "readBytes" = "readText",
): AsyncGenerator<T> {
  const paths = controlPaths(ref.state_root);
  const current = await readSnapshotFile(paths.snapshot, ref.state_root);
  if (current === null) {
    throw new NotFoundError(
      `No run recorded in state root "${ref.state_root}"`,
      {
        code: "RUN_NOT_FOUND",
      },
    );
  }
  let path = paths.events;
  let live = true;
  if (current.run_id !== ref.run_id) {
    path = join(paths.archive, `${safeName(ref.run_id)}.jsonl`);
    live = false;
  }
  const from = options.from ?? "start";
  const minSeq = typeof from === "number" ? from : 1;
  const state: SelectState = { lastSeq: 0, minSeq };
  let file = await openIfExists(path, ref);
  if (file === null && !live) {
    throw new NotFoundError(
      `Run ${ref.run_id} has no events in "${ref.state_root}"`,
      { code: "RUN_NOT_FOUND" },
    );
  }
  if (from === "current" && current.status !== "running" && live) return;
  let tail: LineTail | null = null;
  if (file !== null) {
    let skip = false;
    let offset = 0;
    if (from === "current") {
      offset = (await file.stat()).size;
      skip = await endsMidLine(file, offset);
    } else if (minSeq > 1) {
      offset = await seekSeq(file, minSeq);
    }
    tail = new LineTail(file, skip, offset);
  }
  const waker = new DirWaker(paths.dir, [basename(path)]);
  // The liveness check runs beside the wait, so a line landing meanwhile is
  // read at once rather than after the check.
  let lastCheck = 0;
  const check: {
    running: Promise<void> | null;
    verdict: Ended | null;
    failure: { error: unknown } | null;
  } = { running: null, verdict: null, failure: null };
  let ending: RunLostError | null = null;
  const next = async (t: LineTail) => (await t[read]()) as C | null;
  /** Lines read past an interrupted end, to deliver next. */
  let after: C | null = null;
  try {
    for (;;) {
      if (tail === null) {
        file = await openIfExists(path, ref);
        if (file !== null) tail = new LineTail(file, false, 0);
      }
      const text = after ?? (tail === null ? null : await next(tail));
      after = null;
      if (text !== null) {
        const { batch, finished } = select(text, state);
        if (batch !== null) yield batch;
        if (!finished) continue;
        // An interrupted run ends here unless it was resumed: then its
        // stream already goes on after this run_finished.
        if (state.ended === "interrupted") after = await next(tail!);
        if (after === null) return;
        continue;
      }
      if (options.signal?.aborted) return;
      if (ending !== null) throw ending;
      if (!live) {
        ending = new RunLostError(
          `Run ${ref.run_id} ended without run_finished: its runner stopped early`,
        );
        continue;
      }
      if (check.failure !== null) throw check.failure.error;
      if (check.verdict !== null) {
        // Whatever ended the run, drain once more: run_finished may be there.
        // (A superseded run's file was moved; the open handle still reads it.)
        ending = endingOf(ref, check.verdict);
        continue;
      }
      if (check.running === null && Date.now() - lastCheck >= CHECK_MS) {
        lastCheck = Date.now();
        check.running = followedRunState(ref).then((now) => {
          if (now.state !== "running") check.verdict = now;
        }, (error) => {
          check.failure = { error };
        }).finally(() => {
          check.running = null;
          if (check.verdict !== null || check.failure !== null) waker.wake();
        });
      }
      await waker.wait(options.signal, CHECK_MS);
    }
  } finally {
    await check.running;
    tail?.close();
    await waker.close();
  }
}

/** Where a run that is no longer running stands. */
type Ended = Exclude<RunLiveness, { state: "running" }>;

/** The error that ends following a run that is no longer running. */
function endingOf(ref: RunRef, now: Ended): RunLostError {
  switch (now.state) {
    case "superseded":
      return new RunLostError(
        `Run ${ref.run_id} was superseded by run ${
          now.by ?? "(unknown)"
        } before it finished`,
      );
    case "ended":
      return new RunLostError(
        `Run ${ref.run_id} ended (${now.status}) without run_finished`,
      );
    case "gone":
      return runnerGoneError(ref, now.pid);
  }
}

/**
 * Follows a run's events in its state root as stored lines, in batches: the
 * file transport's `Transport.eventLineBatches`.
 */
export function fileEventLineBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<EventLine[]> {
  return follow(ref, options, (text, state) => {
    const { lines, finished } = selectLines(text, state);
    return { batch: lines.length > 0 ? lines : null, finished };
  });
}

/**
 * Follows a run's events in its state root as their stored text: the file
 * transport's `Transport.eventTextBatches`.
 */
export function fileEventTextBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<string> {
  return follow(ref, options, (text, state) => {
    const selected = selectText(text, state);
    return {
      batch: selected.text === "" ? null : selected.text,
      finished: selected.finished,
    };
  });
}

/**
 * Follows a run's events as stored bytes: what {@linkcode fileEventTextBatches}
 * delivers, encoded, in blocks of up to 1 MiB valid until the next is asked
 * for; a block of verified lines, all delivered, passes through as read.
 * Requires `--allow-read`; throws as {@linkcode fileEventTextBatches} does.
 */
export function fileEventByteBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<Uint8Array> {
  return follow(ref, options, selectBytes, "readBytes");
}
