/**
 * Reading the fields of an agent CLI's JSON line, which is hostile input:
 * a field of the wrong type reads as absent, never as a crash.
 *
 * @module
 */

/** A JSON object's fields. */
export type Fields = Record<string, unknown>;

/** A string field, or `null`. */
export function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** A count or amount: a finite number of at least 0, else 0. */
export function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0
    ? value
    : 0;
}
