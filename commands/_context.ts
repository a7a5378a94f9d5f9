/**
 * What every command gets from `main.ts`.
 *
 * @module
 */

import type { Writer } from "./_output.ts";

/** The environment a command runs in. */
export interface CommandContext {
  /** Results go here. */
  stdout: Writer;
  /** Hints, warnings and progress go here. */
  stderr: Writer;
  /** Whether stdout may carry colour (a terminal, and no NO_COLOR). */
  color: boolean;
  /** The working directory. */
  cwd: string;
  /** Standard input, for commands that read it (default: `Deno.stdin`). */
  stdin?: ReadableStream<Uint8Array>;
}

/** What the CLI says about a command: its name, summary and help. */
export interface CommandInfo {
  /** The command's name (`run`, `status`, `control events`). */
  name: string;
  /** One line for the root help. */
  summary: string;
  /** The full `--help` text. */
  help: string;
}

/** A CLI command: its description and its code. */
export interface Command extends CommandInfo {
  /** Runs the command and returns its exit code. */
  run(context: CommandContext, args: string[]): Promise<number>;
}

/**
 * A command as a registry lists it: named and summarised without loading its
 * code, which is imported only when the command runs (or, for a command that
 * keeps its help beside its code, when its help is asked for).
 */
export interface CommandEntry {
  /** The command's name. */
  name: string;
  /** One line for the list of commands. */
  summary: string;
  /** The full `--help` text. */
  help(): Promise<string>;
  /** Imports the command's module. */
  load(): Promise<Command>;
}
