/**
 * Durable file primitives shared by the runner and the control plane:
 * atomic replace, no-replace publish, synced appends, private directories.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";

/** Files holding run state are private to the user running the runner. */
export const FILE_MODE = 0o600;
/** Directories holding run state are private too. */
export const DIR_MODE = 0o700;

const encoder = new TextEncoder();

function tempName(path: string): string {
  const tail = crypto.randomUUID().slice(0, 8);
  return join(dirname(path), `.${basename(path)}.${tail}.tmp`);
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

/** Creates a directory (and its parents) with mode 0700. */
export async function ensurePrivateDir(path: string): Promise<void> {
  try {
    await Deno.mkdir(path, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    if (!(await Deno.stat(path)).isDirectory) {
      throw new Deno.errors.AlreadyExists(
        `"${path}" exists and is not a directory`,
      );
    }
  }
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
 * unless `options.mode` says otherwise.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  options: { mode?: number } = {},
): Promise<void> {
  const temp = await writeTemp(path, text, options.mode);
  if (options.mode !== undefined) await Deno.chmod(temp, options.mode);
  try {
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  await syncDir(dirname(path));
}

/**
 * Publishes `text` at `path` without ever replacing an existing file: the
 * content is synced in a dot-temp file and then hard-linked into place.
 *
 * @throws {Deno.errors.AlreadyExists} when `path` exists.
 */
export async function writeFileNoReplace(
  path: string,
  text: string,
): Promise<void> {
  const temp = await writeTemp(path, text);
  try {
    await Deno.link(temp, path);
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
  await syncDir(dirname(path));
}

/**
 * Appends one line (a newline is added) to `path`, creating it with mode
 * 0600. With `sync`, the append is on disk when the promise resolves.
 */
export async function appendLine(
  path: string,
  line: string,
  options: { sync?: boolean } = {},
): Promise<void> {
  const file = await Deno.open(path, {
    append: true,
    create: true,
    mode: FILE_MODE,
  });
  try {
    await writeAll(file, encoder.encode(line + "\n"));
    if (options.sync) await file.sync();
  } finally {
    file.close();
  }
}

/** Reads a file as text, or returns `null` when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Tells whether a path exists (without following a final symlink). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
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
