/**
 * Planning a confined control command (DESIGN §11): the main thread parses
 * the arguments and resolves where the run lives, then names the paths the
 * worker may touch and rewrites the arguments so the worker's own resolution
 * reads only inside them.
 *
 * @module
 */

import { join } from "../../lib/shared/posix_path.ts";
import { realOrGiven } from "../../lib/shared/real_or_given.ts";
import {
  type LocationNeed,
  resolveRunLocation,
  type RunLocation,
} from "../../lib/workspace/mod.ts";
import {
  type FlagSpec,
  parseCommandArgs,
  type ParsedArgs,
  stringFlag,
} from "../_args.ts";
import { isTargetWord, WORKSPACE_FLAGS } from "./_target.ts";

const STRING: FlagSpec = { type: "string" };
const BOOLEAN: FlagSpec = { type: "boolean" };
const VIEW = {
  "log-mode": STRING,
  "tool-output": STRING,
  thinking: STRING,
  diff: STRING,
};

/** How each control command names its run, and the flags it takes. */
const SHAPES: Record<
  string,
  { kind: "location" | "steer" | "contract"; flags: Record<string, FlagSpec> }
> = {
  status: { kind: "location", flags: { json: BOOLEAN } },
  events: {
    kind: "location",
    flags: { from: STRING, ...VIEW, json: BOOLEAN },
  },
  log: { kind: "location", flags: { follow: BOOLEAN, json: BOOLEAN } },
  view: { kind: "location", flags: { ...VIEW, author: STRING } },
  steer: { kind: "steer", flags: { prompt: STRING, author: STRING } },
  contract: { kind: "contract", flags: { json: BOOLEAN } },
  amend: {
    kind: "contract",
    flags: {
      "add-file": STRING,
      "add-path": STRING,
      "add-command": STRING,
      "add-contains": STRING,
      reason: STRING,
      persist: BOOLEAN,
      author: STRING,
      json: BOOLEAN,
    },
  },
  relax: {
    kind: "contract",
    flags: {
      drop: STRING,
      reason: STRING,
      confirm: BOOLEAN,
      persist: BOOLEAN,
      author: STRING,
      json: BOOLEAN,
    },
  },
};

/**
 * The environment variables a control command reads: the author's name,
 * the debug and test switches, and the two the yaml package reads while it
 * parses a packet.
 */
export const CONTROL_ENV: readonly string[] = [
  "LOG_STREAM",
  "LOG_TOKENS",
  "USER",
  "LOGNAME",
  "USERNAME",
  "PROMPT_RUNNER_DEBUG",
  "PROMPT_RUNNER_TEST_FAULT",
  // Where prepared workspaces are registered: an unplanned command (its
  // arguments wrong, its run not found) resolves again in the worker, to
  // report the same error it always did.
  "XDG_STATE_HOME",
  "HOME",
];

/** What a confined command may touch, and the arguments it runs with. */
export interface ControlScope {
  /** The arguments, with TARGET and `--state-root` made absolute. */
  argv: string[];
  /** The resolved location, or `null` when planning found an error. */
  location: RunLocation | null;
  /** Paths the worker may read (recursively). */
  read: string[] | true;
  /** Paths the worker may write (recursively). */
  write: string[];
}

/**
 * The paths a worker confined to a run may touch: read and write its state
 * root, read its packet, and read `/etc/passwd` (the author's account name
 * when `$USER` is unset); with `persist`, write the packet's `prompts/` too
 * (the prompt file is replaced through a temporary file beside it). Each
 * is granted by the name given and by its real name: Deno compares names,
 * and a packet directory that is a link is read by its real path (its
 * default state root too). The control commands and the dashboard's
 * actions both run in this scope.
 */
export async function runScope(
  location: Pick<RunLocation, "state_root" | "packet_dir">,
  persist: boolean,
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
  const write = [...root];
  if (persist) write.push(...packet.map((dir) => join(dir, "prompts")));
  return { read, write };
}

/** The argument list that gives the parsed values back, paths replaced. */
function rebuild(
  args: ParsedArgs,
  positionals: string[],
  stateRoot: string | undefined,
): string[] {
  const argv: string[] = [];
  for (const [name, value] of Object.entries(args.values)) {
    // The location is resolved here: the worker gets it as paths, never as
    // a workspace to look up (that would read outside its scope).
    if (
      name === "state-root" || name === "workspace" || name === "packet" ||
      value === undefined || value === false
    ) {
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      argv.push(one === true ? `--${name}` : `--${name}=${one}`);
    }
  }
  if (stateRoot !== undefined) argv.push(`--state-root=${stateRoot}`);
  return [...argv, "--", ...positionals];
}

/**
 * Plans a control command's scope. When the arguments are wrong or the run
 * cannot be found, the plan reads anywhere and writes nothing: the command
 * then reports the same usage or not-found error it always did.
 */
export async function planScope(
  name: string,
  argv: string[],
  cwd: string,
): Promise<ControlScope> {
  const unplanned: ControlScope = {
    argv,
    location: null,
    read: true,
    write: [],
  };
  const shape = SHAPES[name];
  if (shape === undefined) return unplanned;
  try {
    const args = parseCommandArgs(`control ${name}`, argv, {
      ...shape.flags,
      ...WORKSPACE_FLAGS,
      "state-root": STRING,
    });
    const given = args.values["state-root"];
    const stateRoot = typeof given === "string" ? given : undefined;
    let words = args.positionals;
    let target: string | undefined;
    let needs: LocationNeed = "state_root";
    if (shape.kind === "location") {
      if (words.length > 1) return unplanned;
      [target, ...words] = words;
    } else if (shape.kind === "steer") {
      if (
        stateRoot === undefined && args.values.workspace === undefined &&
        words.length >= 2 && await isTargetWord(words[0]!, cwd)
      ) {
        [target, ...words] = words;
      }
    } else {
      if (words.length !== 2 && words.length !== 1) return unplanned;
      if (words.length === 2) [target, ...words] = words;
      else if (!/^\d+$/.test(words[0]!)) return unplanned;
      needs = "packet_and_state_root";
    }
    const location = await resolveRunLocation(target, {
      needs,
      cwd,
      stateRoot,
      command: `control ${name}`,
      workspace: stringFlag(args, "workspace"),
      packet: stringFlag(args, "packet"),
    });
    const packet = location.packet_dir;
    const { read, write } = await runScope(
      location,
      args.values.persist === true,
    );
    const rewritten = shape.kind === "contract"
      ? rebuild(
        args,
        [packet ?? location.state_root, ...words],
        location.default_state_root && location.workspace_id === null
          ? undefined
          : location.state_root,
      )
      : rebuild(args, words, location.state_root);
    return { argv: rewritten, location, read, write };
  } catch {
    return unplanned;
  }
}
