/**
 * Finding where a `seq` starts in an events file without reading it from
 * byte 0: events are appended in `seq` order, so a binary search over byte
 * offsets (each probe reads the first whole line after it) narrows the
 * start to a small window in a few reads.
 *
 * @module
 */

/** Below this many bytes the search stops: reading on is cheaper. */
const WINDOW = 64 * 1024;
const PROBE = 4 * 1024;
const NEWLINE = 0x0a;

/** The `seq` of a line, or `null` when it is not an event line. */
export function lineSeq(line: string): number | null {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null &&
        Number.isInteger(value.seq) && typeof value.type === "string"
      ? value.seq
      : null;
  } catch {
    return null;
  }
}

/**
 * The `seq` of the first event line starting at or after the line start
 * that follows `at` (or at `at` itself when a line starts there), or
 * `null` when no complete event line follows.
 */
async function firstSeqAfter(
  file: Deno.FsFile,
  at: number,
  size: number,
): Promise<number | null> {
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(PROBE);
  // From the byte before `at`: a newline there means a line starts at `at`.
  let start = at === 0 ? 0 : at - 1;
  let skip = at !== 0;
  let filled = 0;
  while (start < size) {
    await file.seek(start + filled, Deno.SeekMode.Start);
    const n = await file.read(buffer.subarray(filled));
    if (n === null || n === 0) return null;
    filled += n;
    let from = 0;
    if (skip) {
      const nl = buffer.subarray(0, filled).indexOf(NEWLINE);
      if (nl < 0) {
        start += filled;
        filled = 0;
        continue;
      }
      from = nl + 1;
      skip = false;
    }
    for (;;) {
      const nl = buffer.subarray(from, filled).indexOf(NEWLINE);
      if (nl < 0) break;
      const seq = lineSeq(decoder.decode(buffer.subarray(from, from + nl)));
      if (seq !== null) return seq;
      from += nl + 1;
    }
    // Keep the partial line; grow when it fills the buffer.
    buffer.copyWithin(0, from, filled);
    start += from;
    filled -= from;
    if (filled === buffer.length) {
      const grown = new Uint8Array(buffer.length * 2);
      grown.set(buffer);
      buffer = grown;
    }
  }
  return null;
}

/**
 * Where to start reading an events file so that no event line with
 * `seq >= target` is missed, and few lines before it are read: an offset at
 * which a line starts (0 when the target is at or before the start).
 * Invalid lines are passed over; a torn last line counts as past the end.
 */
export async function seekSeq(
  file: Deno.FsFile,
  target: number,
): Promise<number> {
  const size = (await file.stat()).size;
  let low = 0;
  let high = size;
  // Invariant: every event line before the line start after `low` has a
  // seq below the target.
  while (high - low > WINDOW) {
    const mid = low + Math.floor((high - low) / 2);
    const seq = await firstSeqAfter(file, mid, size);
    if (seq === null || seq >= target) high = mid;
    else low = mid;
  }
  if (low === 0) return 0;
  return await lineStartAfter(file, low, size);
}

/** The offset of the first line start at or after `at`. */
async function lineStartAfter(
  file: Deno.FsFile,
  at: number,
  size: number,
): Promise<number> {
  const buffer = new Uint8Array(PROBE);
  let start = at - 1;
  while (start < size) {
    await file.seek(start, Deno.SeekMode.Start);
    const n = await file.read(buffer);
    if (n === null || n === 0) break;
    const nl = buffer.subarray(0, n).indexOf(NEWLINE);
    if (nl >= 0) return start + nl + 1;
    start += n;
  }
  return size;
}
