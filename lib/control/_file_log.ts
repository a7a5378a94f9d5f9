/**
 * The file transport's audit log: `control/log.jsonl` read once (back from
 * its end to the run's start when it can), or followed until the run ends.
 *
 * @module
 */

import { type RunLostError, StateError } from "../shared/errors.ts";
import { openExisting } from "../shared/files.ts";
import { basename } from "../shared/posix_path.ts";
import { followedRunState, runnerGoneError } from "./followed_run_state.ts";
import { readRunLogFromTail } from "./_log_from_tail.ts";
import { DirWaker, LineTail } from "./line_tail.ts";
import { type LogEntry, parseLogLines, readLogFile } from "./log_entry.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import type { FollowLogOptions } from "./transport.ts";

/** Reads a run's audit log entries from its state root, oldest first. */
export async function readRunLog(ref: RunRef): Promise<LogEntry[]> {
  const paths = controlPaths(ref.state_root);
  // The current run's entries are at the end: read back to its start only.
  const fromTail = await readRunLogFromTail(paths, ref.run_id);
  if (fromTail !== null) return fromTail;
  const entries = await readLogFile(paths);
  return entries.filter((entry) => entry.run_id === ref.run_id);
}

/**
 * Yields a run's log entries from its state root, then new ones as they are
 * written, until the run ends.
 *
 * @throws {RunLostError} when the runner is gone before the run ended.
 */
export async function* followRunLog(
  ref: RunRef,
  options: FollowLogOptions = {},
): AsyncGenerator<LogEntry> {
  const paths = controlPaths(ref.state_root);
  const waker = new DirWaker(paths.dir, [basename(paths.log)]);
  let tail: LineTail | null = null;
  let lastCheck = 0;
  let ending: "done" | RunLostError | null = null;
  try {
    for (;;) {
      if (tail === null) {
        let file: Deno.FsFile | null;
        try {
          file = await openExisting(paths.log, { within: paths.root });
        } catch (error) {
          if (error instanceof StateError && error.code === "NOT_A_FILE") {
            throw new StateError(
              `Cannot read the log "${paths.log}": it is not a file`,
              { code: "LOG_UNREADABLE" },
            );
          }
          throw error;
        }
        if (file !== null) tail = new LineTail(file);
      }
      const lines = tail === null ? [] : await tail.read();
      const entries = parseLogLines(lines.map((line) => line + "\n").join(""))
        .filter((entry) => entry.run_id === ref.run_id);
      yield* entries;
      if (lines.length > 0) continue;
      if (options.signal?.aborted) return;
      if (ending === "done") return;
      if (ending !== null) throw ending;
      if (Date.now() - lastCheck >= 1000) {
        lastCheck = Date.now();
        const now = await followedRunState(ref);
        if (now.state !== "running") {
          // Drain once more before ending: the last entries may be there.
          ending = now.state === "gone"
            ? runnerGoneError(ref, now.pid)
            : "done";
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
