/**
 * Finding a program the tests drive (Chromium, `nats-server`) on PATH.
 *
 * @module
 */

import { delimiter, join } from "node:path";

/** Whether `path` is an executable file. */
export function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The first of `names` found on PATH, or `null`. */
export function onPath(...names: string[]): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(delimiter)) {
    for (const name of names) {
      if (dir && isExecutable(join(dir, name))) return join(dir, name);
    }
  }
  return null;
}
