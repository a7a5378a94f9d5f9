/**
 * Prompt ids: whole numbers written with at least two digits.
 *
 * @module
 */

/**
 * Normalises a prompt id: a whole number, written with at least two digits.
 *
 * @param value An id as written (`1`, `"1"`, `"007"`).
 * @returns The normalised id (`"01"`, `"07"`), or `null` when it is not a
 * whole number.
 *
 * @example Usage
 * ```ts
 * import { normalizePromptId } from "./prompt_id.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(normalizePromptId(3), "03");
 * assert.equal(normalizePromptId("007"), "07");
 * assert.equal(normalizePromptId("../x"), null);
 * ```
 */
export function normalizePromptId(value: unknown): string | null {
  let digits: string;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    digits = String(value);
  } else if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) {
    digits = String(Number(value.trim()));
  } else {
    return null;
  }
  return digits.padStart(2, "0");
}
