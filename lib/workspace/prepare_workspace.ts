/**
 * Preparing and listing operator workspaces: the state root
 * outside the packet, its tag, and the registry entry (DESIGN §10).
 *
 * @module
 */

import { resolve } from "../shared/posix_path.ts";
import {
  errorText,
  NotFoundError,
  StateError,
  UsageError,
} from "../shared/errors.ts";
import { currentSnapshot } from "../control/current_run.ts";
import type { StateHomeOptions } from "./state_home.ts";
import {
  isWithin,
  loadWorkspaceFile,
  type WorkspaceFile,
} from "./workspace_file.ts";
import {
  readRegistry,
  readStateRootTag,
  registerWorkspace,
  type Registry,
  type StateRootTag,
  writeStateRootTag,
} from "./registry.ts";

/** What {@linkcode prepareWorkspace} did. */
export interface PreparedWorkspace {
  /** The workspace file as loaded. */
  workspace: WorkspaceFile;
  /** The state root's real path. */
  state_root: string;
  /** The state root the id was registered at before, if another one. */
  moved_from: string | null;
}

/** Options for {@linkcode prepareWorkspace}. */
export interface PrepareWorkspaceOptions extends StateHomeOptions {
  /** The directory relative paths are resolved against. */
  cwd: string;
  /**
   * The packet a run is about to use (`run --workspace FILE --packet DIR`),
   * when the file binds none: the state root must not contain it either.
   */
  packet?: string;
}

/**
 * Prepares the workspace a file describes: creates its state root (0700),
 * tags it with `state_root.json` and registers its id. Preparing again is
 * harmless, and moves the id when `state_root` changed.
 *
 * @throws {UsageError} for an invalid workspace file, a state root inside
 * the packet, or one that contains the packet, a repo checkout or
 * prompt_runner's state home, or is a non-empty directory prompt_runner did
 * not make (`STATE_ROOT_CLASH`).
 * @throws {NotFoundError} for a missing file, packet or repo.
 * @throws {StateError} when the state root is another workspace's, inside
 * or around another workspace's (`STATE_ROOT_NESTED`), or not usable (a
 * system, shared or home directory, not ours, not a directory).
 */
export async function prepareWorkspace(
  path: string,
  options: PrepareWorkspaceOptions,
): Promise<PreparedWorkspace> {
  const workspace = await loadWorkspaceFile(path, options);
  if (
    workspace.packet !== null &&
    isWithin(workspace.state_root, workspace.packet)
  ) {
    throw new UsageError(
      `Invalid workspace file "${workspace.file}", key "state_root": "${workspace.state_root}" is inside the packet, which a workspace never writes`,
      { code: "INVALID_WORKSPACE" },
    );
  }
  // Loaded here: resolving a TARGET (every control command) never needs it.
  const { checkStateRoot, openStateRoot } = await import(
    "../shared/state_root.ts"
  );
  // What is never a state root (a system or shared directory, another
  // user's) is refused before anything is read in it.
  await checkStateRoot(workspace.state_root);
  let existing: StateRootTag | null = null;
  try {
    existing = await readStateRootTag(workspace.state_root);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotADirectory)) throw error;
  }
  if (existing !== null && existing.id !== workspace.id) {
    throw new StateError(
      `Refused to prepare workspace "${workspace.id}": its state root "${workspace.state_root}" belongs to workspace "${existing.id}"`,
      {
        code: "STATE_ROOT_TAKEN",
        hint: "Give the workspace another state_root, or forget the other one",
      },
    );
  }
  const registry = await readRegistry(options);
  await refuseNesting(workspace, registry);
  const { checkStateRootSite } = await import("./check_state_root_site.ts");
  const packet = options.packet === undefined
    ? workspace.packet
    : resolve(options.cwd, options.packet);
  await checkStateRootSite(workspace.state_root, {
    ...options,
    source: { workspace_file: workspace.file },
    packet_dir: packet,
    repos: Object.values(workspace.repos),
  });
  const root = await openStateRoot(workspace.state_root, {
    create: true,
    repair: true,
  });
  await writeStateRootTag(root, {
    id: workspace.id,
    manifest: workspace.file,
    packet: workspace.packet,
  });
  const before = registry[workspace.id] ?? null;
  await registerWorkspace(workspace.id, root, options);
  return {
    workspace,
    state_root: root,
    moved_from: before !== null && before !== root ? before : null,
  };
}

