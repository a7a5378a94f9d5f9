/**
 * Clearing what does not belong in a state root: dot-temp files a killed
 * writer left, and links planted there (moved aside, never followed).
 *
 * @module
 */

import { basename, dirname, relative } from "./posix_path.ts";
import { anchored } from "./_anchored.ts";
import { isTempName, type WithinOptions } from "./private_files.ts";
import type { LinkRefusal } from "./run_hooks.ts";

/**
 * Removes the dot-temp files (`.NAME.xxxxxxxx.tmp`, `.NAME.claimed`) a
 * killed writer left in a directory. With `olderThanMs`, only those not
 * touched for that long.
 *
 * @returns How many were removed.
 */
export async function removeStaleTemps(
  dir: string,
  options: { olderThanMs?: number } & WithinOptions = {},
): Promise<number> {
  await Promise.resolve();
  const root = options.within ?? dirname(dir);
  const now = Date.now();
  try {
    return anchored(root, dir, (here) => {
      let removed = 0;
      for (const entry of here.list()) {
        if (!entry.isFile || !isTempName(entry.name)) continue;
        if (options.olderThanMs !== undefined) {
          const touched = here.lstat(entry.name)?.mtime?.getTime() ?? now;
          if (now - touched < options.olderThanMs) continue;
        }
        here.remove(entry.name);
        removed++;
      }
      return removed;
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
}

/**
 * Moves a link found inside a private root aside (`NAME.link-refused-TIME`):
 * a rename moves the link itself and never touches its target, and the
 * path is free for a real file or directory again.
 *
 * @returns What was moved, or `null` when the link was gone already.
 */
export async function moveLinkAside(
  root: string,
  link: string,
): Promise<LinkRefusal | null> {
  let target: string | null = null;
  try {
    target = await Deno.readLink(link);
  } catch {
    // A hard link, or gone: the rename below tells.
  }
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  const aside = `${link}.link-refused-${stamp}`;
  let kind: LinkRefusal["kind"];
  try {
    kind = anchored(root, dirname(link), (here) => {
      const info = here.lstat(basename(link));
      if (info === null) throw new Deno.errors.NotFound(link);
      here.rename(basename(link), basename(aside));
      return info.isSymlink ? "symbolic" : "hard";
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return {
    path: relative(root, link),
    kind,
    target,
    moved_to: relative(root, aside),
  };
}
