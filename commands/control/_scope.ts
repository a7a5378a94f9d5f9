/**
 * Planning a confined control command (DESIGN §11), from its declaration:
 * the main thread parses the arguments once, makes the command's checks,
 * resolves where the run lives, and names the paths the worker may touch.
 * The worker gets the parsed values and the location, and parses nothing.
 * A declaration that cannot be planned is refused, never run wider.
 *
 * @module
 */

import { join, resolve } from "../../lib/shared/posix_path.ts";
import { realOrGiven } from "../../lib/shared/real_or_given.ts";
import {
  ExitCode,
  PromptRunnerError,
  UsageError,
} from "../../lib/shared/errors.ts";
import { isDirectory } from "../../lib/shared/path_exists.ts";
import { isPromptIdWord } from "../../lib/shared/prompt_id.ts";
import { resolveRunLocation } from "../../lib/workspace/resolve_run_location.ts";
import type { RunLocation } from "../../lib/workspace/run_location.ts";
import { isWorkspaceId } from "../../lib/workspace/workspace_file.ts";
import { lookupWorkspace } from "../../lib/workspace/registry.ts";
import { type FlagSpec, parseCommandArgs, stringFlag } from "../_args.ts";
import type { CommandContext } from "../_context.ts";
import type {
  ControlDeclaration,
  ControlInput,
  FlagValues,
  TargetKind,
  Writes,
} from "./_declare.ts";
import { isTargetWord, WORKSPACE_FLAGS } from "./_target.ts";
import {
  FLEET_FLAGS,
  type FleetChoice,
  requireFleet,
} from "../_fleet_flags.ts";
import { plainLocation } from "../../lib/workspace/run_location.ts";
import { fleetTargetParts } from "../../lib/fleet/fleet_names.ts";

/**
 * The environment variables a control command's worker reads: the author's
 * name, the debug switch, and the two the yaml package reads while it
 * parses a packet.
 */
export const CONTROL_ENV: readonly string[] = [
  "LOG_STREAM",
  "LOG_TOKENS",
  "USER",
  "LOGNAME",
  "USERNAME",
  "PROMPT_RUNNER_DEBUG",
];

/** What a confined command may touch, and what its work gets. */
export interface ControlPlan {
  /** The parsed values, the location and what the checks prepared. */
  input: ControlInput<unknown>;
  /** Paths the worker may read (recursively). */
  read: string[];
  /** Paths the worker may write (recursively). */
  write: string[];
  /** The `host:port`s it may connect to (a fleet's servers), if any. */
  net: string[];
}

const TARGETS: readonly TargetKind[] = ["location", "steer", "contract"];
const WRITES: readonly Writes[] = ["nothing", "requests", "amendments"];
const RESERVED = [
  "help",
  "state-root",
  ...Object.keys(WORKSPACE_FLAGS),
  ...Object.keys(FLEET_FLAGS),
];

/** A declaration the planner cannot plan: a bug, refused. */
function cannotPlan(name: string, detail: string): never {
  throw new PromptRunnerError(
    `Cannot plan "control ${name}": ${detail}; it was not run`,
    {
      code: "CANNOT_PLAN",
      exitCode: ExitCode.INTERNAL,
      hint:
        "This is a bug in the command's declaration (commands/control/); nothing was read or written",
    },
  );
}

/** Checks that a declaration says everything the planner needs. */
function checkDeclaration(
  name: string,
  declaration: ControlDeclaration,
): void {
  if (!TARGETS.includes(declaration.target)) {
    cannotPlan(
      name,
      `unknown target kind ${JSON.stringify(declaration.target)}`,
    );
  }
  if (!WRITES.includes(declaration.writes)) {
    cannotPlan(name, `unknown writes ${JSON.stringify(declaration.writes)}`);
  }
  for (const [flag, spec] of Object.entries(declaration.flags)) {
    if (RESERVED.includes(flag)) {
      cannotPlan(name, `--${flag} is the planner's own flag`);
    }
    if (spec.type !== "string" && spec.type !== "boolean") {
      cannotPlan(name, `--${flag} has no type`);
    }
  }
  const persist = declaration.persist;
  if (persist !== undefined) {
    if (declaration.flags[persist]?.type !== "boolean") {
      cannotPlan(name, `its persist flag --${persist} is not a boolean flag`);
    }
    if (declaration.writes !== "amendments") {
      cannotPlan(name, "only an amendment may rewrite the packet's prompts");
    }
  }
}

