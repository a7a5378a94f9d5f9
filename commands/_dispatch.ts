/**
 * Running a registry's command: a bare `--help` is answered from the
 * registry, so asking for help never loads the command's code.
 *
 * @module
 */

import type { CommandContext, CommandEntry, CommandInfo } from "./_context.ts";

/** Tells whether the arguments only ask for help (`--help`, `-h`). */
export function onlyAsksForHelp(args: readonly string[]): boolean {
  return args.length > 0 &&
    args.every((arg) => arg === "--help" || arg === "-h");
}

/**
 * Runs a command: prints its help when that is all the arguments ask for,
 * else imports its module and runs it.
 *
 * @returns The exit code.
 */
export async function runEntry(
  entry: CommandEntry,
  context: CommandContext,
  args: string[],
): Promise<number> {
  if (onlyAsksForHelp(args)) {
    await context.stdout.write(await entry.help());
    return 0;
  }
  return await (await entry.load()).run(context, args);
}

/** A registry entry for a command described apart from its code. */
export function describedEntry(
  info: CommandInfo,
  load: CommandEntry["load"],
): CommandEntry {
  return {
    name: info.name,
    summary: info.summary,
    help: () => Promise.resolve(info.help),
    load,
  };
}

/**
 * Imports a module of `commands/` by its path from this folder. The
 * specifier is built at run time on purpose: the runtime loads the module
 * graph behind every literal `import("…")` at startup, which would make each
 * command pay for all the others. `scripts/compile.ts` includes these
 * modules in the binary, and the registry test loads every one.
 */
export async function importCommand<T>(path: string): Promise<T> {
  const url = new URL(path, import.meta.url).href;
  return await import(url);
}
