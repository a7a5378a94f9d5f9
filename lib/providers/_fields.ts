/**
 * Reading the fields of an agent CLI's JSON line, which is hostile input:
 * a field of the wrong type reads as absent, never as a crash.
 *
 * @module
 */

import { isRecord } from "../shared/is_record.ts";

/** A JSON object's fields. */
export type Fields = Record<string, unknown>;

/** The longest text kept in one `message_received` or tool output. */
export const TEXT_CHARS = 1_000_000;

/** An object field's fields, or `null`. */
export function record(value: unknown): Fields | null {
  return isRecord(value) ? value : null;
}

/** A text cut to {@linkcode TEXT_CHARS} (an agent's output can be huge). */
export function clip(value: string): string {
  return value.length > TEXT_CHARS ? value.slice(0, TEXT_CHARS) : value;
}

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
