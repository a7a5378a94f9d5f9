/**
 * Sinks: where rendered text and events go. A terminal sink keeps colour only
 * when asked (a terminal without NO_COLOR); a log file sink never carries
 * escape codes; an NDJSON sink writes the canonical events themselves.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import { terminalSafe } from "./ansi.ts";

/** Something that receives each event with its rendered text. */
export interface RenderSink {
  /** One event and the text rendered for it (possibly empty). */
  event(event: RunEvent, text: string): Promise<void>;
  /** Text not tied to an event (a footer, a line closed on a renderer swap). */
  text(text: string): Promise<void>;
}

/** Writes text somewhere (stdout, a buffer). */
export type WriteText = (text: string) => Promise<void>;

/**
 * A sink for a terminal (or a pipe): rendered text, terminal-safe, with the
 * renderer's ANSI styling kept only when `color` is true.
 */
export function terminalSink(
  write: WriteText,
  options: { color: boolean },
): RenderSink {
  const out = (text: string): Promise<void> =>
    text === ""
      ? Promise.resolve()
      : write(terminalSafe(text, { style: options.color }));
  return { event: (_event, text) => out(text), text: out };
}

/** A sink for a log file: rendered text with every escape code and control removed. */
export function transcriptSink(write: WriteText): RenderSink {
  const out = (text: string): Promise<void> =>
    text === "" ? Promise.resolve() : write(terminalSafe(text));
  return { event: (_event, text) => out(text), text: out };
}

/** A sink for NDJSON: each canonical event as one compact JSON line. */
export function ndjsonSink(write: WriteText): RenderSink {
  return {
    event: (event) => write(JSON.stringify(event) + "\n"),
    text: () => Promise.resolve(),
  };
}
