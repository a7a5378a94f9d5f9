/**
 * What every state-root writer builds on: private modes, dot-temp names,
 * checking a path below a root without following links, private
 * directories, whole writes and directory syncs.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, relative } from "./posix_path.ts";
import { anchored } from "./_anchored.ts";
import { LinkRefusedError, StateError } from "./errors.ts";

/** Files holding run state are private to the user running the runner. */
export const FILE_MODE = 0o600;
/** Directories holding run state are private too. */
export const DIR_MODE = 0o700;

/** Where a path lies: the private root whose components are checked. */
export interface WithinOptions {
  /** The private root; components below it must not be links. */
  within?: string;
}

/** Dot-temp files of this module, and request files a client claimed back. */
const TEMP_PATTERN = /^\..+\.(?:[0-9a-f]{8}\.tmp|claimed)$/;

/** A fresh dot-temp name beside `path`. */
export function tempName(path: string): string {
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

async function lstatIfExists(
  path: string,
): Promise<Deno.FileInfo | null> {
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
