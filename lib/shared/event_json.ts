/**
 * An event's JSON line, encoded once: the stream appends it, and the
 * renderer reads from the same text that the event holds nothing a
 * terminal would obey (so it need not walk the event to make it safe).
 *
 * @module
 */

import type { RunEvent } from "./events.ts";

let last: RunEvent | null = null;
let lastJson = "";

/**
 * `JSON.stringify(event)`, remembered for the event encoded last (an event
 * is not changed once it is emitted).
 */
export function eventJson(event: RunEvent): string {
  if (event !== last) {
    lastJson = JSON.stringify(event);
    last = event;
  }
  return lastJson;
}

/** The JSON of `event` when it was the last one encoded, else `null`. */
export function encodedJson(event: RunEvent): string | null {
  return event === last ? lastJson : null;
}
