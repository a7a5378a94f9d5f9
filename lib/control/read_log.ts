/**
 * Reading a run's audit log, once or following it, through the run's
 * transport.
 *
 * @module
 */

import { transportOf } from "./_transport_of.ts";
import type { LogEntry } from "./log_entry.ts";
import type { RunRef } from "./paths.ts";
import type { FollowLogOptions } from "./transport.ts";

export type { FollowLogOptions } from "./transport.ts";

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
  return await transportOf(ref).log(ref);
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
  yield* transportOf(ref).followLog(ref, options);
}
