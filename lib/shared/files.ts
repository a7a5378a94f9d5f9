/**
 * Durable file primitives shared by the runner and the control plane:
 * atomic replace, no-replace publish, synced appends, private directories.
 *
 * Every primitive takes `within`, the private root (a state root) the path
 * lies in. With it, the work is anchored to the file's directory (see
 * `_anchored.ts`): each component below the root is checked, a symbolic
 * link (or, for writing, a hard link to a file named elsewhere) is refused
 * with {@linkcode LinkRefusedError}, files are created with `O_EXCL`, and
 * what was opened is checked against what was named before a byte is
 * written, so nothing is read or written through a link planted there, even
 * one swapped in between a check and a use.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { anchored, type Here } from "./_anchored.ts";
import { LinkRefusedError, StateError } from "./errors.ts";
import type { LinkRefusal } from "./run_hooks.ts";

/** Files holding run state are private to the user running the runner. */
export const FILE_MODE = 0o600;
/** Directories holding run state are private too. */
export const DIR_MODE = 0o700;

/** Where a path lies: the private root whose components are checked. */
export interface WithinOptions {
  /** The private root; components below it must not be links. */
  within?: string;
}

const encoder = new TextEncoder();
/** Dot-temp files of this module, and request files a client claimed back. */
const TEMP_PATTERN = /^\..+\.(?:[0-9a-f]{8}\.tmp|claimed)$/;

function tempName(path: string): string {
  const tail = crypto.randomUUID().slice(0, 8);
  return join(dirname(path), `.${basename(path)}.${tail}.tmp`);
}

/**
 * Tells whether a file name is a dot-temp file (`.NAME.xxxxxxxx.tmp`) or a
 * request a client claimed back (`.NAME.claimed`): both are only in flight.
 */
export function isTempName(name: string): boolean {
  return TEMP_PATTERN.test(name);
}

/** The current user's id, or `null` where it cannot be read (no `--allow-sys=uid`, Windows). */
export function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/**
 * Checks a path below a private root without following links: every
 * component from the root down is `lstat`ed, and a link is refused.
 *
 * @returns The path's own info, or `null` when it (or a parent) does not exist.
 * @throws {LinkRefusedError} when a component is a symbolic link.
 * @throws {StateError} when a parent component is not a directory.
 */
export async function checkPath(
  root: string,
  path: string,
): Promise<Deno.FileInfo | null> {
  const rel = relative(root, path);
  if (rel === "") return await lstatIfExists(path);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new StateError(`"${path}" lies outside the state root "${root}"`, {
      code: "OUTSIDE_STATE_ROOT",
    });
  }
  const parts = rel.split("/");
  let current = root;
  let info: Deno.FileInfo | null = null;
  for (let i = 0; i < parts.length; i++) {
    current = join(current, parts[i]!);
    info = await lstatIfExists(current);
    if (info === null) return null;
    if (info.isSymlink) throw new LinkRefusedError(current);
    if (i < parts.length - 1 && !info.isDirectory) {
      throw new StateError(
        `Cannot use "${path}": "${current}" is not a directory`,
        {
          code: "NOT_A_DIRECTORY",
        },
      );
    }
  }
  return info;
}

async function lstatIfExists(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Writes all of `bytes` (a single `write` may write only part). */
export async function writeAll(
  file: Deno.FsFile,
  bytes: Uint8Array,
): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await file.write(bytes.subarray(offset));
  }
}

/**
 * Creates a directory (and its parents) with mode 0700. With `within`, each
 * component below the root is made one at a time and checked: a link is
 * refused, a directory of another user is refused, and one of ours that
 * group or others may write is made private again.
 *
 * @throws {LinkRefusedError} for a link on the way.
 * @throws {StateError} for a component that is a file, or another user's.
 */
