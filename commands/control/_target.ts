/**
 * Resolving a control command's TARGET to its state root's current run.
 *
 * @module
 */

// Files, not the lib barrels: every control command starts here.
import type { RunRef } from "../../lib/control/paths.ts";
import { currentRun } from "../../lib/control/current_run.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import { resolve } from "../../lib/shared/posix_path.ts";
import {
  isPacketDir,
  resolveRunLocation,
} from "../../lib/workspace/resolve_run_location.ts";
import type { RunLocation } from "../../lib/workspace/run_location.ts";
import { isWorkspaceId } from "../../lib/workspace/workspace_file.ts";
import { lookupWorkspace } from "../../lib/workspace/registry.ts";
import {
  type FlagSpec,
  parseCommandArgs,
  type ParsedArgs,
  stringFlag,
} from "../_args.ts";
import type { CommandContext } from "../_context.ts";

/** The flags that name a workspace instead of TARGET (DESIGN §8). */
export const WORKSPACE_FLAGS = {
  workspace: { type: "string" },
  packet: { type: "string" },
} as const satisfies Record<string, FlagSpec>;

/** `--workspace FILE` and `--packet DIR`, as given. */
export interface WorkspaceFlags {
  /** `--workspace FILE`. */
  workspace?: string | undefined;
  /** `--packet DIR`. */
  packet?: string | undefined;
}

/** Reads `--workspace` and `--packet`. */
export function workspaceFlags(args: ParsedArgs): WorkspaceFlags {
  return {
    workspace: stringFlag(args, "workspace"),
    packet: stringFlag(args, "packet"),
  };
}

/**
 * Tells whether a command's first word names a TARGET (a packet directory or
 * a prepared workspace's id) rather than starting its text.
 */
export async function isTargetWord(
  word: string,
  cwd: string,
): Promise<boolean> {
  return await isPacketDir(resolve(cwd, word)) ||
    (isWorkspaceId(word) && await lookupWorkspace(word) !== null);
}

/** Resolves TARGET (or `--workspace FILE`) to the current run of its state root. */
export async function resolveRun(
  target: string | undefined,
  cwd: string,
  stateRoot: string | undefined,
  workspace: WorkspaceFlags = {},
): Promise<RunRef> {
  const location = await resolveRunLocation(target, {
    needs: "state_root",
    cwd,
    stateRoot,
    ...workspace,
  });
  return await currentRun(location.state_root);
}

/**
 * The prologue of a control command that takes one optional TARGET: parses
 * the flags (with `--state-root`), answers `--help`, refuses extra
 * arguments, runs `check` (usage errors come before any file is read), and
 * resolves where the run lives.
 *
 * @returns The arguments and the run's location, or `null` when help was
 * printed.
 */
export async function parseLocationCommand(
  context: CommandContext,
  name: string,
  help: string,
  argv: string[],
  flags: Record<string, FlagSpec>,
  check: (args: ParsedArgs) => void = () => {},
): Promise<{ args: ParsedArgs; location: RunLocation } | null> {
  const args = parseCommandArgs(`control ${name}`, argv, {
    ...flags,
    ...WORKSPACE_FLAGS,
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
    location: await resolveRunLocation(args.positionals[0], {
      needs: "state_root",
      cwd: context.cwd,
      stateRoot: stringFlag(args, "state-root"),
      command: `control ${name}`,
      ...workspaceFlags(args),
    }),
  };
}

/**
 * {@linkcode parseLocationCommand}, then the state root's current run.
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
  const parsed = await parseLocationCommand(
    context,
    name,
    help,
    argv,
    flags,
    check,
  );
  if (parsed === null) return null;
  return {
    args: parsed.args,
    ref: await currentRun(parsed.location.state_root),
  };
}
