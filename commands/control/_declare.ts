/**
 * A control command, declared once: its flags (with their types and help),
 * how its arguments name the run, what it may write, the checks made before
 * any file is read, and the work it does confined to its run. The help text,
 * the parsing, the scope its worker gets and the worker's entry are all
 * derived from the declaration (DESIGN §11).
 *
 * A command's module imports statically only what its declaration and its
 * checks need; `run` imports the modules of its work with literal
 * specifiers. The planner thread loads the declaration and never runs that
 * code; the worker, which may read only the run's files, gets those modules
 * with its own module graph (a literal `import()` is part of it).
 *
 * @module
 */

import type { RunLocation } from "../../lib/workspace/run_location.ts";
import type { CommandContext } from "../_context.ts";
import { FLEET_HELP, type FleetChoice } from "../_fleet_flags.ts";

/** One flag of a control command. */
export interface ControlFlag {
  /** `string` takes a value; `boolean` does not. */
  type: "string" | "boolean";
  /** The value's name in the help (`M`, `NAME`, `PATH=TEXT`). */
  arg?: string;
  /**
   * The help, beside the flag; a line break continues it under the
   * description's column.
   */
  help: string;
  /**
   * The heading of the help section it is listed under, when not
   * `Options` (`Settings (at least one)`).
   */
  section?: string;
}

/**
 * How a command's arguments name the run: `location` takes one optional
 * TARGET; `steer` takes TARGET when its first word names one and more words
 * follow; `contract` takes `[TARGET] PROMPT_ID` and needs the packet too.
 */
export type TargetKind = "location" | "steer" | "contract";

/**
 * What a command may write in its state root: nothing; requests to the run
 * (`control/requests/`, and the audit log's refusals); or amendments
 * (`amendments/`, and their audit log entries).
 */
export type Writes = "nothing" | "requests" | "amendments";

/** Flag values as parsed (the flags that name the run removed). */
export type FlagValues = Record<string, string | boolean | undefined>;

/** What a command's checks get, before any file is read. */
export interface ControlArgs {
  /** The flag values. */
  values: FlagValues;
  /** The positional arguments after TARGET (for `contract`: `[PROMPT_ID]`). */
  words: string[];
  /** Standard input, for a command that reads it. */
  stdin?: ReadableStream<Uint8Array>;
}

/** A fleet run a command was pointed at (DESIGN §12). */
export interface FleetTarget {
  /** The TARGET as given (`fleet:…`). */
  target: string;
  /** The fleet it is in. */
  fleet: FleetChoice;
}

/** What a command's work gets, in its worker. */
export interface ControlInput<P> extends ControlArgs {
  /** What `prepare` returned. */
  prepared: P;
  /**
   * Where the run lives, resolved before the worker started (for a fleet
   * TARGET, its `state_root` is the TARGET and it has no packet).
   */
  location: RunLocation;
  /** The fleet run, when TARGET is one; `null` for a run on files. */
  fleet: FleetTarget | null;
}

/**
 * A control command's declaration, exported by its module under the
 * command's name (the registry lists the name, its summary and the module).
 */
export interface ControlDeclaration<P = unknown> {
  /** The help before the flags: usage and description. */
  about: string;
  /** Its own flags, in help order (`--json` is listed after the location flags). */
  flags: Record<string, ControlFlag>;
  /** The help after the flags: exit codes, examples. */
  footer: string;
  /** How its arguments name the run. */
  target: TargetKind;
  /** What it may write in the state root. */
  writes: Writes;
  /**
   * The boolean flag that lets it rewrite the packet's `prompts/` (the
   * prompt files), when it has one.
   */
  persist?: string;
  /**
   * Checks the arguments before any file is read (a usage error is one
   * whatever state the run is in) and returns what the work needs besides
   * them, structured-cloneable. Runs on the main thread.
   */
  prepare?(args: ControlArgs): P | Promise<P>;
  /** Does the work, confined to the run; returns the exit code. */
  run(context: CommandContext, input: ControlInput<P>): Promise<number>;
}

/** `--author NAME`, for a command that records who `does` it (`asks`). */
export function authorFlag(does: string): ControlFlag {
  return {
    type: "string",
    arg: "NAME",
    help: `Who ${does} (default: $USER, else $LOGNAME, else the\n` +
      "account name of this process, else uid:N)",
  };
}

/** Declares a control command (the identity: it types `prepare`'s result). */
export function declareControl<P = undefined>(
  declaration: ControlDeclaration<P>,
): ControlDeclaration<P> {
  return declaration;
}

/** The flags that name the run, as each command's help lists them. */
function locationFlags(target: TargetKind): Record<string, ControlFlag> {
  return {
    "state-root": {
      type: "string",
      arg: "DIR",
      help: `${
        target === "contract" ? "The" : "The run's"
      } state root (default: TARGET/.prompt_runner)`,
    },
    workspace: {
      type: "string",
      arg: "FILE",
      help: "The workspace FILE describes, instead of TARGET",
    },
    packet: {
      type: "string",
      arg: "DIR",
      help: "With --workspace: the packet, when the file binds none",
    },
    fleet: { type: "string", arg: "URL", help: FLEET_HELP.fleet },
    "fleet-creds": {
      type: "string",
      arg: "FILE",
      help: FLEET_HELP["fleet-creds"],
    },
  };
}

const HELP_FLAG: ControlFlag = {
  type: "boolean",
  help: "Show this help",
};

/** Every flag a command takes, in help order. */
export function allFlags(
  declaration: Pick<ControlDeclaration, "flags" | "target">,
): Record<string, ControlFlag> {
  const { json, ...own } = declaration.flags;
  return {
    ...own,
    ...locationFlags(declaration.target),
    ...(json === undefined ? {} : { json }),
  };
}

function section(heading: string, flags: [string, ControlFlag][]): string {
  const label = ([name, flag]: [string, ControlFlag]) =>
    name === "help"
      ? "-h, --help"
      : `--${name}${flag.arg === undefined ? "" : ` ${flag.arg}`}`;
  const width = Math.max(20, ...flags.map((f) => label(f).length + 2));
  const lines = flags.map((flag) =>
    `  ${label(flag).padEnd(width)}${
      flag[1].help.replaceAll("\n", `\n${" ".repeat(width + 2)}`)
    }`
  );
  return `${heading}:\n${lines.join("\n")}`;
}

/** The command's `--help`. */
export function declaredHelp(declaration: ControlDeclaration): string {
  const sections = new Map<string, [string, ControlFlag][]>();
  const options: [string, ControlFlag][] = [];
  for (const entry of Object.entries(allFlags(declaration))) {
    const heading = entry[1].section;
    if (heading === undefined) options.push(entry);
    else sections.set(heading, [...sections.get(heading) ?? [], entry]);
  }
  options.push(["help", HELP_FLAG]);
  const parts = [...sections].map(([heading, flags]) =>
    section(heading, flags)
  );
  parts.push(section("Options", options));
  return `${declaration.about.trim()}\n\n${
    parts.join("\n\n")
  }\n\n${declaration.footer.trim()}\n`;
}
