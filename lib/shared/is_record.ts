/**
 * Telling a JSON object from the other values a parsed line can hold.
 *
 * @module
 */

/**
 * Whether a value is a JSON object: not `null`, not an array.
 *
 * @example Usage
 * ```ts
 * import { isRecord } from "./is_record.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isRecord({ a: 1 }), true);
 * assert.equal(isRecord([1]), false);
 * assert.equal(isRecord(null), false);
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
