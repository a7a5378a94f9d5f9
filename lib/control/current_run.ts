/**
 * A run's state as clients read it, through the run's transport: the newest
 * run of a state root, and a run's snapshot. Reads never touch the run.
 *
 * @module
 */

import { NotFoundError } from "../shared/errors.ts";
import { transportNamed, transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";
import { type Snapshot, snapshotOfRun } from "./snapshot.ts";
import type { Transport } from "./transport.ts";

/** Options for {@linkcode currentRun} and {@linkcode currentSnapshot}. */
export interface CurrentRunOptions {
  /**
   * The transport the state root is reached through; absent: its files.
   * The returned reference names it.
   */
  transport?: Transport;
}

/**
 * Returns a reference to the newest run recorded in a state root, running or
 * finished.
 *
 * Requires `--allow-read` permission.
 *
 * @param stateRoot The state root (`PACKET/.prompt_runner` for a packet run).
 * @param options The transport it is reached through (its files by default).
 * @returns The run's reference.
 * @throws {NotFoundError} when no run was ever recorded there.
 *
 * @example Usage
 * ```ts
 * import { currentRun } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * await assert.rejects(currentRun(root), /No run recorded/);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function currentRun(
  stateRoot: string,
  options: CurrentRunOptions = {},
): Promise<RunRef> {
  const transport = options.transport;
  const snapshot = await transportNamed(transport).readSnapshot(stateRoot);
  if (snapshot === null) {
    throw new NotFoundError(`No run recorded in state root "${stateRoot}"`, {
      code: "RUN_NOT_FOUND",
      hint: "Start one with 'prompt_runner run PACKET'",
    });
  }
  return transport === undefined
    ? { state_root: stateRoot, run_id: snapshot.run_id }
    : { state_root: stateRoot, run_id: snapshot.run_id, transport };
}

/**
 * Reads the snapshot of a state root's newest run, whichever run that is:
 * one read, so a poll that lands while one run hands the state root to the
 * next never fails. Reads never touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param stateRoot The state root.
 * @param options The transport it is reached through (its files by default).
 * @returns The newest run's snapshot.
 * @throws {NotFoundError} when no run was ever recorded there.
 * @throws {StateError} when the snapshot cannot be read.
 *
 * @example Usage
 * ```ts
 * import { currentSnapshot } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * await assert.rejects(currentSnapshot(root), /No run recorded/);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function currentSnapshot(
  stateRoot: string,
  options: CurrentRunOptions = {},
): Promise<Snapshot> {
  const current = await transportNamed(options.transport).readSnapshot(
    stateRoot,
  );
  if (current === null) {
    throw new NotFoundError(`No run recorded in state root "${stateRoot}"`, {
      code: "RUN_NOT_FOUND",
      hint: "Start one with 'prompt_runner run PACKET'",
    });
  }
  return current;
}

/**
 * Reads a run's snapshot. Reads never touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param ref The run.
 * @returns Its snapshot.
 * @throws {NotFoundError} when the state root has no run.
 * @throws {StateError} when a newer run has replaced this one (a stale ref).
 *
 * @example The state of a run that has ended
 * ```ts
 * import { currentRun, runPacket, snapshot } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(`${dir}/prompts/01_hi.prompt.md`, "---\nverify: {}\n---\nHi.\n");
 * await runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * const state = await snapshot(ref);
 * assert.equal(state.status, "completed");
 * assert.equal(state.run_id, ref.run_id);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function snapshot(ref: RunRef): Promise<Snapshot> {
  return snapshotOfRun(
    await transportOf(ref).readSnapshot(ref.state_root),
    ref,
  );
}
