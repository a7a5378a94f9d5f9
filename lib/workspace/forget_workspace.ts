/**
 * Forgetting an operator workspace: its registry entry and, when asked,
 * what prompt_runner made in its state root, under the run lock
 * (DESIGN §10).
 *
 * @module
 */

import { join, resolve } from "../shared/posix_path.ts";
import { StateError } from "../shared/errors.ts";
import type { StateHomeOptions } from "./state_home.ts";
import {
  FORGET_LOCK_ID,
  readRegistry,
  readStateRootTag,
  unknownWorkspace,
  unregisterWorkspace,
} from "./registry.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";

/** What {@linkcode forgetWorkspace} did with the state root. */
export interface ForgottenWorkspace {
  /** The state root the id had. */
  state_root: string;
  /**
   * `kept`: not asked to delete; `deleted`: everything in it was
   * prompt_runner's, and it is gone; `partly_deleted`: prompt_runner's
   * entries are gone, the rest and the root are kept; `untagged`: nothing
   * deleted, since it has no tag; `missing`: it no longer existed.
   */
  outcome: "kept" | "deleted" | "partly_deleted" | "untagged" | "missing";
  /** What was deleted (directories with a trailing `/`). */
  deleted: string[];
  /** What was kept in it, with why when it is not simply someone else's. */
  kept: string[];
}

/**
 * Forgets workspace `id`: removes it from the registry and, with `remove`,
 * deletes what prompt_runner made in its state root (see
 * `clearStateRoot`), then the root itself when nothing else is left. Only a
 * root tagged with this id is touched, and only while holding its run lock:
 * a run starting meanwhile finds the workspace forgotten and refuses to
 * start. Without `remove`, run data is never touched.
 *
 * @returns What was done with the state root.
 * @throws {NotFoundError} when `id` is not registered.
 * @throws {StateError} when deleting is refused (a live run, another tag, a
 * root that is never a state root or holds a checkout).
 */
export async function forgetWorkspace(
  id: string,
  options: StateHomeOptions & { remove?: boolean } = {},
): Promise<ForgottenWorkspace> {
  const registry = await readRegistry(options);
  if (!Object.hasOwn(registry, id)) throw unknownWorkspace(id);
  const root = registry[id]!;
  const result = (
    outcome: ForgottenWorkspace["outcome"],
    deleted: string[] = [],
    kept: string[] = [],
  ): ForgottenWorkspace => ({ state_root: root, outcome, deleted, kept });
  if (!options.remove) {
    await unregisterWorkspace(id, options);
    return result("kept");
  }
  if ((await Deno.lstat(root).catch(() => null)) === null) {
    await unregisterWorkspace(id, options);
    return result("missing");
  }
  const tag = await readStateRootTag(root).catch(() => null);
  if (tag !== null && tag.id !== id) {
    throw new StateError(
      `Refused to delete "${root}": it is tagged for workspace "${tag.id}", not "${id}"`,
      { code: "STATE_ROOT_TAKEN", hint: "Forget without --delete" },
    );
  }
  if (tag === null) {
    await unregisterWorkspace(id, options);
    return result("untagged");
  }
  const refuse = (detail: string, cause?: unknown): StateError =>
    new StateError(
      `Refused to delete the state root "${root}" of workspace "${id}": ${detail}`,
      {
        code: "STATE_ROOT_NOT_DELETABLE",
        hint: "Forget without --delete, and clean it up by hand",
        ...(cause === undefined ? {} : { cause }),
      },
    );
  const { checkStateRoot } = await import("../shared/state_root.ts");
  const { clearStateRoot } = await import("../shared/state_root_entries.ts");
  const { stateRootClash } = await import("./check_state_root_site.ts");
  try {
    await checkStateRoot(root);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    const prefix = `Refused to use state root "${resolve(root)}": `;
    throw refuse(
      error.message.startsWith(prefix)
        ? error.message.slice(prefix.length)
        : error.message,
      error,
    );
  }
  // A root tagged before these checks existed may be a checkout.
  const clash = await stateRootClash(root, {
    ...options,
    packet_dir: tag.packet,
    repos: [],
    allowForeign: true,
  });
  if (clash !== null) throw refuse(`it ${clash}`);
  const { acquireRunLock, LOCK_FILE, readRunLock } = await import(
    "../shared/run_lock.ts"
  );
  const lockBefore =
    (await Deno.lstat(join(root, LOCK_FILE)).catch(() => null)) !== null;
  let lock;
  try {
    lock = await acquireRunLock(root, FORGET_LOCK_ID);
  } catch (error) {
    if (!(error instanceof StateError && error.code === "RUN_LOCKED")) {
      throw error;
    }
    const holder = (await readRunLock(root).catch(() => null))?.info;
    throw new StateError(
      `Refused to delete workspace "${id}": a run (${
        holder?.run_id ?? "unknown"
      }) is using its state root`,
      { code: "RUN_ACTIVE", hint: "Stop the run first", cause: error },
    );
  }
  let cleared;
  try {
    // Held from here on: a run of this workspace cannot start, and one
    // that tries finds it forgotten.
    await unregisterWorkspace(id, options);
    cleared = await clearStateRoot(root, { except: [LOCK_FILE] });
  } finally {
    await lock.release();
  }
  const deleted = lockBefore
    ? [...cleared.deleted, LOCK_FILE]
    : cleared.deleted;
  if (cleared.kept.length > 0) {
    return result("partly_deleted", deleted, cleared.kept);
  }
  const left = await removeEmptyRoot(root);
  return left.length === 0
    ? result("deleted", deleted)
    : result("partly_deleted", deleted, left);
}

/**
 * Removes an emptied state root. A run that was starting may hold a fresh
 * `run.lock` for a moment (it finds the workspace forgotten and lets it
 * go), so that alone is waited out, for up to 5 s.
 *
 * @returns What is left in it (nothing once it is removed).
 */
async function removeEmptyRoot(root: string): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await Deno.remove(root);
      return [];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      const { readStateRootContents } = await import(
        "../shared/state_root_entries.ts"
      );
      const { names } = await readStateRootContents(root);
      const starting = names.every((name) =>
        name === STATE_ROOT_NAMES.lock ||
        name.startsWith(`.${STATE_ROOT_NAMES.lock}.`)
      );
      if (names.length > 0 && (!starting || Date.now() > deadline)) {
        return names.map((name) =>
          name === STATE_ROOT_NAMES.lock
            ? `${STATE_ROOT_NAMES.lock} (a run starting)`
            : name
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
