/**
 * Resolving a control command's TARGET to a state root and its current run.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { currentRun, type RunRef } from "../../lib/control/mod.ts";
import { MANIFEST_FILE } from "../../lib/packet/mod.ts";
import { NotFoundError } from "../../lib/shared/mod.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Tells whether a path is a packet directory (it has a manifest). */
export async function isPacketDir(path: string): Promise<boolean> {
  return await exists(join(path, MANIFEST_FILE));
}

/**
 * Resolves TARGET to a state root: `--state-root` wins; otherwise TARGET (or
 * the current directory) is a packet directory, whose state root is its
 * `.prompt_runner/`, or a state root itself (it has `control/`).
 *
 * @throws {NotFoundError} when TARGET is neither.
 */
export async function resolveStateRoot(
  target: string | undefined,
  cwd: string,
  stateRoot: string | undefined,
): Promise<string> {
  if (stateRoot !== undefined) return resolve(cwd, stateRoot);
  const dir = resolve(cwd, target ?? ".");
  if (await isPacketDir(dir)) return join(dir, ".prompt_runner");
  if (await exists(join(dir, "control"))) return dir;
  const shown = target ?? dir;
  if (!(await exists(dir))) {
    throw new NotFoundError(
      `Cannot find packet "${shown}": no such directory`,
      {
        code: "PACKET_NOT_FOUND",
      },
    );
  }
  throw new NotFoundError(
    `Cannot find packet "${shown}": it has no ${MANIFEST_FILE} and is not a state root`,
    {
      code: "PACKET_NOT_FOUND",
      hint: "Name a packet directory, or pass --state-root DIR",
    },
  );
}

/** Resolves TARGET to the current run of its state root. */
export async function resolveRun(
  target: string | undefined,
  cwd: string,
  stateRoot: string | undefined,
): Promise<RunRef> {
  return await currentRun(await resolveStateRoot(target, cwd, stateRoot));
}
