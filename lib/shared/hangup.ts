/**
 * Whether this process was started with SIGHUP ignored (`nohup`): Deno
 * does not keep an inherited ignore, so the runner reads the disposition it
 * inherited and decides itself.
 *
 * @module
 */

import { runProcess } from "./run_process.ts";

/**
 * Tells whether SIGHUP was ignored when this process started, from the
 * `SigIgn` mask of `/proc/<pid>/status`. Deno refuses `/proc` to anything
 * short of `--allow-all`, so the file is read by `cat` (`--allow-run`).
 *
 * @returns `false` when it cannot tell (no `/proc`, no `cat`).
 */
export async function hangupIgnored(): Promise<boolean> {
  if (Deno.build.os !== "linux") return false;
  const result = await runProcess("cat", {
    args: [`/proc/${Deno.pid}/status`],
    timeoutMs: 5000,
  });
  if (result.state !== "exited" || result.code !== 0) return false;
  const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(result.stdout)?.[1];
  if (mask === undefined) return false;
  // SIGHUP is signal 1: the lowest bit of the mask.
  return (parseInt(mask.slice(-1), 16) & 1) === 1;
}
