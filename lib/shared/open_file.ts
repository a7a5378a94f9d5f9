/**
 * Opening files of a state root: for appending, as new files, or existing
 * ones, never through a link.
 *
 * @module
 */

import { basename, dirname } from "./posix_path.ts";
import { anchored } from "./_anchored.ts";
import { FILE_MODE, type WithinOptions } from "./private_files.ts";

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
