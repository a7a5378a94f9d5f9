/**
 * The files of `requests/`, runner side: listing them, reading one (never
 * through a link, never more than the size limit), and removing one.
 *
 * @module
 */

import { anchored } from "../shared/files.ts";
import type { RequestRead } from "./decide_request.ts";
import type { ControlPaths } from "./paths.ts";
import { errorText } from "../shared/errors.ts";
import { isRecord } from "../shared/is_record.ts";

/** Requests larger than this are refused: by the client before writing, by the runner unread. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Reads at most `limit` + 1 bytes of an open file, and closes it. */
async function readCapped(
  file: Deno.FsFile,
  limit: number,
): Promise<Uint8Array> {
  try {
    const buffer = new Uint8Array(limit + 1);
    let size = 0;
    while (size < buffer.length) {
      const n = await file.read(buffer.subarray(size));
      if (n === null || n === 0) break;
      size += n;
    }
    return buffer.subarray(0, size);
  } finally {
    file.close();
  }
}

/** The request files waiting in `requests/`, in name order (dot-files are in flight). */
export function pendingRequestNames(paths: ControlPaths): string[] {
  const entries = anchored(paths.root, paths.requests, (here) => here.list());
  return entries.map((entry) => entry.name)
    .filter((name) => !name.startsWith(".")).sort();
}

/** Opens a request file, never through a link; `null` when it is gone. */
function openRequest(paths: ControlPaths, name: string): Deno.FsFile | null {
  return anchored(
    paths.root,
    paths.requests,
    (here) => here.openExisting(name, { read: true }),
  );
}

/**
 * Reads one request file for the decision; `null` when it is gone (its
 * client claimed it back, or it was removed).
 */
export async function readRequestFile(
  paths: ControlPaths,
  name: string,
): Promise<RequestRead | null> {
  const unreadable = (reason: string, command = "unknown"): RequestRead => ({
    kind: "unreadable",
    reason,
    command,
  });
  const info = anchored(paths.root, paths.requests, (here) => here.lstat(name));
  if (info === null) {
    if (!name.includes("\uFFFD")) return null;
    return unreadable(
      "its file name is not valid UTF-8, so it cannot be read or removed (remove it by hand)",
    );
  }
  if (!info.isFile) {
    const kind = info.isSymlink
      ? "a symbolic link"
      : info.isDirectory
      ? "a directory"
      : "a special file";
    return unreadable(`not a regular file (${kind})`);
  }
  if (info.size > MAX_REQUEST_BYTES) {
    return unreadable(
      `too large: ${info.size} bytes, the limit is ${MAX_REQUEST_BYTES}`,
    );
  }
  let bytes: Uint8Array;
  try {
    const file = openRequest(paths, name);
    if (file === null) return null;
    bytes = await readCapped(file, MAX_REQUEST_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    return unreadable(`cannot be read: ${errorText(error)}`);
  }
  if (bytes.length > MAX_REQUEST_BYTES) {
    return unreadable(`too large: the limit is ${MAX_REQUEST_BYTES} bytes`);
  }
  try {
    return { kind: "json", value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch (error) {
    return unreadable(`not JSON: ${errorText(error)}`, "unparseable");
  }
}

/** A request file's JSON object, or `null` when it is gone or not one. */
export async function readRequestQuietly(
  paths: ControlPaths,
  name: string,
): Promise<Record<string, unknown> | null> {
  try {
    const file = openRequest(paths, name);
    if (file === null) return null;
    const bytes = await readCapped(file, MAX_REQUEST_BYTES);
    if (bytes.length > MAX_REQUEST_BYTES) return null;
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Removes a request (a directory whole: its links are removed, never
 * followed). Gone already is fine.
 */
export function removeRequestFile(paths: ControlPaths, name: string): void {
  try {
    anchored(paths.root, paths.requests, (here) => here.remove(name));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
}
