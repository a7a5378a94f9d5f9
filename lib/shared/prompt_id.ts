/**
 * Prompt ids: whole numbers written with at least two digits. The one rule
 * for an id in a packet's file names and front matter, and for one a user
 * gives (`control steer --prompt`, `control amend PROMPT_ID`, `amend()`).
 *
 * @module
 */

import { UsageError } from "./errors.ts";

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
    // As text, not through Number: 25 digits stay 25 digits, not "1e+24".
    digits = value.trim().replace(/^0+(?=\d)/, "");
  } else {
    return null;
  }
  return digits.padStart(2, "0");
}

/**
 * Normalises a prompt id a user gave, refusing anything but digits.
 *
 * @throws {UsageError} `INVALID_PROMPT_ID` when it is not digits.
 *
 * @example Usage
 * ```ts
 * import { checkPromptId } from "./prompt_id.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(checkPromptId(" 7 "), "07");
 * assert.throws(() => checkPromptId("../x"), /expected digits such as "01"/);
 * ```
 */
export function checkPromptId(value: unknown): string {
  const id = typeof value === "string" ? normalizePromptId(value) : null;
  if (id === null) {
    throw new UsageError(
      `Invalid prompt id ${
        JSON.stringify(value)
      }: expected digits such as "01"`,
      { code: "INVALID_PROMPT_ID" },
    );
  }
  return id;
}

/** Tells whether a command-line word is a prompt id (digits), not a TARGET. */
export function isPromptIdWord(word: string): boolean {
  return normalizePromptId(word) !== null;
}

/**
 * Orders prompt ids as a packet orders its prompts: by number, then as text.
 *
 * @example Usage
 * ```ts
 * import { comparePromptIds } from "./prompt_id.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(["10", "02", "100"].sort(comparePromptIds), ["02", "10", "100"]);
 * ```
 */
export function comparePromptIds(a: string, b: string): number {
  return Number(a) - Number(b) || a.localeCompare(b);
}
