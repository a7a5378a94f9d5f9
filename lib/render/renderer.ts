/**
 * The renderer interface: events in, text out, no I/O.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";

/**
 * Turns events into text. A renderer does no I/O: sinks write its text (and
 * strip its ANSI styling where colour is off).
 */
export interface Renderer {
  /** The log mode this renderer implements. */
  readonly mode: ViewSettings["log_mode"];
  /** Renders one event; the text ends with a newline, or is empty. */
  render(event: RunEvent): string;
  /** Renders whatever the renderer holds back at the end (a footer). */
  finish(): string;
  /** Applies new view settings from the next event on. */
  setView(view: ViewSettings): void;
}
