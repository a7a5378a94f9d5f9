#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net
/**
 * The prompt_runner command line: parses the command, dispatches to
 * `commands/`, and turns errors into `error:` lines and exit codes.
 *
 * @module
 */

import { COMMANDS } from "./commands/_registry.ts";
import type { CommandContext } from "./commands/_context.ts";
import { runEntry } from "./commands/_dispatch.ts";
import { StdoutClosedError, Writer } from "./commands/_output.ts";
// The files, not the shared barrel: this module loads on every start.
import {
  errorText,
  ExitCode,
  isEnvironmentError,
  PromptRunnerError,
} from "./lib/shared/errors.ts";
import denoJson from "./deno.json" with { type: "json" };
import { primeOwnProc } from "./lib/shared/_own_proc.ts";

// First, before any await: `run` needs the signal dispositions it inherited
// (nohup), which Deno replaces soon after start.
if (Deno.args[0] === "run") primeOwnProc();

const VERSION: string = denoJson.version;

function rootHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `prompt_runner ${VERSION}: run packets of prompts against coding agents,
verify each result, and watch and steer live runs from another process.

Usage: prompt_runner COMMAND [options]

Commands:
${
    COMMANDS.map((command) =>
      `  ${command.name.padEnd(width)}  ${command.summary}`
    )
      .join("\n")
  }

Options:
  -h, --help       Show help (also after any command)
  -V, --version    Show the version
  --debug          Show stack traces for internal errors

Exit codes:
  0 ok   1 the run failed   2 usage error   3 not found
  4 refused by state   5 a followed run ended without run_finished
  70 internal error   129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM

Run 'prompt_runner COMMAND --help' for a command's options.
`;
}

function debugEnabled(args: string[]): boolean {
  if (args.includes("--debug")) return true;
  try {
    return Deno.env.get("PROMPT_RUNNER_DEBUG") === "1";
  } catch {
    return false;
  }
}

/**
 * Runs the CLI with the given arguments and returns the exit code.
 *
 * @param args The arguments after the program name.
 * @param context Where output goes; the real stdout and stderr by default.
 * @returns The exit code.
 */
export async function main(
  args: string[],
  context: CommandContext = {
    stdout: new Writer(Deno.stdout),
    // Errors and warnings quote packets, agents and operators: shown, never obeyed.
    stderr: new Writer(Deno.stderr, { terminalSafe: true }),
    color: Deno.stdout.isTerminal() && !Deno.noColor,
    cwd: Deno.cwd(),
  },
): Promise<number> {
  const debug = debugEnabled(args);
  const rest = args.filter((arg) => arg !== "--debug");
  try {
    const [name, ...commandArgs] = rest;
    if (name === undefined) {
      await context.stderr.write(rootHelp());
      return ExitCode.USAGE;
    }
    if (name === "--help" || name === "-h" || name === "help") {
      const command = COMMANDS.find((c) => c.name === commandArgs[0]);
      await context.stdout.write(command ? await command.help() : rootHelp());
      return ExitCode.OK;
    }
    if (name === "--version" || name === "-V") {
      await context.stdout.line(`prompt_runner ${VERSION}`);
      return ExitCode.OK;
    }
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) {
      await context.stderr.line(`error: Unknown command "${name}"`);
      await context.stderr.line(
        `hint: Commands are ${
          COMMANDS.map((c) => c.name).join(", ")
        }; run 'prompt_runner --help'`,
      );
      return ExitCode.USAGE;
    }
    return await runEntry(command, context, commandArgs);
  } catch (error) {
    return await report(error, context, debug);
  }
}

async function report(
  error: unknown,
  context: CommandContext,
  debug: boolean,
): Promise<number> {
  if (error instanceof StdoutClosedError) return ExitCode.OK;
  try {
    if (error instanceof PromptRunnerError) {
      await context.stderr.line(`error: ${error.message}`);
      if (error.hint) await context.stderr.line(`hint: ${error.hint}`);
      if (debug && error.stack) await context.stderr.line(error.stack);
      return error.exitCode;
    }
    const message = errorText(error);
    if (isEnvironmentError(error)) {
      // A full disk or an I/O error is the environment's failure, not a bug.
      await context.stderr.line(`error: ${message}`);
      await context.stderr.line(
        "hint: Free space (or fix the file system) and try again",
      );
      return ExitCode.RUN_FAILED;
    }
    await context.stderr.line(`error: internal error: ${message}`);
    if (debug && error instanceof Error && error.stack) {
      await context.stderr.line(error.stack);
    } else {
      await context.stderr.line(
        "hint: This is a bug; rerun with --debug and report the output",
      );
    }
  } catch {
    // stderr is gone too: nothing more to say.
  }
  return error instanceof PromptRunnerError
    ? error.exitCode
    : isEnvironmentError(error)
    ? ExitCode.RUN_FAILED
    : ExitCode.INTERNAL;
}

if (import.meta.main) {
  const code = await main(Deno.args);
  // A run that ended exits now: nothing an agent left behind (a process
  // holding a pipe, whatever it is) may keep the runner alive after it.
  if (Deno.args[0] === "run") Deno.exit(code);
  Deno.exitCode = code;
}