export async function ensurePrivateDir(
  path: string,
  options: WithinOptions = {},
): Promise<void> {
  if (options.within === undefined) {
    try {
      await Deno.mkdir(path, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    if (!(await Deno.stat(path)).isDirectory) {
      throw new StateError(`"${path}" exists and is not a directory`, {
        code: "NOT_A_DIRECTORY",
      });
    }
    return;
  }
  anchored(options.within, path, () => {}, {
    create: true,
    uid: currentUid(),
  });
}

/** Syncs a directory so a rename or create in it survives a power loss. */
export async function syncDir(path: string): Promise<void> {
  try {
    const dir = await Deno.open(path, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
  } catch {
    // Best effort: some file systems refuse to sync a directory.
  }
}

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

/**
 * Opens a file for appending, creating it with mode 0600. With `within`,
 * a link at the path or among its parents is refused, and the open file is
 * checked to be the one named.
 */
export async function openAppend(
  path: string,
  options: WithinOptions = {},
): Promise<Deno.FsFile> {
  const root = options.within;
  if (root === undefined) {
    return await Deno.open(path, {
      read: true,
      append: true,
      create: true,
      mode: FILE_MODE,
    });
  }
  return anchored(
    root,
    dirname(path),
    (here) => here.openAppend(basename(path)),
  );
}

/**
 * Creates a new file for writing (mode 0600); it must not exist. The open
 * never follows a link (`O_EXCL`).
 *
 * @throws {Deno.errors.AlreadyExists} when something is at `path`.
 */
export async function createNewFile(
  path: string,
  options: WithinOptions = {},
): Promise<Deno.FsFile> {
  const root = options.within;
  if (root === undefined) {
    return await Deno.open(path, {
      write: true,
      createNew: true,
      mode: FILE_MODE,
    });
  }
  return anchored(
    root,
    dirname(path),
    (here) => here.createNew(basename(path)),
  );
}

/**
 * Opens an existing regular file inside a private root, never through a
 * link (symbolic or hard).
 *
 * @returns The open file, or `null` when it does not exist.
 * @throws {LinkRefusedError} for a link at the path or above.
 * @throws {StateError} when it is not a regular file.
 */
export async function openExisting(
  path: string,
  options: { read?: boolean; write?: boolean } & Required<WithinOptions>,
): Promise<Deno.FsFile | null> {
  await Promise.resolve();
  try {
    return anchored(
      options.within,
      dirname(path),
      (here) =>
        here.openExisting(basename(path), {
          read: options.read ?? true,
          write: options.write ?? false,
        }),
    );
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Appends one line (a newline is added) to `path`, creating it with mode
 * 0600. When the file ends in a torn line (a crash, a full disk), the new
 * line starts on a line of its own, so it stays readable. With `sync`, the
 * append is on disk when the promise resolves.
 *
 * @throws {LinkRefusedError} with `within`, for a link at the path or above.
 */
export async function appendLine(
  path: string,
  line: string,
  options: { sync?: boolean } & WithinOptions = {},
): Promise<void> {
  const file = await openAppend(path, options);
  try {
    const size = (await file.stat()).size;
    let text = line + "\n";
    if (size > 0 && !(await endsWithNewline(file, size))) text = "\n" + text;
    await writeAll(file, encoder.encode(text));
    if (options.sync) await file.sync();
  } finally {
    file.close();
  }
}

async function endsWithNewline(
  file: Deno.FsFile,
  size: number,
): Promise<boolean> {
  await file.seek(size - 1, Deno.SeekMode.Start);
  const last = new Uint8Array(1);
  return (await file.read(last)) === 1 && last[0] === 0x0a;
}

/**
 * Cuts a torn last line (one without its newline) off a JSONL file: it never
 * was a complete record. A line still being written by another process is
 * given a moment to finish first.
 *
 * @returns The number of bytes cut (0 when the file ends cleanly or is missing).
 */
export async function repairTornTail(
  path: string,
  options: WithinOptions = {},
): Promise<number> {
  let file: Deno.FsFile | null;
  if (options.within !== undefined) {
    file = await openExisting(path, {
      read: true,
      write: true,
      within: options.within,
    });
  } else {
    try {
      file = await Deno.open(path, { read: true, write: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return 0;
      throw error;
    }
  }
  if (file === null) return 0;
  try {
    for (let look = 0;; look++) {
      const size = (await file.stat()).size;
      if (size === 0 || await endsWithNewline(file, size)) return 0;
      if (look === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      const keep = await lastNewlineEnd(file, size);
      await file.truncate(keep);
      await file.sync();
      return size - keep;
    }
  } finally {
    file.close();
  }
}

/** The offset just past the last newline of a file (0 when it has none). */
async function lastNewlineEnd(
  file: Deno.FsFile,
  size: number,
): Promise<number> {
  const chunk = new Uint8Array(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    await file.seek(start, Deno.SeekMode.Start);
    let read = 0;
    while (read < end - start) {
      const n = await file.read(chunk.subarray(read, end - start));
      if (n === null || n === 0) break;
      read += n;
    }
    const at = chunk.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/**
 * Reads a file as text, or returns `null` when it does not exist.
 *
 * @throws {LinkRefusedError} with `within`, for a link at the path or above.
 */
export async function readTextIfExists(
  path: string,
  options: WithinOptions = {},
): Promise<string | null> {
  if (options.within === undefined) {
    try {
      return await Deno.readTextFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }
  const file = await openExisting(path, { within: options.within });
  if (file === null) return null;
  try {
    return await new Response(file.readable).text();
  } catch (error) {
    try {
      file.close();
    } catch {
      // Closed by the stream already.
    }
    throw error;
  }
}

/**
 * Reads a file of a state root as text, or `null` when it does not exist.
 * What makes it unreadable (a directory in its place, an I/O error) becomes
 * a {@linkcode StateError} naming it as `what`; a link is refused as such.
 *
 * @throws {LinkRefusedError} for a link at the path or above.
 * @throws {StateError} `Cannot read WHAT "PATH": …` with `code` and `hint`.
 */
export async function readStateText(
  path: string,
  root: string,
  what: { name: string; code: string; hint?: string },
): Promise<string | null> {
  try {
    return await readTextIfExists(path, { within: root });
  } catch (error) {
    if (error instanceof LinkRefusedError) throw error;
    const problem = error instanceof StateError && error.code === "NOT_A_FILE"
      ? "it is not a regular file"
      : (error as Error).message;
    throw new StateError(`Cannot read ${what.name} "${path}": ${problem}`, {
      code: what.code,
      ...(what.hint === undefined ? {} : { hint: what.hint }),
      cause: error,
    });
  }
}

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

/**
 * Tells whether a path exists (without following a final symlink). A path
 * that cannot name anything (a file on the way, a name too long) does not.
 */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory ||
      (error as { code?: unknown }).code === "ENAMETOOLONG"
    ) {
      return false;
    }
    throw error;
  }
}

/** Tells whether a path is a directory (following symlinks); `false` when it is missing. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

/** Error codes of a failing environment (disk, file system), not of a bug. */
export { anchored, type Here } from "./_anchored.ts";
export { isEnvironmentError } from "./errors.ts";
