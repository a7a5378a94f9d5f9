/**
 * This process's own `/proc` entries, read once. Deno refuses `/proc` to
 * anything short of `--allow-all`, so `cat` reads them (`--allow-run`): one
 * process at a run's start for both the run lock's start time and the
 * SIGHUP disposition.
 *
 * @module
 */

import { runProcess } from "./run_process.ts";

/** What this process's `/proc/<pid>/stat` and `/proc/<pid>/status` said. */
export interface OwnProc {
  /** The `stat` line. */
  stat: string;
  /** The `status` text. */
  status: string;
}

let own: Promise<OwnProc | null> | null = null;

/**
 * This process's `stat` and `status`, read at the first call.
 *
 * @returns `null` when this system cannot tell (no `/proc`, no `cat`).
 */
export function ownProc(): Promise<OwnProc | null> {
  own ??= readOwnProc();
  return own;
}

async function readOwnProc(): Promise<OwnProc | null> {
  if (Deno.build.os !== "linux") return null;
  const result = await runProcess("cat", {
    args: [`/proc/${Deno.pid}/stat`, `/proc/${Deno.pid}/status`],
    timeoutMs: 5000,
  });
  if (result.state !== "exited" || result.code !== 0) return null;
  const newline = result.stdout.indexOf("\n");
  if (newline < 0) return null;
  return {
    stat: result.stdout.slice(0, newline),
    status: result.stdout.slice(newline + 1),
  };
}
