/**
 * The renderer interface: events in, text out, no I/O.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import type { RenderContext } from "./worktree_diff.ts";

/** A tool call whose start was shown and whose end was not yet. */
export interface OpenToolCall {
  /** The tool's name. */
  name: string;
  /** Its input. */
  input: Record<string, unknown>;
}

/**
 * What a renderer replaced mid-run hands its successor, so that nothing it
 * showed is shown again: its counters are not handed over.
 */
export interface RenderHandover {
  /**
   * Assistant text streamed since the last whole message: the message that
   * ends it was shown already, as it streamed.
   */
  streamed: boolean;
  /** Tool calls started and not finished, by id: their starts were shown. */
  open_tools: Record<string, OpenToolCall>;
  /** The type of the last event shown (an error is shown once, not twice). */
  last_event: string | null;
}

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
  /**
   * What the successor of this renderer must know of what it showed (a
   * message that streamed, tool calls under way); pass it to
   * `createRenderer`.
   */
  handover(): RenderHandover;
  /** Applies new view settings from the next event on. */
  setView(view: ViewSettings): void;
}
