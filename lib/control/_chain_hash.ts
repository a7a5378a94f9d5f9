/**
 * The hash chain of the audit log and the amendments files: every line
 * carries `prev`, the SHA-256 (hex) of the bytes of the line before it
 * (without its newline); a file's first line carries the SHA-256 of its own
 * `run_id` (of the empty text when that is `null`).
 *
 * @module
 */

import { sha256Hex } from "./_sha256.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The SHA-256 of some bytes, as 64 lower-case hex digits. */
export function chainHash(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

/** The `prev` of a file's first line: the SHA-256 of the line's run id. */
export function firstPrev(runId: unknown): string {
  return sha256Hex(encoder.encode(typeof runId === "string" ? runId : ""));
}

/** A line as an object, or `null` when it is not one (torn, not JSON). */
export function parseChainLine(
  bytes: Uint8Array,
): Record<string, unknown> | null {
  try {
    const value = JSON.parse(decoder.decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value
      : null;
  } catch {
    return null;
  }
}
