/**
 * File operations on single names in a directory inside a private root,
 * never through a link.
 *
 * Deno has neither `openat()` nor `O_NOFOLLOW`, and changing the working
 * directory (the usual stand-in) would change it for every thread of the
 * process. So each operation walks from the root to the directory one
 * component at a time (each `lstat`ed, a link refused), works on the name
 * at once, synchronously, and checks afterwards that the directory is still
 * the one walked and that a file it opened or made is the one named there:
 * a directory or file swapped for a link in between is caught before a byte
 * is written, and what was made through it is removed. A final name that is
 * a link (symbolic, or for writing a hard link to a file named elsewhere) is
 * refused; new files are made with `O_EXCL`, which never follows a link.
 *
 * What remains is a window of microseconds in which a process of the same
 * user, racing on purpose, could make one empty file appear through a
 * swapped directory. Nothing is written to it, and it is removed through
 * the link as soon as the link is seen in place again (a process that swaps
 * the link away for good can keep it). Such a process can already do
 * anything the runner can.
 *
 * @module
 */

import { isAbsolute, join, relative } from "./posix_path.ts";
import { LinkRefusedError, StateError } from "./errors.ts";

/** Files made here are private to the user running prompt_runner. */
const FILE_MODE = 0o600;
/** Directories too. */
const DIR_MODE = 0o700;

/** What an anchored operation can do with single names in its directory. */
export interface Here {
  /** The directory's absolute path. */
  readonly dir: string;
  /** The entry's info without following a link, or `null` when it is missing. */
  lstat(name: string): Deno.FileInfo | null;
  /**
   * Refuses a symbolic link at `name`, and with `write` a hard link too (a
   * file also named elsewhere, which a write would change there as well).
   */
  refuseLink(name: string, write?: boolean): Deno.FileInfo | null;
  /** Makes a new file (never through a link). */
  createNew(
    name: string,
    options?: { read?: boolean; append?: boolean; mode?: number },
  ): Deno.FsFile;
  /** Opens an existing regular file, or returns `null` when it is missing. */
  openExisting(
    name: string,
    options: { read?: boolean; write?: boolean; append?: boolean },
  ): Deno.FsFile | null;
  /** Opens a file to append, making it when it is missing. */
  openAppend(name: string): Deno.FsFile;
  /** Renames an entry of this directory (or into a subdirectory checked here). */
  rename(from: string, to: string): void;
  /** Publishes `from` as `to` with a hard link; fails when `to` exists. */
  link(from: string, to: string): void;
  /** Removes an entry (a directory with what it holds; links inside are removed, not followed). */
  remove(name: string): void;
  /** The entries of this directory. */
  list(): Deno.DirEntry[];
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

function isLink(info: Deno.FileInfo, write: boolean): boolean {
  return info.isSymlink || (write && info.isFile && (info.nlink ?? 1) > 1);
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.ino === b.ino && a.dev === b.dev;
}

/** Operations on the names of one walked directory. */
class Dir implements Here {
  readonly dir: string;
  readonly #info: Deno.FileInfo;

  constructor(dir: string, info: Deno.FileInfo) {
    this.dir = dir;
    this.#info = info;
  }

  #path(name: string): string {
    return join(this.dir, name);
  }

  /** Refuses to go on when the directory is no longer the one walked. */
  #stillHere(): void {
    const now = lstatOrNull(this.dir);
    if (now === null || now.isSymlink || !sameFile(now, this.#info)) {
      throw new LinkRefusedError(this.dir);
    }
  }

  /**
   * Checks, right after opening or making a file, that the directory is
   * still the one walked (the name itself was checked against what was
   * opened); otherwise the file is closed unwritten, and with `made`
   * removed from where it was made.
   */
  #confirm(file: Deno.FsFile, name: string, made: boolean): Deno.FsFile {
    const dirNow = lstatOrNull(this.dir);
    if (dirNow !== null && !dirNow.isSymlink && sameFile(dirNow, this.#info)) {
      return file;
    }
    try {
      if (made) this.#unmake(file, name);
    } finally {
      file.close();
    }
    throw new LinkRefusedError(this.dir);
  }

