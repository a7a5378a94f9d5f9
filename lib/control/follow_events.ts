/**
 * Following a run's events from another process: replay, then follow, until
 * `run_finished`; an error when the runner is gone or another run took over.
 *
 * @module
 */

import { join } from "node:path";
import { NotFoundError, RunLostError, StateError } from "../shared/errors.ts";
import { openExisting } from "../shared/files.ts";
import type { RunEvent } from "../shared/events.ts";
import { followedRunState, runnerGoneError } from "./_liveness.ts";
import { DirWaker, LineTail } from "./_tail.ts";
import { controlPaths, type RunRef, safeName } from "./paths.ts";
import { readSnapshotFile } from "./snapshot.ts";

/** Where to start following. */
export type EventsFrom = "start" | "current" | number;

/** Options for {@linkcode events} and {@linkcode eventLines}. */
export interface EventsOptions {
  /**
   * `start` replays every event (the default), `current` delivers only
   * events written after the call, a number starts at that `seq`.
   */
  from?: EventsFrom;
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/** One event with the exact line it was stored as. */
export interface EventLine {
  /** The stored line, byte for byte (without its newline). */
  line: string;
  /** The parsed event. */
  event: RunEvent;
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

function parseEvent(line: string): RunEvent | null {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null &&
        Number.isInteger(value.seq) && typeof value.type === "string"
      ? value as RunEvent
      : null;
  } catch {
    return null;
  }
}

/**
 * Follows a run's events as stored lines: replays, then follows the file,
 * woken by file-system notifications with a slow poll as a safety net.
 * Every event is delivered once, in `seq` order, never a partial line. The
 * iteration ends after `run_finished`.
 *
 * Requires `--allow-read`, and `--allow-run` to check the runner's process.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns The events with their stored lines.
 * @throws {NotFoundError} when the state root has no record of the run.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 */
export async function* eventLines(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<EventLine> {
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
    if (from === "current") {
      const size = (await file.stat()).size;
      skip = await endsMidLine(file, size);
      await file.seek(size, Deno.SeekMode.Start);
    }
    tail = new LineTail(file, skip);
  }
  const waker = new DirWaker(paths.dir);
  let lastSeq = 0;
  let lastCheck = 0;
  let ending: RunLostError | null = null;
  try {
    for (;;) {
      if (tail === null) {
        file = await openIfExists(path, ref);
        if (file !== null) tail = new LineTail(file);
      }
      const lines = tail === null ? [] : await tail.read();
      for (const line of lines) {
        const event = parseEvent(line);
        if (event === null || event.seq <= lastSeq) continue;
        lastSeq = event.seq;
        if (event.seq >= minSeq) yield { line, event };
        if (event.type === "run_finished") return;
      }
      if (lines.length > 0) continue;
      if (options.signal?.aborted) return;
      if (ending !== null) throw ending;
      if (!live) {
        ending = new RunLostError(
          `Run ${ref.run_id} ended without run_finished: its runner stopped early`,
        );
        continue;
      }
      if (Date.now() - lastCheck >= 1000) {
        lastCheck = Date.now();
        // Whatever ended the run, drain once more: run_finished may be there.
        // (A superseded run's file was moved; the open handle still reads it.)
        const now = await followedRunState(ref);
        if (now.state === "superseded") {
          ending = new RunLostError(
            `Run ${ref.run_id} was superseded by run ${
              now.by ?? "(unknown)"
            } before it finished`,
          );
          continue;
        }
        if (now.state === "ended") {
          ending = new RunLostError(
            `Run ${ref.run_id} ended (${now.status}) without run_finished`,
          );
          continue;
        }
        if (now.state === "gone") {
          ending = runnerGoneError(ref, now.pid);
          continue;
        }
      }
      await waker.wait(options.signal);
    }
  } finally {
    tail?.close();
    await waker.close();
  }
}

/**
 * Follows a run's events: replay (from the start by default, from the
 * current position, or from a `seq`), then follow, ending after
 * `run_finished`. Reads never touch the run.
 *
 * Requires `--allow-read`, and `--allow-run` to check the runner's process.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns An async iterable of events.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 *
 * @example Usage
 * ```ts ignore
 * import { currentRun, events } from "@prompt-runner/prompt-runner";
 *
 * const ref = await currentRun("examples/demo/.prompt_runner");
 * for await (const event of events(ref, { from: "current" })) {
 *   console.log(event.seq, event.type);
 * }
 * ```
 */
export async function* events(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<RunEvent> {
  for await (const { event } of eventLines(ref, options)) yield event;
}