/**
 * The paths a worker confined to a run may touch: read its state root and
 * packet, and `/etc/passwd` (the author's account name when `$USER` is
 * unset); write its state root unless it writes nothing; with `persist`,
 * write the packet's `prompts/` too (the prompt file is replaced through a
 * temporary file beside it). Each is granted by the name given and by its
 * real name: Deno compares names, and a packet directory that is a link is
 * read by its real path (its default state root too). The control commands
 * and the dashboard's actions both run in this scope.
 */
export async function runScope(
  location: Pick<RunLocation, "state_root" | "packet_dir">,
  persist: boolean,
  writes: Writes = "amendments",
): Promise<{ read: string[]; write: string[] }> {
  const both = async (path: string): Promise<string[]> => {
    const real = await realOrGiven(path);
    return real === path ? [path] : [path, real];
  };
  const root = await both(location.state_root);
  const packet = location.packet_dir === null
    ? []
    : await both(location.packet_dir);
  const read = [...root, ...packet];
  // Asked only when granted: a worker cannot have more than its parent.
  const passwd = { name: "read", path: "/etc/passwd" } as const;
  if ((await Deno.permissions.query(passwd)).state === "granted") {
    read.push(passwd.path);
  }
  const write = writes === "nothing" ? [] : [...root];
  if (persist) write.push(...packet.map((dir) => join(dir, "prompts")));
  return { read, write };
}

/** Splits `[TARGET] PROMPT_ID`, refusing what cannot be one. */
async function promptTarget(
  name: string,
  positionals: string[],
  cwd: string,
): Promise<{ target: string | undefined; promptId: string }> {
  if (positionals.length > 2) {
    throw new UsageError(
      `Too many arguments: expected [TARGET] PROMPT_ID, found ${positionals.length} arguments`,
      { hint: `Run 'prompt_runner control ${name} --help'` },
    );
  }
  const promptId = positionals.at(-1);
  if (
    promptId === undefined ||
    (positionals.length === 1 && !isPromptIdWord(promptId) &&
      (await isDirectory(resolve(cwd, promptId)) ||
        (isWorkspaceId(promptId) && await lookupWorkspace(promptId) !== null)))
  ) {
    throw new UsageError("A prompt id is required", {
      hint: `Run 'prompt_runner control ${name} [TARGET] PROMPT_ID'`,
    });
  }
  return {
    target: positionals.length === 2 ? positionals[0] : undefined,
    promptId,
  };
}

/**
 * Plans control command `name`: parses `argv` by its declaration, makes its
 * checks, resolves its run and names its scope.
 *
 * @returns The plan, or `"help"` when the arguments ask for help.
 * @throws {UsageError} for bad arguments, {@linkcode NotFoundError} when
 * the run cannot be found (the errors the command always reported), and a
 * {@linkcode PromptRunnerError} `CANNOT_PLAN` (exit 70) when the
 * declaration cannot be planned: nothing is run.
 */
