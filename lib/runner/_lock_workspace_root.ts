/**
 * Taking the run lock of a prepared workspace's state root, against a
 * `workspace forget --delete` that may be deleting it at the same moment.
 *
 * @module
 */

import { NotFoundError, StateError } from "../shared/errors.ts";
import {
  acquireRunLock,
  readRunLock,
  type RunLock,
} from "../shared/run_lock.ts";
import { sleep } from "../shared/sleep.ts";
import {
  openStateRoot,
  type OpenStateRootOptions,
} from "../shared/state_root.ts";
import {
  FORGET_LOCK_ID,
  isRegisteredAt,
  lookupWorkspace,
} from "../workspace/registry.ts";

/** How long a run waits for a `forget` holding its lock to finish. */
const FORGET_WAIT_MS = 30_000;

/** Why the workspace cannot run: forgotten, or its root gone or untagged. */
async function forgotten(id: string, root: string): Promise<NotFoundError> {
  const still = await lookupWorkspace(id).catch(() => null);
  return new NotFoundError(
    still === null
      ? `Cannot run workspace "${id}": it was forgotten as the run was starting`
      : `Cannot run workspace "${id}": its state root "${root}" is gone or no longer tagged for it`,
    {
      code: "WORKSPACE_NOT_FOUND",
      hint: "Prepare it again: 'prompt_runner workspace prepare WORKSPACE_YML'",
    },
  );
}

/**
 * Opens workspace `id`'s state root (never making it) and takes its run
 * lock, then checks that the workspace is still registered there and the
 * root still carries its tag. `forget --delete` holds the same lock while it
 * deletes, so either it is refused (this run holds the lock), or this run
 * waits for it and then refuses to start.
 *
 * @returns The root's real path and the held lock.
 * @throws {NotFoundError} (`WORKSPACE_NOT_FOUND`) when the workspace was
 * forgotten, or its root is gone.
 * @throws {StateError} when another run holds the lock, or the root is not
 * usable.
 */
export async function lockWorkspaceRoot(
  path: string,
  runId: string,
  id: string,
  options: Pick<OpenStateRootOptions, "warn"> & { fleet?: string } = {},
): Promise<{ root: string; lock: RunLock }> {
  let root: string;
  try {
    root = await openStateRoot(path, {
      ...(options.warn === undefined ? {} : { warn: options.warn }),
      repair: true,
    });
  } catch (error) {
    if (error instanceof NotFoundError) throw await forgotten(id, path);
    throw error;
  }
  const deadline = Date.now() + FORGET_WAIT_MS;
  for (;;) {
    let lock: RunLock;
    try {
      lock = await acquireRunLock(root, runId, options.fleet);
    } catch (error) {
      if (!(await isRegisteredAt(id, root))) throw await forgotten(id, root);
      if (
        error instanceof StateError && error.code === "RUN_LOCKED" &&
        Date.now() < deadline &&
        (await readRunLock(root).catch(() => null))?.info?.run_id ===
          FORGET_LOCK_ID
      ) {
        await sleep(50);
        continue;
      }
      throw error;
    }
    if (await isRegisteredAt(id, root)) return { root, lock };
    await lock.release();
    throw await forgotten(id, root);
  }
}
