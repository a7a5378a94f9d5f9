/**
 * Sinks: where rendered text and events go. A terminal sink keeps colour only
 * when asked (a terminal without NO_COLOR); a log file sink never carries
 * escape codes; an NDJSON sink writes the canonical events themselves.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import { terminalSafe, vouchParsed } from "./ansi.ts";
import type { Renderer } from "./renderer.ts";

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

/** Options for {@linkcode renderEventBatches}. */
export interface RenderBatchesOptions {
  /** Keep the renderer's ANSI styling (a terminal without NO_COLOR). */
  color: boolean;
  /** When aborted, the renderer's closing text is not written. */
  signal?: AbortSignal;
}

/**
 * Renders batches of events for a terminal (or a pipe) and writes their
 * text a batch or more at a time: the bytes a {@linkcode terminalSink}
 * writes event by event (each event's text made terminal-safe on its own),
 * in one write for the batches that are there at once (a replay's) and at
 * once for a batch that came alone (a follower's). Ends with the renderer's
 * closing text, unless `signal` was aborted.
 *
 * @param batches Batches of events in order (a follower's batches), each
 * with the line it was parsed from, when there is one.
 * @param renderer What turns each event into text.
 * @param write Where the text goes.
 * @param options Colour, and a signal that skips the closing text.
 */
export async function renderEventBatches(
  batches: AsyncIterable<
    readonly { readonly event: RunEvent; readonly line?: string }[]
  >,
  renderer: Pick<Renderer, "render" | "finish">,
  write: WriteText,
  options: RenderBatchesOptions,
): Promise<void> {
  const safe = { style: options.color };
  const iterator = batches[Symbol.asyncIterator]();
  let text = "";
  for (;;) {
    // Batches already read come at once: their text is written together,
    // when enough waits or when the next batch must wait for the file.
    const next = iterator.next();
    if (text !== "") {
      // (A failing batch writes what came before it first.)
      const waiting = await ready(next);
      if (waiting || text.length >= FLUSH_CHARS) {
        await write(text);
        text = "";
      }
    }
    const { done, value: batch } = await next;
    if (done) break;
    for (const { event, line } of batch) {
      // The event parsed from a line with nothing unsafe in it: its text
      // need not be made safe string by string.
      if (line !== undefined) vouchParsed(event, line);
      const rendered = renderer.render(event);
      vouchParsed(null);
      if (rendered !== "") text += terminalSafe(rendered, safe);
    }
  }
  if (text !== "") await write(text);
  if (options.signal?.aborted) return;
  const closing = renderer.finish();
  if (closing !== "") await write(terminalSafe(closing, safe));
}

/** Rendered text written at once, at most (about). */
const FLUSH_CHARS = 256 * 1024;

/**
 * Whether `next` still waits once the event loop has turned (it waits for
 * the file), or failed; `false` when it settled first.
 */
async function ready(next: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const turn = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), 0);
  });
  try {
    return await Promise.race([next.then(() => false, () => true), turn]);
  } finally {
    clearTimeout(timer);
  }
}
