/**
 * Whether this process was started with SIGHUP ignored (`nohup`): Deno
 * does not keep an inherited ignore, so the runner reads the disposition it
 * inherited and decides itself.
 *
 * @module
 */

import { ownProc } from "./_own_proc.ts";

/**
 * Tells whether SIGHUP was ignored when this process started, from the
 * `SigIgn` mask of `/proc/<pid>/status`, read once (by `cat`, see
 * `_own_proc.ts`).
 *
 * @returns `false` when it cannot tell (no `/proc`, no `cat`).
 */
export async function hangupIgnored(): Promise<boolean> {
  const own = await ownProc();
  if (own === null) return false;
  const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(own.status)?.[1];
  if (mask === undefined) return false;
  // SIGHUP is signal 1: the lowest bit of the mask.
  return (parseInt(mask.slice(-1), 16) & 1) === 1;
}
