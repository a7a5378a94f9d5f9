/**
 * What one delivery attempt (a command run, a webhook POST with its
 * retries) came to, and the text helpers both kinds share.
 *
 * @module
 */

/** How a delivery went: delivered with a note, or failed with a reason. */
export type DeliveryResult =
  | { ok: true; note: string }
  | { ok: false; reason: string };

/** Text from outside (a program's stderr, an error) made fit for a log line. */
export function oneLine(text: string, max = 200): string {
  // deno-lint-ignore no-control-regex
  const flat = text.replace(/[\x00-\x1f\x7f]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Why a delivery was stopped when the run ended. */
export function endedReason(graceMs: number): string {
  return `the run ended and the ${graceMs} ms grace for deliveries passed`;
}
