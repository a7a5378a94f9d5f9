/**
 * Holding a prompt file while a persisted amendment rewrites it: a kernel
 * lock on the file itself, and atomic replacement that keeps it held.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { NotFoundError, StateError } from "../shared/errors.ts";
import { FILE_MODE, syncDir, writeAll } from "../shared/private_files.ts";
import { waitForLock } from "../shared/lock_file.ts";

/** A prompt file held by {@linkcode withPromptFile}. */
export interface HeldPromptFile {
  /** The file's content when it was taken. */
  text: string;
  /** Replaces the file atomically (same mode), keeping it held. */
  replace(text: string): Promise<void>;
}

/**
 * Holds a prompt file while a persisted amendment rewrites it. The state
 * root's amendments lock does not reach a writer from another state root
 * (another operator workspace on the same packet), so the prompt file is
 * locked too, without leaving a lock file in the packet: the kernel lock
 * is taken on the file itself, and counts only if that file is still the
 * one its path names (a writer that replaced it meanwhile makes the lock
 * stale: lock the new file). A replacement is locked before it is renamed
 * into place, so a writer that opens it waits until this one has recorded
 * its change, or put the old content back.
 */
export async function withPromptFile<T>(
  file: string,
  deadline: number,
  work: (held: HeldPromptFile) => Promise<T>,
): Promise<T> {
  const handles: Deno.FsFile[] = [];
  const busy = (): StateError =>
    new StateError(
      `Cannot change the contract: another amend or relax (from another state root) kept the prompt file "${file}" busy for too long`,
      {
        code: "PROMPT_FILE_LOCKED",
        hint:
          "Nothing was recorded. Try again once the other amend or relax has finished",
      },
    );
  try {
    for (;;) {
      let handle: Deno.FsFile;
      try {
        handle = await Deno.open(file, { read: true });
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) {
          throw new NotFoundError(
            `Cannot change the contract: the prompt file "${file}" no longer exists`,
            { code: "PROMPT_FILE_GONE", cause: error },
          );
        }
        throw error;
      }
      handles.push(handle);
      if (!(await waitForLock(handle, deadline))) throw busy();
      const opened = await handle.stat();
      const named = await Deno.stat(file).catch(() => null);
      if (named?.ino === opened.ino && named?.dev === opened.dev) break;
      handles.pop()!.close();
      if (Date.now() > deadline) throw busy();
    }
    const mode = (await handles[0]!.stat()).mode;
    const held: HeldPromptFile = {
      text: await Deno.readTextFile(file),
      async replace(text: string): Promise<void> {
        const temp = join(
          dirname(file),
          `.${basename(file)}.${crypto.randomUUID().slice(0, 8)}.tmp`,
        );
        const next = await Deno.open(temp, {
          write: true,
          createNew: true,
          mode: mode === null ? FILE_MODE : mode & 0o777,
        });
        handles.push(next);
        try {
          await writeAll(next, new TextEncoder().encode(text));
          await next.sync();
          // The mode given at creation is cut by the umask.
          if (mode !== null) await Deno.chmod(temp, mode & 0o777);
          if (!(await next.tryLock(true))) {
            throw new Error(`cannot lock the new file "${temp}"`);
          }
          await Deno.rename(temp, file);
        } catch (error) {
          await Deno.remove(temp).catch(() => {});
          throw error;
        }
        await syncDir(dirname(file));
      },
    };
    return await work(held);
  } finally {
    for (const handle of handles) handle.close();
  }
}
