/**
 * Kernel locks with a bounded wait. `Deno.FsFile.lock()` blocks until the
 * lock is free and cannot be given up on, so the lock is tried, and tried
 * again after a short pause, until it is taken or the time is up. The locks
 * are `flock`s: held per open file, and released when the file is closed or
 * its process dies, so a crashed holder never leaves a stale lock.
 *
 * @module
 */

import { createNewFile, openExisting } from "./files.ts";
import { sleep } from "./sleep.ts";

/**
 * Tries to take an exclusive lock on an open file until `deadline`.
 *
 * @param file The open file.
 * @param deadline When to give up, in milliseconds since the epoch.
 * @returns Whether the lock was taken.
 */
export async function waitForLock(
  file: Deno.FsFile,
  deadline: number,
): Promise<boolean> {
  for (let pause = 5;; pause = Math.min(pause * 2, 100)) {
    if (await file.tryLock(true)) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    // Jitter keeps waiters from retrying in step.
    await sleep(Math.min(left, pause * (0.5 + Math.random())));
  }
}

/** Options for {@linkcode lockFile}. */
export interface LockFileOptions {
  /** The private root the lock file lies in; no component below it may be a link. */
  within: string;
  /** How long to wait for another holder, in milliseconds. */
  timeoutMs: number;
}

/**
 * Takes an exclusive kernel lock on a lock file inside a private root,
 * creating the file (mode 0600) when it is missing. The file is never
 * replaced or removed, so every process locks the same file; it is never
 * opened through a link: it is created with `O_EXCL` (which does not follow
 * one), and an existing one is checked after opening to be the file named.
 *
 * @param path The lock file.
 * @param options The private root, and how long to wait.
 * @returns The open, locked file (closing it releases the lock), or `null`
 * when another holder kept it for `timeoutMs`.
 * @throws {LinkRefusedError} for a link at the path or among its parents.
 * @throws {StateError} when something other than a regular file is there.
 */
export async function lockFile(
  path: string,
  options: LockFileOptions,
): Promise<Deno.FsFile | null> {
  const deadline = Date.now() + options.timeoutMs;
  let file: Deno.FsFile | null = null;
  for (let tries = 0; file === null; tries++) {
    file = await openExisting(path, {
      read: true,
      write: true,
      within: options.within,
    });
    if (file !== null) break;
    try {
      file = await createNewFile(path, { within: options.within });
    } catch (error) {
      // Another process made it first: open theirs.
      if (!(error instanceof Deno.errors.AlreadyExists) || tries >= 3) {
        throw error;
      }
    }
  }
  try {
    if (await waitForLock(file, deadline)) return file;
  } catch (error) {
    file.close();
    throw error;
  }
  file.close();
  return null;
}
