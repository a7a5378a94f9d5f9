/**
 * Resolving `[TARGET] PROMPT_ID` for contract, amend and relax: these need
 * the packet as well as the state root.
 *
 * @module
 */

import { resolve } from "node:path";
import { controlPaths } from "../../lib/control/mod.ts";
import type { AmendTarget } from "../../lib/runner/mod.ts";
import {
  isDirectory,
  NotFoundError,
  UsageError,
} from "../../lib/shared/mod.ts";
import { isPacketDir } from "./_target.ts";

/**
 * Splits `[TARGET] PROMPT_ID` and resolves TARGET (a packet directory, or a
 * state root whose snapshot names its packet; default: the current
 * directory).
 */
export async function resolveAmendTarget(
  command: string,
  positionals: string[],
  cwd: string,
  stateRoot: string | undefined,
): Promise<{ target: AmendTarget; promptId: string }> {
  if (positionals.length > 2) {
    throw new UsageError(
      `Too many arguments: expected [TARGET] PROMPT_ID, found ${positionals.length} arguments`,
      { hint: `Run 'prompt_runner control ${command} --help'` },
    );
  }
  const promptId = positionals.at(-1);
  if (
    promptId === undefined ||
    (positionals.length === 1 && !/^\d+$/.test(promptId) &&
      await isDirectory(resolve(cwd, promptId)))
  ) {
    throw new UsageError("A prompt id is required", {
      hint: `Run 'prompt_runner control ${command} [TARGET] PROMPT_ID'`,
    });
  }
  const dir = resolve(cwd, positionals.length === 2 ? positionals[0]! : ".");
  const explicitRoot = stateRoot === undefined
    ? undefined
    : resolve(cwd, stateRoot);
  if (await isPacketDir(dir)) {
    return {
      target: explicitRoot === undefined
        ? dir
        : { packet_dir: dir, state_root: explicitRoot },
      promptId,
    };
  }
  const root = explicitRoot ?? dir;
  try {
    const snapshot = JSON.parse(
      await Deno.readTextFile(controlPaths(root).snapshot),
    );
    if (typeof snapshot.packet_dir === "string") {
      return {
        target: { packet_dir: snapshot.packet_dir, state_root: root },
        promptId,
      };
    }
  } catch {
    // Not a state root with a recorded run.
  }
  throw new NotFoundError(
    `Cannot find packet "${
      positionals.length === 2 ? positionals[0] : dir
    }": it has no prompt_runner_packet.md and is not a state root with a recorded run`,
    {
      code: "PACKET_NOT_FOUND",
      hint:
        `Name the packet directory: 'prompt_runner control ${command} PACKET PROMPT_ID'`,
    },
  );
}