  /**
   * Removes a file just made through a directory swapped for a link, until
   * the file open here has no name left. The directory may be swapped back
   * and forth meanwhile (and Deno may not read `/proc/self/fd` to ask the
   * kernel where the file is), so the name is looked up again and again: it
   * leads to the file whenever the link is back in place.
   */
  #unmake(file: Deno.FsFile, name: string): void {
    const made = file.statSync();
    for (let tries = 0; tries < 200; tries++) {
      if ((file.statSync().nlink ?? 0) === 0) return;
      const path = this.#path(name);
      const info = lstatOrNull(path);
      if (info === null || !sameFile(info, made)) continue;
      try {
        Deno.removeSync(path);
      } catch {
        // Moved again: look again.
      }
    }
  }

  lstat(name: string): Deno.FileInfo | null {
    return lstatOrNull(this.#path(name));
  }

  refuseLink(name: string, write = false): Deno.FileInfo | null {
    const info = lstatOrNull(this.#path(name));
    if (info !== null && isLink(info, write)) {
      throw new LinkRefusedError(this.#path(name));
    }
    return info;
  }

  createNew(
    name: string,
    options: { read?: boolean; append?: boolean; mode?: number } = {},
  ): Deno.FsFile {
    this.#stillHere();
    const file = Deno.openSync(this.#path(name), {
      read: options.read ?? false,
      write: true,
      append: options.append ?? false,
      createNew: true,
      mode: options.mode ?? FILE_MODE,
    });
    return this.#confirm(file, name, true);
  }

  openExisting(
    name: string,
    options: { read?: boolean; write?: boolean; append?: boolean },
  ): Deno.FsFile | null {
    const write = options.write === true || options.append === true;
    for (let tries = 0;; tries++) {
      this.#stillHere();
      const info = this.refuseLink(name, write);
      if (info === null) return null;
      if (!info.isFile) {
        throw new StateError(`"${this.#path(name)}" is not a regular file`, {
          code: "NOT_A_FILE",
        });
      }
      let file: Deno.FsFile;
      try {
        file = Deno.openSync(this.#path(name), options);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw error;
      }
      if (sameFile(file.statSync(), info)) {
        return this.#confirm(file, name, false);
      }
      file.close();
      // Replaced between the check and the open: an atomic rewrite (look
      // again), or a link swapped in (refused by the next look).
      if (tries >= 5) throw new LinkRefusedError(this.#path(name));
    }
  }

  openAppend(name: string): Deno.FsFile {
    for (let tries = 0;; tries++) {
      const existing = this.openExisting(name, { read: true, append: true });
      if (existing !== null) return existing;
      try {
        return this.createNew(name, { read: true, append: true });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists) || tries >= 3) {
          throw error;
        }
      }
    }
  }

  rename(from: string, to: string): void {
    const parts = to.split("/");
    if (parts.length > 1) {
      // A subdirectory (or the parent) of this one: a real directory too.
      const sub = lstatOrNull(this.#path(parts.slice(0, -1).join("/")));
      if (sub !== null && (sub.isSymlink || !sub.isDirectory)) {
        throw new LinkRefusedError(this.#path(parts.slice(0, -1).join("/")));
      }
    }
    this.#stillHere();
    Deno.renameSync(this.#path(from), this.#path(to));
  }

  link(from: string, to: string): void {
    this.#stillHere();
    Deno.linkSync(this.#path(from), this.#path(to));
  }

  remove(name: string): void {
    const info = lstatOrNull(this.#path(name));
    if (info === null) return;
    this.#stillHere();
    Deno.removeSync(this.#path(name), { recursive: info.isDirectory });
  }

  list(): Deno.DirEntry[] {
    this.#stillHere();
    const entries = Array.from(Deno.readDirSync(this.dir));
    this.#stillHere();
    return entries;
  }
}

/**
 * Runs `work` on `dir`, reached from `root` one component at a time: each
 * component is `lstat`ed and a link refused. With `create`, missing
 * directories on the way are made (mode 0700), and each is checked to
 * belong to this user and made private again when group or others could
 * use it.
 *
 * @throws {LinkRefusedError} for a link on the way (or one swapped in).
 * @throws {Deno.errors.NotFound} for a missing directory without `create`.
 * @throws {StateError} for a component that is not a directory, or another
 * user's.
 */
export function anchored<T>(
  root: string,
  dir: string,
  work: (here: Here) => T,
  options: { create?: boolean; uid?: number | null } = {},
): T {
  const rel = relative(root, dir);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new StateError(`"${dir}" lies outside the state root "${root}"`, {
      code: "OUTSIDE_STATE_ROOT",
    });
  }
  // The root itself may be a link (an operator's choice): start from its target.
  let path = Deno.lstatSync(root).isSymlink ? Deno.realPathSync(root) : root;
  let info = Deno.lstatSync(path);
  for (const part of rel === "" ? [] : rel.split("/")) {
    path = join(path, part);
    let next = lstatOrNull(path);
    if (next === null) {
      if (!options.create) {
        throw new Deno.errors.NotFound(`No such directory: "${path}"`);
      }
      try {
        Deno.mkdirSync(path, { mode: DIR_MODE });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
      next = Deno.lstatSync(path);
    }
    if (next.isSymlink) throw new LinkRefusedError(path);
    if (!next.isDirectory) {
      throw new StateError(`"${path}" exists and is not a directory`, {
        code: "NOT_A_DIRECTORY",
      });
    }
    if (options.create) checkOwnDir(path, next, options.uid ?? null);
    info = next;
  }
  return work(new Dir(path, info));
}

function checkOwnDir(
  path: string,
  info: Deno.FileInfo,
  uid: number | null,
): void {
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new StateError(
      `Refused to use "${path}": it belongs to user ${info.uid}, not to this user (${uid})`,
      {
        code: "STATE_ROOT_NOT_OURS",
        hint:
          "A state root must belong to the user running prompt_runner; pick another with --state-root",
      },
    );
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    Deno.chmodSync(path, DIR_MODE);
  }
}
