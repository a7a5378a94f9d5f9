/**
 * Append-only JSONL files: appending a whole line, and cutting a torn last
 * line off.
 *
 * @module
 */

import { openAppend, openExisting } from "./open_file.ts";
import { type WithinOptions, writeAll } from "./private_files.ts";

const encoder = new TextEncoder();

/**
 * Appends one line (a newline is added) to `path`, creating it with mode
 * 0600. When the file ends in a torn line (a crash, a full disk), the new
 * line starts on a line of its own, so it stays readable. With `sync`, the
 * append is on disk when the promise resolves.
 *
 * @throws {LinkRefusedError} with `within`, for a link at the path or above.
 */
export async function appendLine(
  path: string,
  line: string,
  options: { sync?: boolean } & WithinOptions = {},
): Promise<void> {
  const file = await openAppend(path, options);
  try {
    const size = (await file.stat()).size;
    let text = line + "\n";
    if (size > 0 && !(await endsWithNewline(file, size))) text = "\n" + text;
    await writeAll(file, encoder.encode(text));
    if (options.sync) await file.sync();
  } finally {
    file.close();
  }
}

async function endsWithNewline(
  file: Deno.FsFile,
  size: number,
): Promise<boolean> {
  await file.seek(size - 1, Deno.SeekMode.Start);
  const last = new Uint8Array(1);
  return (await file.read(last)) === 1 && last[0] === 0x0a;
}

/**
 * Cuts a torn last line (one without its newline) off a JSONL file: it never
 * was a complete record. A line still being written by another process is
 * given a moment to finish first.
 *
 * @returns The number of bytes cut (0 when the file ends cleanly or is missing).
 */
export async function repairTornTail(
  path: string,
  options: WithinOptions = {},
): Promise<number> {
  let file: Deno.FsFile | null;
  if (options.within !== undefined) {
    file = await openExisting(path, {
      read: true,
      write: true,
      within: options.within,
    });
  } else {
    try {
      file = await Deno.open(path, { read: true, write: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return 0;
      throw error;
    }
  }
  if (file === null) return 0;
  try {
    for (let look = 0;; look++) {
      const size = (await file.stat()).size;
      if (size === 0 || await endsWithNewline(file, size)) return 0;
      if (look === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      const keep = await lastNewlineEnd(file, size);
      await file.truncate(keep);
      await file.sync();
      return size - keep;
    }
  } finally {
    file.close();
  }
}

/** The offset just past the last newline of a file (0 when it has none). */
async function lastNewlineEnd(
  file: Deno.FsFile,
  size: number,
): Promise<number> {
  const chunk = new Uint8Array(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    await file.seek(start, Deno.SeekMode.Start);
    let read = 0;
    while (read < end - start) {
      const n = await file.read(chunk.subarray(read, end - start));
      if (n === null || n === 0) break;
      read += n;
    }
    const at = chunk.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}
