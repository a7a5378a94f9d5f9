/**
 * The workspace half of TARGET resolution (DESIGN §10): `--workspace FILE`,
 * a workspace id, a tagged state root, and with no TARGET the workspace
 * related to the current directory.
 *
 * @module
 */

import { join, resolve } from "../shared/posix_path.ts";
import { NotFoundError, UsageError } from "../shared/errors.ts";
import { pathExists } from "../shared/path_exists.ts";
import { MANIFEST_FILE } from "../packet/packet.ts";
import type { StateHomeOptions } from "./state_home.ts";
import { defaultStateRoot, type RunLocation } from "./run_location.ts";
import {
  isWithin,
  isWorkspaceId,
  loadWorkspaceFile,
  type WorkspaceFile,
} from "./workspace_file.ts";
import {
  readRegistry,
  readStateRootTag,
  type StateRootTag,
} from "./registry.ts";
import { stateRootPaths } from "../shared/state_root_layout.ts";

/** What the workspace resolution needs to know of the command. */
export interface WorkspaceLookup extends StateHomeOptions {
  /** What the command needs (see `LocationNeed`). */
  needs: "packet" | "state_root" | "packet_and_state_root";
  /** The directory relative paths are resolved against. */
  cwd: string;
  /** `--workspace FILE`. */
  workspace?: string | undefined;
  /** `--packet DIR` (with a workspace). */
  packet?: string | undefined;
  /** `--state-root DIR`. */
  stateRoot?: string | undefined;
  /** The command, for hints. */
  command?: string | undefined;
}

/** Tells whether a directory is a state root (it holds `state.json` or `control/`). */
export async function isStateRoot(dir: string): Promise<boolean> {
  const paths = stateRootPaths(dir);
  return await pathExists(paths.state) || await pathExists(paths.dir);
}

async function readTag(dir: string): Promise<StateRootTag | null> {
  try {
    return await readStateRootTag(dir);
  } catch {
    return null;
  }
}

function noPacket(id: string, options: WorkspaceLookup): UsageError {
  const command = options.command ?? "COMMAND";
  return new UsageError(
    `Workspace "${id}" has no packet binding: "${command}" needs a packet`,
    {
      code: "NO_PACKET_BINDING",
      hint:
        `Use 'prompt_runner ${command} --workspace WORKSPACE_YML --packet DIR ...', or add 'packet:' to the workspace file`,
    },
  );
}

async function packetDirOf(
  given: string,
  options: WorkspaceLookup,
): Promise<string> {
  const dir = resolve(options.cwd, given);
  if (!(await pathExists(join(dir, MANIFEST_FILE)))) {
    throw new NotFoundError(
      `Cannot find packet "${given}": it has no ${MANIFEST_FILE}`,
      { code: "PACKET_NOT_FOUND" },
    );
  }
  return await Deno.realPath(dir);
}

/** The location of a workspace whose file is loaded. */
async function fromFile(
  file: WorkspaceFile,
  root: string,
  options: WorkspaceLookup,
): Promise<RunLocation> {
  const packet = options.packet !== undefined
    ? await packetDirOf(options.packet, options)
    : file.packet;
  if (packet === null && options.needs !== "state_root") {
    throw noPacket(file.id, options);
  }
  return {
    packet_dir: packet,
    state_root: root,
    default_state_root: false,
    workspace_id: file.id,
    workspace_file: file.file,
    repo_overrides: file.repos,
    ...(file.fleet === null ? {} : { fleet: file.fleet }),
    ...(file.notify.length === 0 ? {} : { notify: file.notify }),
  };
}

/** The location of a prepared workspace, from its state root's tag. */
async function fromTag(
  root: string,
  tag: StateRootTag,
  options: WorkspaceLookup,
): Promise<RunLocation> {
  if (options.needs === "state_root" && options.packet === undefined) {
    // The control commands that act on the run need only the root: they
    // work even when the workspace file has moved.
    return {
      packet_dir: tag.packet,
      state_root: root,
      default_state_root: false,
      workspace_id: tag.id,
      workspace_file: tag.manifest,
      repo_overrides: {},
    };
  }
  let file: WorkspaceFile;
  try {
    file = await loadWorkspaceFile(tag.manifest, options);
  } catch (error) {
    if (
      error instanceof NotFoundError && error.message.includes(tag.manifest)
    ) {
      throw new NotFoundError(
        `Cannot find the workspace file "${tag.manifest}" of workspace "${tag.id}"`,
        {
          code: "WORKSPACE_NOT_FOUND",
          hint:
            "Prepare the workspace again from where its file is now: 'prompt_runner workspace prepare WORKSPACE_YML'",
        },
      );
    }
    throw error;
  }
  return await fromFile(file, root, options);
}