export async function planControl(
  name: string,
  declaration: ControlDeclaration,
  argv: string[],
  context: Pick<CommandContext, "cwd" | "stdin">,
): Promise<ControlPlan | "help"> {
  checkDeclaration(name, declaration);
  const specs: Record<string, FlagSpec> = {};
  for (const [flag, spec] of Object.entries(declaration.flags)) {
    specs[flag] = { type: spec.type };
  }
  const args = parseCommandArgs(`control ${name}`, argv, {
    ...specs,
    ...WORKSPACE_FLAGS,
    ...FLEET_FLAGS,
    "state-root": { type: "string" },
  });
  if (args.values.help) return "help";
  const values: FlagValues = {};
  for (const flag of Object.keys(declaration.flags)) {
    const value = args.values[flag];
    if (Array.isArray(value)) cannotPlan(name, `--${flag} repeats`);
    values[flag] = value;
  }
  const stateRoot = stringFlag(args, "state-root");
  const workspace = stringFlag(args, "workspace");
  let words = args.positionals;
  let target: string | undefined;
  if (declaration.target === "location") {
    if (words.length > 1) {
      throw new UsageError("Too many arguments: expected at most one TARGET", {
        hint: `Run 'prompt_runner control ${name} --help'`,
      });
    }
    [target, ...words] = words;
  } else if (declaration.target === "steer") {
    if (
      stateRoot === undefined && workspace === undefined &&
      words.length >= 2 && await isTargetWord(words[0]!, context.cwd)
    ) {
      [target, ...words] = words;
    }
  }
  const checked = {
    values,
    words,
    ...(context.stdin === undefined ? {} : { stdin: context.stdin }),
  };
  const prepared = await declaration.prepare?.(checked);
  if (declaration.target === "contract") {
    const split = await promptTarget(name, words, context.cwd);
    target = split.target;
    words = [split.promptId];
  }
  if (target?.startsWith("fleet:")) {
    return await planFleet(target, { values, words, prepared }, args.values, {
      cwd: context.cwd,
      stateRoot,
      workspace,
    });
  }
  const location = await resolveRunLocation(target, {
    needs: declaration.target === "contract"
      ? "packet_and_state_root"
      : "state_root",
    cwd: context.cwd,
    stateRoot,
    // A steer's hints name no command (its TARGET is optional twice over).
    ...(declaration.target === "steer" ? {} : { command: `control ${name}` }),
    workspace,
    packet: stringFlag(args, "packet"),
  });
  const persist = declaration.persist !== undefined &&
    values[declaration.persist] === true;
  const { read, write } = await runScope(
    location,
    persist,
    declaration.writes,
  );
  return {
    input: { values, words, prepared, location, fleet: null },
    read,
    write,
    net: [],
  };
}

/**
 * Plans a command on a fleet run: its worker reads no state root and
 * writes nothing; it may connect to the fleet's servers, and read the
 * creds and CA files named for them.
 */
async function planFleet(
  target: string,
  input: Pick<ControlInput<unknown>, "values" | "words" | "prepared">,
  flags: Record<string, unknown>,
  options: {
    cwd: string;
    stateRoot: string | undefined;
    workspace: string | undefined;
  },
): Promise<ControlPlan> {
  if (options.stateRoot !== undefined || options.workspace !== undefined) {
    throw new UsageError(
      `A fleet TARGET names its run: --state-root and --workspace do not go with ${target}`,
    );
  }
  // A malformed TARGET is a usage error before any fleet is reached.
  fleetTargetParts(target);
  const fleet = requireFleet(flags, options.cwd, target);
  return {
    input: {
      ...input,
      location: plainLocation(null, target, false),
      fleet: { target, fleet },
    },
    ...await fleetScope(fleet),
  };
}

/**
 * What a worker confined to a fleet may touch: connect to the fleet's
 * servers and nothing else on the network, read the creds and CA files
 * named for them (and `/etc/passwd`, for the author's account name), write
 * nothing. The control commands on fleet TARGETs and the dashboard's
 * actions on fleet runs both run in this scope.
 */
export async function fleetScope(
  fleet: FleetChoice,
): Promise<{ read: string[]; write: string[]; net: string[] }> {
  const read = [fleet.creds_file, fleet.ca_file].filter((path) =>
    path !== null
  );
  const passwd = { name: "read", path: "/etc/passwd" } as const;
  if ((await Deno.permissions.query(passwd)).state === "granted") {
    read.push(passwd.path);
  }
  return { read, write: [], net: [...fleet.parsed.hosts] };
}
