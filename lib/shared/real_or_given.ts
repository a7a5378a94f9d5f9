/**
 * A path's real name even before it exists.
 *
 * @module
 */

import { basename, dirname, join } from "./posix_path.ts";

/**
 * A path's real path; for one that does not exist (yet), its parent's
 * real path with the rest appended, and so on.
 */
export async function realOrGiven(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    const parent = dirname(path);
    return parent === path
      ? path
      : join(await realOrGiven(parent), basename(path));
  }
}
