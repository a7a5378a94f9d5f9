/**
 * The registry of prepared workspaces, `workspaces.json` in the state home
 * (`{"<id>": "<state root>"}`), and the tag that marks a workspace's state
 * root (`state_root.json`). The registry is private (0600 in a 0700
 * folder), replaced atomically, and changed under a lock so that two
 * operators preparing at once both land.
 *
 * @module
 */

import { dirname, join } from "../shared/posix_path.ts";
import { errorText, NotFoundError, StateError } from "../shared/errors.ts";
// Files, not the shared barrel, and the writers loaded when they write:
// every control command reads the registry to resolve its TARGET.
import { readTextIfExists } from "../shared/read_file.ts";
import { DIR_MODE, FILE_MODE } from "../shared/private_files.ts";
import { registryFile, type StateHomeOptions } from "./state_home.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";

/** The file, in a workspace's state root, that says whose root it is. */
export const STATE_ROOT_TAG = STATE_ROOT_NAMES.tag;

/** What `state_root.json` holds (absolute paths). */
export interface StateRootTag {
  /** The format version, 1. */
  v: 1;
  /** Always `"workspace"`. */
  kind: "workspace";
  /** The workspace id. */
  id: string;
  /** The workspace file. */
  manifest: string;
  /** The bound packet directory, or `null`. */
  packet: string | null;
}

/**
 * The run id `workspace forget --delete` holds a state root's run lock
 * under while it deletes: a run of the workspace starting meanwhile waits
 * for it, then finds the workspace forgotten.
 */
export const FORGET_LOCK_ID = "workspace-forget";

/** Workspace id → its state root. */
export type Registry = Record<string, string>;

function corrupt(file: string, detail: string): StateError {
  return new StateError(`Cannot read workspace registry "${file}": ${detail}`, {
    code: "REGISTRY_CORRUPT",
    hint: "Fix or remove the file, then prepare the workspaces again",
  });
}

/**
 * Reads the registry; an absent registry is empty.
 *
 * @throws {StateError} (`REGISTRY_CORRUPT`) when it is not a JSON object of
 * strings.
 */
export async function readRegistry(
  options: StateHomeOptions = {},
): Promise<Registry> {
  const file = registryFile(options);
  const text = await readTextIfExists(file);
  if (text === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(file, errorText(error));
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw corrupt(file, "expected an object of id: state root");
  }
  for (const [id, root] of Object.entries(value)) {
    if (typeof root !== "string") {
      throw corrupt(file, `the entry "${id}" is not a path`);
    }
  }
  // fromEntries makes every id an own key, "__proto__" included.
  return Object.fromEntries(Object.entries(value)) as Registry;
}

/** The state root registered for `id`, or `null`. */
export async function lookupWorkspace(
  id: string,
  options: StateHomeOptions = {},
): Promise<string | null> {
  const registry = await readRegistry(options);
  return Object.hasOwn(registry, id) ? registry[id]! : null;
}

/** Changes the registry under its lock, then replaces it atomically. */
async function changeRegistry(
  change: (registry: Registry) => void,
  options: StateHomeOptions,
): Promise<void> {
  const file = registryFile(options);
  const { waitForLock } = await import("../shared/lock_file.ts");
  const { writeFileAtomic } = await import("../shared/write_file.ts");
  await Deno.mkdir(dirname(file), { recursive: true, mode: DIR_MODE });
  const lock = await Deno.open(`${file}.lock`, {
    read: true,
    write: true,
    create: true,
    mode: FILE_MODE,
  });
  try {
    if (!(await waitForLock(lock, Date.now() + 30_000))) {
      throw new StateError(
        `Cannot change workspace registry "${file}": another prepare or forget held it for 30 s`,
        { code: "REGISTRY_BUSY" },
      );
    }
    const registry = await readRegistry(options);
    change(registry);
    const sorted = Object.fromEntries(
      Object.entries(registry).sort(([a], [b]) => a.localeCompare(b)),
    );
    await writeFileAtomic(file, JSON.stringify(sorted, null, 2) + "\n", {
      mode: FILE_MODE,
    });
  } finally {
    lock.close();
  }
}

