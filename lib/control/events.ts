/**
 * Following a run's events from another process, through the run's
 * transport: replay (from the start, from the current end, or from a
 * `seq`), then follow, until `run_finished`; an error when the runner is
 * gone or another run took over.
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

import type { RunEvent } from "../shared/events.ts";
import type { EventLine } from "./_event_text.ts";
import { transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";
import type { EventsOptions } from "./subscribe.ts";

export type { EventLine } from "./_event_text.ts";
export type { EventsFrom, EventsOptions } from "./subscribe.ts";

/**
 * Follows a run's events as stored lines, in batches: replays, then follows
 * (over files: woken by file-system notifications with a slow poll as a
 * safety net). A batch holds the complete lines read at once (at most about
 * 120 KiB of them), so memory stays flat however long the stream is.
 * Every event is delivered once, in `seq` order, never a partial line. The
 * iteration ends after `run_finished`.
 *
 * Requires `--allow-read`.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns Batches (never empty) of events with their stored lines.
 * @throws {NotFoundError} when the state root has no record of the run.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 *
 * @example Usage
 * ```ts
 * import {
 *   currentRun,
 *   eventLineBatches,
 *   runPacket,
 * } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_hello.prompt.md`,
 *   "---\nsimulate: {attempts: [{messages: [hi]}]}\n---\nSay hi.\n",
 * );
 * await runPacket(dir, {});
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * const seqs: number[] = [];
 * for await (const batch of eventLineBatches(ref, { from: "start" })) {
 *   for (const { event } of batch) seqs.push(event.seq);
 * }
 * assert.equal(seqs[0], 1);
 * assert.equal(seqs.length, seqs.at(-1));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function* eventLineBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<EventLine[]> {
  yield* transportOf(ref).eventLineBatches(ref, options);
}

/**
 * Follows a run's events as their stored text: the lines
 * {@linkcode eventLineBatches} delivers, each with its newline, unchanged,
 * a batch at a time, without parsing lines in the shape the plane writes.
 * For printing the stream as it is stored.
 *
 * Requires `--allow-read`.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns Batches (never empty) of whole lines.
 * @throws {NotFoundError} when the state root has no record of the run.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 */
export async function* eventTextBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<string> {
  yield* transportOf(ref).eventTextBatches(ref, options);
}

/**
 * Follows a run's events as their stored bytes: the text
 * {@linkcode eventTextBatches} delivers, encoded, in blocks. A block may be
 * a view of the transport's read buffer (over files, a block of verified
 * lines passes through as it was read), valid only until the next block is
 * asked for: write or copy it before asking for the next.
 *
 * Requires `--allow-read`.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns Blocks (never empty) of whole lines.
 * @throws {NotFoundError} when the state root has no record of the run.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 */
export async function* eventByteBatches(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<Uint8Array> {
  yield* transportOf(ref).eventByteBatches(ref, options);
}

/**
 * Follows a run's events as stored lines, one at a time: what
 * {@linkcode eventLineBatches} delivers, unbatched.
 *
 * Requires `--allow-read`.
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
  for await (const batch of eventLineBatches(ref, options)) yield* batch;
}

/**
 * Follows a run's events: replay (from the start by default, from the
 * current position, or from a `seq`), then follow, ending after
 * `run_finished`. Reads never touch the run.
 *
 * Requires `--allow-read`.
 *
 * @param ref The run to follow.
 * @param options Where to start, and a signal to stop early.
 * @returns An async iterable of events.
 * @throws {NotFoundError} when the state root has no record of the run.
 * @throws {RunLostError} when the runner is gone, or another run took over
 * the state root, before `run_finished`.
 *
 * @example Following a run to its end
 * ```ts
 * import { currentRun, events, runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_hello.prompt.md`,
 *   "---\nsimulate: {attempts: [{messages: [hi]}]}\n---\nSay hi.\n",
 * );
 * await runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * const types: string[] = [];
 * for await (const event of events(ref)) types.push(event.type);
 * assert.equal(types[0], "prompt_started");
 * assert.equal(types.at(-1), "run_finished");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @example Only what happens after the call, while the run goes on
 * ```ts
 * import { currentRun, events, runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_slow.prompt.md`,
 *   "---\nsimulate: {attempts: [{repeat: 40, delay_ms: 50, messages: [working]}]}\n---\nWork.\n",
 * );
 * const run = runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const root = `${dir}/.prompt_runner`;
 * let ref = await currentRun(root).catch(() => null);
 * while (ref === null) {
 *   await new Promise((resolve) => setTimeout(resolve, 20));
 *   ref = await currentRun(root).catch(() => null);
 * }
 * const seqs: number[] = [];
 * for await (const event of events(ref, { from: "current" })) {
 *   seqs.push(event.seq);
 * }
 * await run;
 * assert.ok(seqs.length > 0);
 * assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function* events(
  ref: RunRef,
  options: EventsOptions = {},
): AsyncGenerator<RunEvent> {
  for await (const batch of eventLineBatches(ref, options)) {
    for (const { event } of batch) yield event;
  }
}
