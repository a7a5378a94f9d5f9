/**
 * Writing whole files of a state root: atomic replace, and publishing
 * without ever replacing. With `within`, the work is anchored (see
 * `_anchored.ts`): links are refused, never written through.
 *
 * @module
 */

import { basename, dirname } from "./posix_path.ts";
import { anchored, type Here } from "./_anchored.ts";
import {
  FILE_MODE,
  syncDir,
  tempName,
  type WithinOptions,
  writeAll,
} from "./private_files.ts";

const encoder = new TextEncoder();

async function writeTemp(
  path: string,
  text: string,
  mode = FILE_MODE,
): Promise<string> {
  const temp = tempName(path);
  // createNew (O_EXCL) never follows a link: a link in the way fails.
  const file = await Deno.open(temp, {
    write: true,
    createNew: true,
    mode,
  });
  try {
    await writeAll(file, encoder.encode(text));
    await file.sync();
  } catch (error) {
    file.close();
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  file.close();
  return temp;
}

/**
 * Replaces `path` with `text` atomically: a dot-temp file in the same
 * directory is written, synced and renamed over the target, so a reader sees
 * the old content or the new one, never a mix. The file gets mode 0600
 * unless `options.mode` says otherwise. Nothing is written through a link
 * at `path`: with `within` a symbolic link there is refused (to be reported
 * and moved aside), and `onForeign` hears of one put there in the instant
 * between that check and the rename, which the rename replaced unfollowed.
 *
 * @throws {LinkRefusedError} with `within`, for a link at the path or among
 * its parents.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  options: {
    mode?: number;
    onForeign?: (path: string) => void | Promise<void>;
  } & WithinOptions = {},
): Promise<void> {
  const root = options.within;
  if (root === undefined) {
    const temp = await writeTemp(path, text, options.mode);
    try {
      if (options.mode !== undefined) await Deno.chmod(temp, options.mode);
      await Deno.rename(temp, path);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
    await syncDir(dirname(path));
    return;
  }
  const dir = dirname(path);
  const name = basename(path);
  const temp = basename(tempName(path));
  // A symbolic link at the target is refused (and reported), not silently
  // replaced; a hard link is simply replaced (its other name keeps the old).
  const file = anchored(root, dir, (here) => {
    here.refuseLink(name);
    return here.createNew(temp, { mode: options.mode ?? FILE_MODE });
  });
  await fillAndClose(
    file,
    text,
    () => anchored(root, dir, (here) => here.remove(temp)),
  );
  let foreign = false;
  try {
    for (let tries = 0;; tries++) {
      try {
        foreign = anchored(root, dir, (here) => publish(here, temp, name));
        break;
      } catch (error) {
        // Something appeared at the name meanwhile: look at it again.
        if (!(error instanceof Deno.errors.AlreadyExists) || tries >= 4) {
          throw error;
        }
      }
    }
  } catch (error) {
    try {
      anchored(root, dir, (here) => here.remove(temp));
    } catch {
      // The directory moved: the temp file is cleaned up at the next open.
    }
    throw error;
  }
  await syncDir(dir);
  if (foreign) await options.onForeign?.(path);
}

/**
 * Puts `temp` in place of `name`. A file there is replaced by a rename,
 * held open across it: the rename must unlink that very file, and when it
 * did not, something else was put at the name in between (reported as
 * foreign). With nothing there, `temp` is published with a hard link, which
 * fails (rather than replace) when something appeared meanwhile.
 *
 * @returns Whether the rename replaced something put there meanwhile.
 * @throws {LinkRefusedError} for a symbolic link at the name.
 * @throws {Deno.errors.AlreadyExists} when something appeared at a free name.
 */
function publish(here: Here, temp: string, name: string): boolean {
  here.refuseLink(name);
  const replaced = here.openExisting(name, { read: true });
  if (replaced === null) {
    here.link(temp, name);
    here.remove(temp);
    return false;
  }
  try {
    const links = replaced.statSync().nlink ?? 1;
    here.rename(temp, name);
    return (replaced.statSync().nlink ?? 0) >= links;
  } finally {
    replaced.close();
  }
}

/** Writes `text` into a new file, syncs and closes it; on failure `discard` it. */
async function fillAndClose(
  file: Deno.FsFile,
  text: string,
  discard: () => void,
): Promise<void> {
  try {
    await writeAll(file, encoder.encode(text));
    await file.sync();
  } catch (error) {
    file.close();
    try {
      discard();
    } catch {
      // Cleaned up at the next open.
    }
    throw error;
  }
  file.close();
}

/**
 * Publishes `text` at `path` without ever replacing an existing file: the
 * content is synced in a dot-temp file and then hard-linked into place.
 *
 * @throws {Deno.errors.AlreadyExists} when `path` exists (a link included).
 * @throws {LinkRefusedError} with `within`, for a link among the parents.
 */
export async function writeFileNoReplace(
  path: string,
  text: string,
  options: WithinOptions = {},
): Promise<void> {
  const root = options.within;
  if (root === undefined) {
    const temp = await writeTemp(path, text);
    try {
      await Deno.link(temp, path);
    } finally {
      await Deno.remove(temp).catch(() => {});
    }
    await syncDir(dirname(path));
    return;
  }
  const dir = dirname(path);
  const name = basename(path);
  for (let tries = 0;; tries++) {
    const temp = basename(tempName(path));
    const file = anchored(root, dir, (here) => here.createNew(temp));
    await fillAndClose(
      file,
      text,
      () => anchored(root, dir, (here) => here.remove(temp)),
    );
    try {
      anchored(root, dir, (here) => {
        try {
          here.link(temp, name);
        } finally {
          here.remove(temp);
        }
      });
      break;
    } catch (error) {
      // A cleaner of stale temp files may have removed ours: write it again.
      if (!(error instanceof Deno.errors.NotFound) || tries >= 2) throw error;
    }
  }
  await syncDir(dir);
}