/** A registered workspace: its id, state root and tag. */
interface Registered {
  id: string;
  root: string;
  tag: StateRootTag;
}

/**
 * The registered workspaces whose packet or one of whose repos contains
 * `cwd` (the directory itself or a parent).
 */
export async function relatedWorkspaces(
  cwd: string,
  options: StateHomeOptions = {},
): Promise<Registered[]> {
  const here = await Deno.realPath(cwd).catch(() => resolve(cwd));
  const registry = await readRegistry(options);
  const found: Registered[] = [];
  for (const id of Object.keys(registry).sort()) {
    const root = registry[id]!;
    const tag = await readTag(root);
    if (tag === null || tag.id !== id) continue;
    const dirs = tag.packet === null ? [] : [tag.packet];
    try {
      const file = await loadWorkspaceFile(tag.manifest, { ...options, cwd });
      if (file.packet !== null) dirs.push(file.packet);
      dirs.push(...Object.values(file.repos));
    } catch {
      // A workspace file gone or broken: its packet still relates.
    }
    if (dirs.some((dir) => isWithin(here, dir))) found.push({ id, root, tag });
  }
  return found;
}

/**
 * Resolves TARGET when it is about a workspace: `--workspace FILE`, a
 * registered id, a tagged state root, or (no TARGET) the workspace related
 * to the current directory.
 *
 * @returns The location, or `null` when TARGET is not about a workspace
 * (then it is a packet directory or a plain state root).
 * @throws {UsageError} for a TARGET given with `--workspace`, `--packet`
 * without a workspace, a workspace without the packet the command needs, or
 * several workspaces related to the current directory (exit 2, listing them).
 * @throws {NotFoundError} for an id that is not (or no longer) prepared.
 */
export async function workspaceLocation(
  target: string | undefined,
  options: WorkspaceLookup,
): Promise<RunLocation | null> {
  const conflict = (what: string): UsageError =>
    new UsageError(`Give ${what}, not both`, {
      hint: `Run 'prompt_runner ${options.command ?? "COMMAND"} --help'`,
    });
  if (options.workspace !== undefined) {
    if (target !== undefined) throw conflict("a TARGET or --workspace FILE");
    if (options.stateRoot !== undefined) {
      throw conflict("--workspace FILE or --state-root DIR");
    }
    const file = await loadWorkspaceFile(options.workspace, options);
    return await fromFile(file, file.state_root, options);
  }
  if (target !== undefined) {
    if (isWorkspaceId(target)) {
      const root = (await readRegistry(options))[target];
      if (root !== undefined) {
        if (options.stateRoot !== undefined) {
          throw conflict("a workspace id or --state-root DIR");
        }
        const tag = await readTag(root);
        if (tag === null) {
          throw new NotFoundError(
            `Cannot use workspace "${target}": its state root "${root}" is gone or untagged`,
            {
              code: "WORKSPACE_NOT_FOUND",
              hint:
                "Prepare it again: 'prompt_runner workspace prepare WORKSPACE_YML'",
            },
          );
        }
        return await fromTag(root, tag, options);
      }
    }
    const dir = resolve(options.cwd, target);
    const tag = options.stateRoot === undefined ? await readTag(dir) : null;
    if (tag !== null) return await fromTag(dir, tag, options);
    if (options.packet !== undefined) {
      throw new UsageError(
        "--packet DIR goes with --workspace FILE or a workspace id",
      );
    }
    return null;
  }
  if (options.packet !== undefined) {
    throw new UsageError(
      "--packet DIR goes with --workspace FILE or a workspace id",
    );
  }
  if (options.stateRoot !== undefined) return null;
  const cwdTag = await readTag(options.cwd);
  if (cwdTag !== null) return await fromTag(options.cwd, cwdTag, options);
  const isPacket = await pathExists(join(options.cwd, MANIFEST_FILE));
  if (
    (isPacket && await pathExists(defaultStateRoot(options.cwd))) ||
    await isStateRoot(options.cwd)
  ) {
    return null;
  }
  const related = await relatedWorkspaces(options.cwd, options);
  if (related.length === 1) {
    return await fromTag(related[0]!.root, related[0]!.tag, options);
  }
  if (related.length > 1) {
    throw new UsageError(
      `Several workspaces relate to "${options.cwd}": ${
        related.map((w) => w.id).join(", ")
      }`,
      {
        code: "AMBIGUOUS_WORKSPACE",
        hint: `Name one: 'prompt_runner ${options.command ?? "COMMAND"} ${
          related[0]!.id
        }'`,
      },
    );
  }
  return null;
}
