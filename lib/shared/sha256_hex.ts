/**
 * A SHA-256 digest as lower-case hex: the stable short names the code base
 * derives from longer ones (receipt file names, fleet roots and consumers).
 *
 * @module
 */

/**
 * The SHA-256 of a text's UTF-8 bytes, as 64 hex digits.
 *
 * @example Usage
 * ```ts
 * import { sha256Hex } from "./sha256_hex.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   (await sha256Hex("abc")).slice(0, 12),
 *   "ba7816bf8f01",
 * );
 * ```
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(
    new Uint8Array(digest),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
}
