/**
 * A packet's files, reached only inside the packet (DESIGN §11): from the
 * packet directory down, every component is `lstat`ed and a symbolic link
 * refused, never followed, and a file is opened only when it is the regular
 * file its name shows (see `lib/shared/_anchored.ts`). The packet directory
 * itself may be a link (it is resolved first); what lies below it may not:
 * a prompt file, a prompt directory or a manifest that is a link would have
 * `control contract` read, the runner run and `--persist` rewrite a file
 * somewhere else.
 *
 * @module
 */

import {
  errorText,
  LinkRefusedError,
  StateError,
  UsageError,
} from "../shared/errors.ts";
import { anchored, type Here, readAllText } from "../shared/files.ts";
import {
  basename,
  dirname,
  isAbsolute,
  relative,
} from "../shared/posix_path.ts";

/** Whether `path` is the packet directory `packetDir` or lies below it, by name. */
export function insidePacket(packetDir: string, path: string): boolean {
  const rel = relative(packetDir, path);
  return !(rel === ".." || rel.startsWith("../") || isAbsolute(rel));
}

/**
 * Runs `work` on directory `dir` of the packet, reached from `packetDir`
 * one component at a time; a link on the way is refused as a packet's.
 *
 * @throws {LinkRefusedError} for a link on the way (or one swapped in).
 * @throws {Deno.errors.NotFound} for a missing directory.
 * @throws {StateError} `NOT_A_DIRECTORY` for a component that is not one.
 */
export function inPacket<T>(
  packetDir: string,
  dir: string,
  work: (here: Here) => T,
): T {
  if (!insidePacket(packetDir, dir)) {
    throw new UsageError(
      `Refused to use "${dir}": it lies outside the packet "${packetDir}"`,
      { code: "OUTSIDE_PACKET" },
    );
  }
  try {
    return anchored(packetDir, dir, work);
  } catch (error) {
    if (error instanceof LinkRefusedError) {
      throw new LinkRefusedError(error.path, {
        within: "packet",
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Reads file `file` of the packet as text, never through a link.
 *
 * @param what What the file is, for messages (`"prompt file"`).
 * @returns The text, or `null` when the file (or a directory on the way)
 * does not exist.
 * @throws {LinkRefusedError} for a link at the path or above it, below
 * the packet directory (exit 4).
 * @throws {UsageError} when it is not a regular file or cannot be read,
 * naming it (exit 2).
 */
export async function readPacketFile(
  packetDir: string,
  file: string,
  what: string,
): Promise<string | null> {
  let handle: Deno.FsFile | null;
  try {
    handle = inPacket(
      packetDir,
      dirname(file),
      (here) => here.openExisting(basename(file), { read: true }),
    );
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw unreadable(error, what, file);
  }
  if (handle === null) return null;
  try {
    return await readAllText(handle);
  } catch (error) {
    throw unreadable(error, what, file);
  } finally {
    handle.close();
  }
}

/** What made a packet file unreadable, as the error to report. */
function unreadable(error: unknown, what: string, file: string): unknown {
  // A refusal stays one; a path outside a confined command's scope is the
  // runtime's refusal, reported as such by the command.
  if (
    error instanceof LinkRefusedError || error instanceof UsageError ||
    error instanceof Deno.errors.NotCapable
  ) {
    return error;
  }
  const problem = error instanceof StateError && error.code === "NOT_A_FILE"
    ? "it is not a regular file"
    : errorText(error);
  return new UsageError(`Cannot read ${what} "${file}": ${problem}`, {
    code: "INVALID_PACKET",
    cause: error,
  });
}
