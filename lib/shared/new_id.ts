/**
 * Time-sortable identifiers for runs and requests.
 *
 * @module
 */

import { UsageError } from "./errors.ts";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
let lastMillis = 0;

function stamp(millis: number): string {
  // 2026-11-30T02:52:00.123Z -> 20261130T025200123Z
  return new Date(millis).toISOString().replace(/[-:.]/g, "");
}

/**
 * Returns a new id such as `20261130T025200123Z-k3j9x0a1bq`: the UTC time to
 * the millisecond, then 10 random base-36 characters. Ids made by one process
 * sort in the order they were made, even within one millisecond.
 *
 * @example Usage
 * ```ts
 * import { newId } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const first = newId();
 * const second = newId();
 * assert.match(first, /^\d{8}T\d{9}Z-[0-9a-z]{10}$/);
 * assert.ok(first < second);
 * ```
 */
export function newId(): string {
  const now = Date.now();
  lastMillis = now > lastMillis ? now : lastMillis + 1;
  const random = crypto.getRandomValues(new Uint8Array(10));
  let tail = "";
  for (const byte of random) tail += ALPHABET[byte % ALPHABET.length];
  return `${stamp(lastMillis)}-${tail}`;
}

/** The pattern every id made by {@linkcode newId} matches. */
export const ID_PATTERN: RegExp = /^\d{8}T\d{9}Z-[0-9a-z]{10}$/;

/**
 * The run ids a run accepts (`--run-id`): letters, digits, `.`, `_` and `-`,
 * starting with a letter or digit, at most 128 characters, so a run id is
 * always a usable file name (`logs/<run id>/`, `events/<run id>.jsonl`).
 */
export const RUN_ID_PATTERN: RegExp = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks a run id given by a user.
 *
 * @returns The run id.
 * @throws {UsageError} naming what is allowed.
 *
 * @example Usage
 * ```ts
 * import { checkRunId } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(checkRunId("nightly-42"), "nightly-42");
 * assert.throws(() => checkRunId("../x"), /Invalid run id/);
 * ```
 */
export function checkRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new UsageError(
      `Invalid run id ${
        JSON.stringify(runId.length > 60 ? runId.slice(0, 60) + "…" : runId)
      }${
        runId.length > 128 ? ` (${runId.length} characters)` : ""
      }: use at most 128 letters, digits, '.', '_' and '-', starting with a letter or digit`,
      { code: "INVALID_RUN_ID" },
    );
  }
  return runId;
}
