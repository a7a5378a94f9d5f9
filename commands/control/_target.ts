/**
 * Resolving a control command's TARGET to a state root and its current run.
 *
 * @module
 */

import { defaultStateRoot } from "../../lib/workspace/mod.ts";
import { join, resolve } from "node:path";
import { currentRun, type RunRef } from "../../lib/control/mod.ts";
import { MANIFEST_FILE } from "../../lib/packet/mod.ts";
import { NotFoundError, pathExists, UsageError } from "../../lib/shared/mod.ts";
import { elidePath } from "../../lib/shared/errors.ts";
import {
  type FlagSpec,
  parseCommandArgs,
  type ParsedArgs,
  stringFlag,
} from "../_args.ts";
import type { CommandContext } from "../_context.ts";

/** Tells whether a path is a packet directory (it has a manifest). */
export async function isPacketDir(path: string): Promise<boolean> {
  return await pathExists(join(path, MANIFEST_FILE));
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
  if (await isPacketDir(dir)) return defaultStateRoot(dir);
  if (await pathExists(join(dir, "control"))) return dir;
  const shown = elidePath(target ?? dir);
  if (!(await pathExists(dir))) {
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

/**
 * The prologue of a control command that takes one optional TARGET: parses
 * the flags (with `--state-root`), answers `--help`, refuses extra
 * arguments, runs `check` (usage errors come before any file is read), and
 * resolves the run.
 *
 * @returns The arguments and the run, or `null` when help was printed.
 */
export async function parseRunCommand(
  context: CommandContext,
  name: string,
  help: string,
  argv: string[],
  flags: Record<string, FlagSpec>,
  check: (args: ParsedArgs) => void = () => {},
): Promise<{ args: ParsedArgs; ref: RunRef } | null> {
  const args = parseCommandArgs(`control ${name}`, argv, {
    ...flags,
    "state-root": { type: "string" },
  });
  if (args.values.help) {
    await context.stdout.write(help);
    return null;
  }
  if (args.positionals.length > 1) {
    throw new UsageError("Too many arguments: expected at most one TARGET", {
      hint: `Run 'prompt_runner control ${name} --help'`,
    });
  }
  check(args);
  return {
    args,
    ref: await resolveRun(
      args.positionals[0],
      context.cwd,
      stringFlag(args, "state-root"),
    ),
  };
}
