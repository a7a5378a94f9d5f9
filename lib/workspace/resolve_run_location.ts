/**
 * Resolving a command's TARGET to a {@linkcode RunLocation}: the one place
 * every command finds where its run lives.
 *
 * @module
 */

import { join, resolve } from "../shared/posix_path.ts";
import { controlPaths } from "../control/paths.ts";
import { MANIFEST_FILE } from "../packet/packet.ts";
import { elidePath, NotFoundError } from "../shared/errors.ts";
import { isDirectory, pathExists } from "../shared/path_exists.ts";
import { isStateRoot, workspaceLocation } from "./workspace_location.ts";
import { isWorkspaceId } from "./workspace_file.ts";
import {
  defaultStateRoot,
  type PacketRunLocation,
  plainLocation,
  type RunLocation,
} from "./run_location.ts";

/**
 * What a command needs of its TARGET:
 * - `packet`: a packet directory (`run`, `status`);
 * - `state_root`: a state root, from a packet directory or named itself
 *   (the control commands that act on the current run);
 * - `packet_and_state_root`: both; a state root named as TARGET gives its
 *   packet through its snapshot (`control contract`, `amend`, `relax`).
 */
export type LocationNeed = "packet" | "state_root" | "packet_and_state_root";

/** Options for {@linkcode resolveRunLocation}. */
export interface ResolveRunLocationOptions {
  /** What the command needs. */
  needs: LocationNeed;
  /** The directory relative paths are resolved against. */
  cwd: string;
  /** `--state-root`, as given. */
  stateRoot?: string | undefined;
  /** The command, for hints (`control amend`). */
  command?: string;
  /** `--workspace FILE`: the workspace file, instead of TARGET. */
  workspace?: string | undefined;
  /** `--packet DIR`: the packet of a workspace without a binding. */
  packet?: string | undefined;
  /** The environment the state home is read from (`Deno.env` when absent). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Tells whether a path is a packet directory (it has a manifest). */
export async function isPacketDir(path: string): Promise<boolean> {
  return await pathExists(join(path, MANIFEST_FILE));
}

/**
 * Resolves TARGET and `--state-root` to where the run lives. TARGET is, in
 * order: a workspace id; a state root (a workspace's, or any directory
 * holding `state.json` or `control/`); a packet directory. Without one: the
 * current directory when it is a packet with local state or a state root,
 * else the one registered workspace whose packet or repos contain it, else
 * the current directory as a packet.
 *
 * @returns The location; with `needs: "state_root"` its `packet_dir` is
 * `null` when TARGET is not a packet directory (or `--state-root` is given).
 * @throws {NotFoundError} (`PACKET_NOT_FOUND`) when TARGET is not what the
 * command needs; the message names it. (`WORKSPACE_NOT_FOUND`) for an id
 * that is not prepared, or a workspace file, packet or repo that is gone.
 * @throws {UsageError} for an invalid workspace file, a workspace without
 * the packet the command needs, or several workspaces related to the
 * current directory (`AMBIGUOUS_WORKSPACE`, naming them).
 */
export async function resolveRunLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions & {
    needs: "packet" | "packet_and_state_root";
  },
): Promise<PacketRunLocation>;
export async function resolveRunLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions,
): Promise<RunLocation>;
export async function resolveRunLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions,
): Promise<RunLocation> {
  // Workspaces first (DESIGN §10): --workspace FILE, a registered id, a
  // tagged state root, or with no TARGET the workspace related to the
  // current directory.
  const workspace = await workspaceLocation(target, {
    ...options,
    ...(options.command === undefined ? {} : { command: options.command }),
  });
  if (workspace !== null) return workspace;
  switch (options.needs) {
    case "packet":
      return await packetLocation(target, options);
    case "state_root":
      return await stateRootLocation(target, options);
    case "packet_and_state_root":
      return await contractLocation(target, options);
  }
}

const NO_RELATED =
  "no prepared workspace's packet or repos contain this directory";

/** For a TARGET that could have been a workspace id: say none is prepared. */
function noWorkspaceHint(target: string | undefined): { hint?: string } {
  return target !== undefined && isWorkspaceId(target)
    ? {
      hint:
        `No workspace "${target}" is prepared either; 'prompt_runner workspace list' shows them`,
    }
    : {};
}

function givenRoot(options: ResolveRunLocationOptions): string | undefined {
  return options.stateRoot === undefined
    ? undefined
    : resolve(options.cwd, options.stateRoot);
}

function inPacket(dir: string, root: string | undefined): PacketRunLocation {
  return plainLocation(dir, root ?? defaultStateRoot(dir), root === undefined);
}

async function packetLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions,
): Promise<PacketRunLocation> {
  const dir = resolve(options.cwd, target ?? ".");
  if (!(await isDirectory(dir))) {
    throw new NotFoundError(
      `Cannot find packet "${elidePath(target ?? dir)}": no such directory`,
      { code: "PACKET_NOT_FOUND", ...noWorkspaceHint(target) },
    );
  }
  try {
    await Deno.stat(join(dir, MANIFEST_FILE));
  } catch {
    throw new NotFoundError(
      `Cannot find packet "${
        elidePath(target ?? dir)
      }": it has no ${MANIFEST_FILE}`,
      {
        code: "PACKET_NOT_FOUND",
        hint: target === undefined
          ? `Name the packet directory or a workspace id, or run the command inside the packet (${NO_RELATED})`
          : "A packet is a directory with prompt_runner_packet.md and prompts/",
      },
    );
  }
  return inPacket(dir, givenRoot(options));
}

async function stateRootLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions,
): Promise<RunLocation> {
  const root = givenRoot(options);
  if (root !== undefined) {
    return plainLocation(null, root, false);
  }
  const dir = resolve(options.cwd, target ?? ".");
  if (await isPacketDir(dir)) return inPacket(dir, undefined);
  if (await isStateRoot(dir)) return plainLocation(null, dir, false);
  const shown = elidePath(target ?? dir);
  if (!(await pathExists(dir))) {
    throw new NotFoundError(
      `Cannot find packet "${shown}": no such directory`,
      { code: "PACKET_NOT_FOUND", ...noWorkspaceHint(target) },
    );
  }
  throw new NotFoundError(
    `Cannot find packet "${shown}": it has no ${MANIFEST_FILE} and is not a state root`,
    {
      code: "PACKET_NOT_FOUND",
      hint: target === undefined
        ? `Name a packet directory, a state root or a workspace id (${NO_RELATED})`
        : "Name a packet directory, or pass --state-root DIR",
    },
  );
}

async function contractLocation(
  target: string | undefined,
  options: ResolveRunLocationOptions,
): Promise<PacketRunLocation> {
  const dir = resolve(options.cwd, target ?? ".");
  const explicitRoot = givenRoot(options);
  if (await isPacketDir(dir)) {
    return inPacket(dir, explicitRoot);
  }
  const root = explicitRoot ?? dir;
  try {
    const snapshot = JSON.parse(
      await Deno.readTextFile(controlPaths(root).snapshot),
    );
    if (typeof snapshot.packet_dir === "string") {
      return plainLocation(snapshot.packet_dir as string, root, false);
    }
  } catch {
    // Not a state root with a recorded run.
  }
  throw new NotFoundError(
    `Cannot find packet "${
      target ?? dir
    }": it has no ${MANIFEST_FILE} and is not a state root with a recorded run`,
    {
      code: "PACKET_NOT_FOUND",
      hint: `Name the packet directory: 'prompt_runner ${
        options.command ?? "control contract"
      } PACKET PROMPT_ID'`,
    },
  );
}
