/**
 * Reading files of a state root as text, never through a link.
 *
 * @module
 */

import { errorText, LinkRefusedError, StateError } from "./errors.ts";
import { openExisting } from "./open_file.ts";
import type { WithinOptions } from "./private_files.ts";

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
    return await readAllText(file);
  } finally {
    file.close();
  }
}

/**
 * Reads an open file from where it stands to its end as UTF-8 text (a
 * leading byte order mark dropped, bad bytes replaced), as `Response.text()`
 * would, without `Response`, whose first use costs a quick command several
 * milliseconds. The file stays open.
 */
export async function readAllText(file: Deno.FsFile): Promise<string> {
  let buffer = new Uint8Array(16 * 1024);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      const bigger = new Uint8Array(buffer.length * 2);
      bigger.set(buffer);
      buffer = bigger;
    }
    const n = await file.read(buffer.subarray(length));
    if (n === null) break;
    length += n;
  }
  return new TextDecoder().decode(buffer.subarray(0, length));
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
      : errorText(error);
    throw new StateError(`Cannot read ${what.name} "${path}": ${problem}`, {
      code: what.code,
      ...(what.hint === undefined ? {} : { hint: what.hint }),
      cause: error,
    });
  }
}