/** Registers (or moves) workspace `id` at `stateRoot`. */
export async function registerWorkspace(
  id: string,
  stateRoot: string,
  options: StateHomeOptions = {},
): Promise<void> {
  await changeRegistry((registry) => {
    registry[id] = stateRoot;
  }, options);
}

/**
 * Removes workspace `id` from the registry.
 *
 * @returns The state root it had.
 * @throws {NotFoundError} (`WORKSPACE_NOT_FOUND`) when `id` is not registered.
 */
export async function unregisterWorkspace(
  id: string,
  options: StateHomeOptions = {},
): Promise<string> {
  let root: string | null = null;
  await changeRegistry((registry) => {
    if (!Object.hasOwn(registry, id)) return;
    root = registry[id]!;
    delete registry[id];
  }, options);
  if (root === null) throw unknownWorkspace(id);
  return root;
}

/**
 * Tells whether workspace `id` is still registered at `stateRoot` (a real
 * path) and the root still carries its tag.
 */
export async function isRegisteredAt(
  id: string,
  stateRoot: string,
  options: StateHomeOptions = {},
): Promise<boolean> {
  const registry = await readRegistry(options);
  if (!Object.hasOwn(registry, id)) return false;
  const given = registry[id]!;
  if (
    given !== stateRoot &&
    (await Deno.realPath(given).catch(() => given)) !== stateRoot
  ) {
    return false;
  }
  const tag = await readStateRootTag(stateRoot).catch(() => null);
  return tag?.id === id;
}

/** The error for an id that is not (or no longer) registered. */
export function unknownWorkspace(id: string): NotFoundError {
  return new NotFoundError(`Unknown workspace "${id}": it is not prepared`, {
    code: "WORKSPACE_NOT_FOUND",
    hint:
      "'prompt_runner workspace list' shows the prepared workspaces; 'prompt_runner workspace prepare WORKSPACE_YML' adds one",
  });
}

/**
 * Reads a state root's tag, or `null` when it has none.
 *
 * @throws {StateError} (`STATE_ROOT_TAG_CORRUPT`) for a tag that is not one.
 */
export async function readStateRootTag(
  stateRoot: string,
): Promise<StateRootTag | null> {
  const file = join(stateRoot, STATE_ROOT_TAG);
  let text: string | null;
  try {
    text = await readTextIfExists(file, { within: stateRoot });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  if (text === null) return null;
  let value: Record<string, unknown> | null = null;
  try {
    value = JSON.parse(text);
  } catch {
    // Reported below.
  }
  if (
    value === null || typeof value !== "object" || value.v !== 1 ||
    value.kind !== "workspace" || typeof value.id !== "string" ||
    typeof value.manifest !== "string" ||
    (value.packet !== null && typeof value.packet !== "string")
  ) {
    throw new StateError(
      `Cannot read "${file}": it is not a workspace state root tag`,
      { code: "STATE_ROOT_TAG_CORRUPT" },
    );
  }
  return value as unknown as StateRootTag;
}

/** Writes a state root's tag (atomically, never through a link). */
export async function writeStateRootTag(
  stateRoot: string,
  tag: Omit<StateRootTag, "v" | "kind">,
): Promise<void> {
  const { writeFileAtomic } = await import("../shared/write_file.ts");
  const value: StateRootTag = {
    v: 1,
    kind: "workspace",
    id: tag.id,
    manifest: tag.manifest,
    packet: tag.packet,
  };
  await writeFileAtomic(
    join(stateRoot, STATE_ROOT_TAG),
    JSON.stringify(value, null, 2) + "\n",
    { within: stateRoot },
  );
}
