/**
 * Resolving a command's TARGET: a packet directory, or the current directory.
 *
 * @module
 */

import { defaultStateRoot } from "../lib/workspace/mod.ts";
import { join, resolve } from "node:path";
import { MANIFEST_FILE } from "../lib/packet/mod.ts";
import { isDirectory, NotFoundError } from "../lib/shared/mod.ts";
import { elidePath } from "../lib/shared/errors.ts";

/** A resolved target: where the packet is and where its state lives. */
export interface Target {
  /** The packet directory. */
  packetDir: string;
  /** The state root. */
  stateRoot: string;
}

/**
 * Resolves TARGET (a packet directory, or omitted for the current
 * directory) and the state root (`--state-root`, or the packet's
 * `.prompt_runner/`).
 *
 * @throws {NotFoundError} when the target is not a packet directory.
 */
export async function resolveTarget(
  target: string | undefined,
  cwd: string,
  stateRoot?: string,
): Promise<Target> {
  const dir = resolve(cwd, target ?? ".");
  if (!(await isDirectory(dir))) {
    throw new NotFoundError(
      `Cannot find packet "${elidePath(target ?? dir)}": no such directory`,
      { code: "PACKET_NOT_FOUND" },
    );
  }
  const manifest = join(dir, MANIFEST_FILE);
  try {
    await Deno.stat(manifest);
  } catch {
    throw new NotFoundError(
      `Cannot find packet "${
        elidePath(target ?? dir)
      }": it has no ${MANIFEST_FILE}`,
      {
        code: "PACKET_NOT_FOUND",
        hint: target === undefined
          ? "Name the packet directory, or run the command inside it"
          : "A packet is a directory with prompt_runner_packet.md and prompts/",
      },
    );
  }
  return {
    packetDir: dir,
    stateRoot: stateRoot === undefined
      ? defaultStateRoot(dir)
      : resolve(cwd, stateRoot),
  };
}