/**
 * Refuses a state root inside or around another registered workspace's (a
 * delete of the outer one would take the inner one with it), or the same
 * (its tag gone).
 */
async function refuseNesting(
  workspace: WorkspaceFile,
  registry: Registry,
): Promise<void> {
  const { realOrGiven } = await import("../shared/real_or_given.ts");
  const mine = await realOrGiven(workspace.state_root);
  for (const [id, given] of Object.entries(registry)) {
    if (id === workspace.id) continue;
    const theirs = await realOrGiven(given);
    const detail = theirs === mine
      ? `is the state root of workspace "${id}"`
      : isWithin(theirs, mine)
      ? `contains the state root "${theirs}" of workspace "${id}"`
      : isWithin(mine, theirs)
      ? `lies inside the state root "${theirs}" of workspace "${id}"`
      : null;
    if (detail === null) continue;
    throw new StateError(
      `Refused to prepare workspace "${workspace.id}": its state root "${workspace.state_root}" ${detail}`,
      {
        code: "STATE_ROOT_NESTED",
        hint:
          "Workspaces' state roots never nest: give it a state_root of its own, or forget the other workspace",
      },
    );
  }
}

/** One prepared workspace, as {@linkcode listWorkspaces} reports it. */
export interface WorkspaceEntry {
  /** The workspace id. */
  id: string;
  /** Its state root. */
  state_root: string;
  /** Its workspace file, from the tag (`null` when the tag is missing). */
  manifest: string | null;
  /** Its bound packet, from the tag. */
  packet: string | null;
  /** Its newest run, or `null` when it never ran. */
  last_run: {
    run_id: string;
    status: string;
    started_at: string;
    updated_at: string;
  } | null;
  /** Why the entry cannot be used (a missing state root), else `null`. */
  problem: string | null;
}

/**
 * Lists the prepared workspaces, by id, with their newest run.
 *
 * Requires `--allow-read` and `--allow-env` (`XDG_STATE_HOME`, `HOME`).
 *
 * @param options Where the registry is (default: `$XDG_STATE_HOME`).
 * @returns One entry per registered id, sorted by id.
 * @throws {StateError} when the registry is not readable JSON.
 *
 * @example Usage
 * ```ts
 * import { listWorkspaces } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const home = await Deno.makeTempDir();
 * const env = { XDG_STATE_HOME: home };
 * assert.deepEqual(await listWorkspaces({ env }), []);
 * await Deno.remove(home, { recursive: true });
 * ```
 */
export async function listWorkspaces(
  options: StateHomeOptions = {},
): Promise<WorkspaceEntry[]> {
  const registry = await readRegistry(options);
  const entries: WorkspaceEntry[] = [];
  for (const id of Object.keys(registry).sort()) {
    const root = registry[id]!;
    const entry: WorkspaceEntry = {
      id,
      state_root: root,
      manifest: null,
      packet: null,
      last_run: null,
      problem: null,
    };
    try {
      const tag = await readStateRootTag(root);
      if (tag === null) {
        entry.problem = "state root missing or untagged";
      } else {
        entry.manifest = tag.manifest;
        entry.packet = tag.packet;
        const last = await currentSnapshot(root).catch((error) => {
          if (error instanceof NotFoundError) return null;
          throw error;
        });
        if (last !== null) {
          entry.last_run = {
            run_id: last.run_id,
            status: last.status,
            started_at: last.run_started_at,
            updated_at: last.updated_at,
          };
        }
      }
    } catch (error) {
      entry.problem = errorText(error);
    }
    entries.push(entry);
  }
  return entries;
}
