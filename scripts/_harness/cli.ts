/**
 * Where the CLI is and the argv that starts it, for the scripts and the
 * tests alike (`tests/_helpers/run_cli.ts` re-exports these).
 *
 * @module
 */

import { join } from "node:path";
import { CLI_PERMISSIONS } from "../permissions.ts";

/** The repository root. */
export const ROOT: string = join(import.meta.dirname!, "..", "..");
/** The CLI entry point. */
export const MAIN: string = join(ROOT, "main.ts");
export { CLI_PERMISSIONS };

/** The argv that starts the CLI (or another entry with its permissions). */
export function cliArgs(
  args: string[],
  denoFlags: string[] = [],
  entry: string = MAIN,
): string[] {
  return ["run", "--quiet", ...CLI_PERMISSIONS, ...denoFlags, entry, ...args];
}
