/**
 * Appending to a hash-chained JSONL file (`control/log.jsonl`,
 * `amendments/<prompt>.jsonl`): each line carries `prev`, the SHA-256 of the
 * line before it (see `_chain_hash.ts`). Several processes append to the
 * same log (the runner's plane, `control amend`, a fleet bridge), so the
 * previous line is read and the new one written under an exclusive kernel
 * lock on the file itself: appenders take turns, and each chains to the
 * line really before its own.
 *
 * @module
 */

import { StateError } from "../shared/errors.ts";
import { openAppend, writeAll } from "../shared/files.ts";
import { waitForLock } from "../shared/lock_file.ts";
import { chainHash, firstPrev, parseChainLine } from "./_chain_hash.ts";

const NEWLINE = 0x0a;
const encoder = new TextEncoder();

/** How long an append waits for another appender of the same file. */
export const CHAIN_LOCK_TIMEOUT_MS = 30_000;

/** What an appender learns from the end of the file. */
interface Tail {
  /** The last whole line (a JSON object) to chain to, or `null`: none. */
  last: Uint8Array | null;
  /** Whether the file ends in a newline (or is empty). */
  clean: boolean;
}

async function readRange(
  file: Deno.FsFile,
  start: number,
  end: number,
): Promise<Uint8Array> {
  const bytes = new Uint8Array(end - start);
  await file.seek(start, Deno.SeekMode.Start);
  let read = 0;
  while (read < bytes.length) {
    const n = await file.read(bytes.subarray(read));
    if (n === null || n === 0) break;
    read += n;
  }
  return bytes.subarray(0, read);
}

/**
 * Finds the line to chain to, reading from the end of the file: its last
 * line that is a JSON object. A torn line (a writer that crashed) is passed
 * over, so the chain goes round it; a last line complete but for its
 * newline is a line like any other (the append ends it).
 */
async function readTail(file: Deno.FsFile, size: number): Promise<Tail> {
  if (size === 0) return { last: null, clean: true };
  for (let window = 4096;; window *= 4) {
    const start = Math.max(0, size - window);
    const bytes = await readRange(file, start, size);
    const clean = bytes.at(-1) === NEWLINE;
    // Lines from the end; the first one is cut unless the window starts the file.
    let end = clean ? bytes.length - 1 : bytes.length;
    for (;;) {
      const at = bytes.subarray(0, end).lastIndexOf(NEWLINE);
      if (at < 0 && start > 0) break;
      const line = bytes.subarray(at + 1, end);
      if (parseChainLine(line) !== null) {
        return { last: line.slice(), clean };
      }
      if (at < 0) return { last: null, clean };
      end = at;
    }
  }
}

/**
 * Appends `record` as one line to a hash-chained JSONL file, with `prev`
 * (the SHA-256 of the line before it, or of `record.run_id` for the first
 * line) added as its last key. The file is created (mode 0600) when
 * missing; the append is synced. Never through a link.
 *
 * @param path The file.
 * @param record The line's object, without `prev`.
 * @param options The private root the file lies in; how long to wait for
 * another appender (default 30 s).
 * @returns The record as written, with its `prev`.
 * @throws {LinkRefusedError} for a link at the path or above.
 * @throws {StateError} `CHAIN_LOCKED` when another appender held the file
 * that long.
 */
export async function appendChainedLine<
  T extends { run_id: string | null },
>(
  path: string,
  record: T,
  options: { within: string; timeoutMs?: number },
): Promise<T & { prev: string }> {
  const file = await openAppend(path, { within: options.within });
  try {
    const timeoutMs = options.timeoutMs ?? CHAIN_LOCK_TIMEOUT_MS;
    if (!(await waitForLock(file, Date.now() + timeoutMs))) {
      throw new StateError(
        `Cannot append to "${path}": another writer has held it for ${
          timeoutMs / 1000
        } s`,
        {
          code: "CHAIN_LOCKED",
          hint:
            "Nothing was written. Try again once the other writer has finished",
        },
      );
    }
    const tail = await readTail(file, (await file.stat()).size);
    const prev = tail.last === null
      ? firstPrev(record.run_id)
      : chainHash(tail.last);
    const { prev: _ignored, ...fields } = record as T & { prev?: unknown };
    const written = { ...fields, prev } as unknown as T & { prev: string };
    // A torn last line ends here, so the new line stands on its own.
    const text = (tail.clean ? "" : "\n") + JSON.stringify(written) + "\n";
    await writeAll(file, encoder.encode(text));
    await file.sync();
    return written;
  } finally {
    file.close();
  }
}
