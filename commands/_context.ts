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

/** A CLI command. */
export interface Command {
  /** The command's name (`run`, `status`, `control events`). */
  name: string;
  /** One line for the root help. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  /** Runs the command and returns its exit code. */
  run(context: CommandContext, args: string[]): Promise<number>;
}
