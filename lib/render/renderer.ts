/**
 * The renderer interface: events in, text out, no I/O.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import type { RenderContext } from "./current_diff.ts";

/**
 * Turns events into text. A renderer does no I/O: sinks write its text (and
 * strip its ANSI styling where colour is off).
 */
export interface Renderer {
  /** The log mode this renderer implements. */
  readonly mode: ViewSettings["log_mode"];
  /**
   * Renders one event. The text may leave a line open (streamed text runs
   * on); the next event's text, `finish()` or `detach()` closes it.
   *
   * @param event The event.
   * @param context What the runner read for the event (current diffs).
   */
  render(event: RunEvent, context?: RenderContext): string;
  /** Closes the output at the end of a run (an open line, a footer). */
  finish(): string;
  /**
   * Closes an open line when this renderer is replaced mid-run; what it
   * accumulated (its counters) is dropped.
   */
  detach(): string;
  /** Applies new view settings from the next event on. */
  setView(view: ViewSettings): void;
}
