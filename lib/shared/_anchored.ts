/**
 * File operations anchored to a directory inside a private root, immune to a
 * directory being swapped for a link between a check and a use.
 *
 * Deno has no `openat()` and no `O_NOFOLLOW`. The same guarantee comes from
 * the working directory: it is the directory's inode, not its name, so a
 * name resolved from it cannot be redirected by renaming or replacing the
 * directory. Each operation therefore walks from the root to the directory
 * one component at a time (each `lstat`ed, a link refused, and the directory
 * entered checked to be the one `lstat`ed), does its work on single names
 * relative to it, and goes back where it was. All of it is synchronous, so
 * no other code of this process runs while the working directory is moved,
 * and every final name is checked too: a link or a hard link (a file with
 * another name somewhere else) is refused, new files are made with `O_EXCL`,
 * which never follows a link.
 *
 * @module
 */

import { isAbsolute, join, relative } from "node:path";
import { LinkRefusedError, StateError } from "./errors.ts";

/** Files made here are private to the user running prompt_runner. */
const FILE_MODE = 0o600;
/** Directories too. */
const DIR_MODE = 0o700;

/** What an anchored operation can do with single names in its directory. */
export interface Here {
  /** The directory's absolute path (for messages). */
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

function lstatHere(name: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(name);
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

function makeHere(dir: string): Here {
  const here: Here = {
    dir,
    lstat: lstatHere,
    refuseLink(name, write = false): Deno.FileInfo | null {
      const info = lstatHere(name);
      if (info !== null && isLink(info, write)) {
        throw new LinkRefusedError(join(dir, name));
      }
      return info;
    },
    createNew(name, options = {}): Deno.FsFile {
      return Deno.openSync(name, {
        read: options.read ?? false,
        write: true,
        append: options.append ?? false,
        createNew: true,
        mode: options.mode ?? FILE_MODE,
      });
    },
    openExisting(name, options): Deno.FsFile | null {
      const write = options.write === true || options.append === true;
      for (let tries = 0;; tries++) {
        const info = here.refuseLink(name, write);
        if (info === null) return null;
        if (!info.isFile) {
          throw new StateError(`"${join(dir, name)}" is not a regular file`, {
            code: "NOT_A_FILE",
          });
        }
        let file: Deno.FsFile;
        try {
          file = Deno.openSync(name, options);
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) return null;
          throw error;
        }
        const opened = file.statSync();
        if (sameFile(opened, info)) return file;
        file.close();
        // Replaced between the check and the open: an atomic rewrite (look
        // again), or a link swapped in (refused by the next look).
        if (tries >= 5) throw new LinkRefusedError(join(dir, name));
      }
    },
    openAppend(name): Deno.FsFile {
      for (let tries = 0;; tries++) {
        const existing = here.openExisting(name, { read: true, append: true });
        if (existing !== null) return existing;
        try {
          return here.createNew(name, { read: true, append: true });
        } catch (error) {
          if (!(error instanceof Deno.errors.AlreadyExists) || tries >= 3) {
            throw error;
          }
        }
      }
    },
    rename(from, to): void {
      const parts = to.split("/");
      if (parts.length > 1) {
        // A subdirectory of this one: it must be a real directory too.
        const sub = lstatHere(parts.slice(0, -1).join("/"));
        if (sub !== null && (sub.isSymlink || !sub.isDirectory)) {
          throw new LinkRefusedError(join(dir, parts.slice(0, -1).join("/")));
        }
      }
      Deno.renameSync(from, to);
    },
    link(from, to): void {
      Deno.linkSync(from, to);
    },
    remove(name): void {
      const info = lstatHere(name);
      if (info === null) return;
      Deno.removeSync(name, { recursive: info.isDirectory });
    },
    list(): Deno.DirEntry[] {
      return Array.from(Deno.readDirSync("."));
    },
  };
  return here;
}

function currentDir(): string | null {
  try {
    return Deno.cwd();
  } catch {
    return null;
  }
}

/**
 * Runs `work` in `dir`, reached from `root` as described above. With
 * `create`, missing directories on the way are made (mode 0700), and each
 * directory is checked to belong to this user and made private again when
 * group or others could use it.
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
  const previous = currentDir();
  try {
    Deno.chdir(root);
    let path = root;
    for (const part of rel === "" ? [] : rel.split("/")) {
      path = join(path, part);
      let info = lstatHere(part);
      if (info === null) {
        if (!options.create) {
          throw new Deno.errors.NotFound(`No such directory: "${path}"`);
        }
        try {
          Deno.mkdirSync(part, { mode: DIR_MODE });
        } catch (error) {
          if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
        }
        info = Deno.lstatSync(part);
      }
      if (info.isSymlink) throw new LinkRefusedError(path);
      if (!info.isDirectory) {
        throw new StateError(`"${path}" exists and is not a directory`, {
          code: "NOT_A_DIRECTORY",
        });
      }
      if (options.create) checkOwnDir(part, path, info, options.uid ?? null);
      Deno.chdir(part);
      const entered = Deno.statSync(".");
      if (entered.ino !== info.ino || entered.dev !== info.dev) {
        throw new LinkRefusedError(path);
      }
    }
    return work(makeHere(path));
  } finally {
    try {
      Deno.chdir(previous ?? "/");
    } catch {
      Deno.chdir("/");
    }
  }
}

function checkOwnDir(
  name: string,
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
    Deno.chmodSync(name, DIR_MODE);
  }
}
