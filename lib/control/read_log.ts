/**
 * Reading a run's audit log, once or following it.
 *
 * @module
 */

import { type RunLostError, StateError } from "../shared/errors.ts";
import { openExisting } from "../shared/files.ts";
import { basename } from "../shared/posix_path.ts";
import { followedRunState, runnerGoneError } from "./_liveness.ts";
import { readRunLogFromTail } from "./_log_from_tail.ts";
import { DirWaker, LineTail } from "./_tail.ts";
import { type LogEntry, parseLogLines, readLogFile } from "./log_entry.ts";
import { controlPaths, type RunRef } from "./paths.ts";

/**
 * Returns every audit log entry of a run, oldest first: each command sent to
 * it, accepted or refused, with its outcome and reason.
 *
 * Requires `--allow-read` permission.
 *
 * @param ref The run.
 * @returns Its log entries (none when nothing was sent).
 *
 * @example A view change sent to a live run, and its audit entry
 * ```ts
 * import {
 *   currentRun,
 *   log,
 *   runPacket,
 *   setView,
 *   snapshot,
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
 * await setView(ref, { thinking: "hide" }, { author: "ada" });
 * await run;
 * const [entry] = await log(ref);
 * assert.equal(entry?.command, "set_view");
 * assert.equal(entry?.outcome, "applied");
 * assert.equal(entry?.author, "ada");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function log(ref: RunRef): Promise<LogEntry[]> {
  const paths = controlPaths(ref.state_root);
  // The current run's entries are at the end: read back to its start only.
  const fromTail = await readRunLogFromTail(paths, ref.run_id);
  if (fromTail !== null) return fromTail;
  const entries = await readLogFile(paths);
  return entries.filter((entry) => entry.run_id === ref.run_id);
}

/** Options for {@linkcode followLog}. */
export interface FollowLogOptions {
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/**
 * Yields a run's log entries, then new ones as they are written, until the
 * run ends.
 *
 * Requires `--allow-read` permission (the runner's liveness is read from
 * the kernel lock on its `run.lock`).
 *
 * @param ref The run.
 * @param options A signal to stop early.
 * @returns The entries.
 * @throws {RunLostError} when the runner is gone before the run ended.
 *
 * @example Following a run that has ended yields its entries and stops
 * ```ts
 * import {
 *   currentRun,
 *   followLog,
 *   type LogEntry,
 *   runPacket,
 * } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(`${dir}/prompts/01_hi.prompt.md`, "---\nverify: {}\n---\nHi.\n");
 * await runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * const seen: LogEntry[] = [];
 * for await (const entry of followLog(ref)) seen.push(entry);
 * assert.deepEqual(seen, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function* followLog(
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
