/**
 * Resolving a control command's TARGET to its state root's current run.
 *
 * @module
 */

import { currentRun, type RunRef } from "../../lib/control/mod.ts";
import { UsageError } from "../../lib/shared/mod.ts";
import { resolveRunLocation } from "../../lib/workspace/mod.ts";
import {
  type FlagSpec,
  parseCommandArgs,
  type ParsedArgs,
  stringFlag,
} from "../_args.ts";
import type { CommandContext } from "../_context.ts";

/** Resolves TARGET to the current run of its state root. */
export async function resolveRun(
  target: string | undefined,
  cwd: string,
  stateRoot: string | undefined,
): Promise<RunRef> {
  const location = await resolveRunLocation(target, {
    needs: "state_root",
    cwd,
    stateRoot,
  });
  return await currentRun(location.state_root);
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
