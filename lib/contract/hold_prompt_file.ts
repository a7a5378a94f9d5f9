/**
 * Holding a prompt file while a persisted amendment rewrites it: a kernel
 * lock on the file itself, and atomic replacement that keeps it held. The
 * file is reached only inside the packet, never through a link.
 *
 * @module
 */

import type { Packet, PromptSpec } from "../packet/packet.ts";
import { inPacket } from "../packet/packet_files.ts";
import { NotFoundError, StateError } from "../shared/errors.ts";
import { type Here, readAllText } from "../shared/files.ts";
import { basename, dirname, join } from "../shared/posix_path.ts";
import { FILE_MODE, syncDir, writeAll } from "../shared/private_files.ts";
import { waitForLock } from "../shared/lock_file.ts";

/** A prompt file held by {@linkcode withPromptFile}. */
export interface HeldPromptFile {
  /** The file's content when it was taken. */
  text: string;
  /** Replaces the file atomically (same mode), keeping it held. */
  replace(text: string): Promise<void>;
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo | null): boolean {
  return b !== null && a.ino === b.ino && a.dev === b.dev;
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
 *
 * The file and its directory are reached from the packet directory
 * without following a link (a prompt file or a prompt directory that is
 * one, even one swapped in after the packet was loaded, is refused), the
 * replacement is made beside the file with `O_EXCL` and renamed into place
 * only while the directory is still the one walked: nothing is read or
 * written elsewhere.
 *
 * @throws {LinkRefusedError} for a link at the file or above it, below
 * the packet directory.
 * @throws {NotFoundError} when the file no longer exists.
 * @throws {StateError} when another writer holds it past `deadline`.
 */
export async function withPromptFile<T>(
  where: { packet: Pick<Packet, "dir">; prompt: Pick<PromptSpec, "file"> },
  deadline: number,
  work: (held: HeldPromptFile) => Promise<T>,
): Promise<T> {
  const packetDir = where.packet.dir;
  const file = where.prompt.file;
  const dir = dirname(file);
  const name = basename(file);
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
      const handle = inPacket(
        packetDir,
        dir,
        (here) => here.openExisting(name, { read: true }),
      );
      if (handle === null) {
        throw new NotFoundError(
          `Cannot change the contract: the prompt file "${file}" no longer exists`,
          { code: "PROMPT_FILE_GONE" },
        );
      }
      handles.push(handle);
      if (!(await waitForLock(handle, deadline))) throw busy();
      const opened = await handle.stat();
      const named = inPacket(packetDir, dir, (here) => here.refuseLink(name));
      if (sameFile(opened, named)) break;
      handles.pop()!.close();
      if (Date.now() > deadline) throw busy();
    }
    const taken = handles[0]!;
    const mode = (await taken.stat()).mode;
    const held: HeldPromptFile = {
      text: await readAllText(taken),
      async replace(text: string): Promise<void> {
        const temp = `.${name}.${crypto.randomUUID().slice(0, 8)}.tmp`;
        const next = inPacket(
          packetDir,
          dir,
          (here) =>
            here.createNew(temp, {
              mode: mode === null ? FILE_MODE : mode & 0o777,
            }),
        );
        handles.push(next);
        /** Whether `temp` still names the new file. */
        const ours = (here: Here): boolean =>
          sameFile(next.statSync(), here.lstat(temp));
        try {
          await writeAll(next, new TextEncoder().encode(text));
          await next.sync();
          if (!(await next.tryLock(true))) {
            throw new Error(`cannot lock the new file "${join(dir, temp)}"`);
          }
          inPacket(packetDir, dir, (here) => {
            if (!ours(here)) {
              throw new StateError(
                `Cannot replace the prompt file "${file}": its new content "${
                  join(dir, temp)
                }" was moved away`,
                { code: "PROMPT_FILE_MOVED" },
              );
            }
            // The mode given at creation is cut by the umask.
            if (mode !== null) {
              Deno.chmodSync(join(here.dir, temp), mode & 0o777);
            }
            here.rename(temp, name);
          });
        } catch (error) {
          try {
            inPacket(packetDir, dir, (here) => {
              if (ours(here)) here.remove(temp);
            });
          } catch {
            // Its directory gone or swapped: nothing of ours to remove.
          }
          throw error;
        }
        await syncDir(dir);
      },
    };
    return await work(held);
  } finally {
    for (const handle of handles) handle.close();
  }
}
