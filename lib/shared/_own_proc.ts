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
 * Reads this process's entries at once, blocking, for a command that needs
 * the signal dispositions it inherited (`run` under nohup): Deno installs
 * its own SIGHUP, SIGINT and SIGTERM handlers a few hundred milliseconds
 * after start, from its event loop, and the inherited ignore is gone from
 * `/proc` after that. A blocking read as the first statement cannot be
 * overtaken, however slow `cat` is on a loaded machine.
 */
export function primeOwnProc(): void {
  if (own !== null || Deno.build.os !== "linux") return;
  let result: OwnProc | null = null;
  try {
    const output = new Deno.Command("cat", {
      args: [`/proc/${Deno.pid}/stat`, `/proc/${Deno.pid}/status`],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    result = output.success
      ? splitOwnProc(new TextDecoder().decode(output.stdout))
      : null;
  } catch {
    result = null;
  }
  own = Promise.resolve(result);
}

function splitOwnProc(text: string): OwnProc | null {
  const newline = text.indexOf("\n");
  if (newline < 0) return null;
  return { stat: text.slice(0, newline), status: text.slice(newline + 1) };
}

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
    // Generous: a `cat` slowed by a heavy load still answers.
    timeoutMs: 30_000,
  });
  if (result.state !== "exited" || result.code !== 0) return null;
  return splitOwnProc(result.stdout);
}
