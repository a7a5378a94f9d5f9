/**
 * Choosing which stored event lines a follower delivers, batch by batch:
 * each complete line that is an event (JSON with an integer `seq` and a
 * string `type`) whose `seq` is above every one delivered before and at
 * least the start, up to and including `run_finished`.
 *
 * A `run_finished` whose status is `interrupted` is the end only when
 * nothing follows it: `run --resume` continues an interrupted run in the
 * same stream, after its `run_finished` (which stays as written). Any other
 * `run_finished` is final: nothing after it is read.
 *
 * {@linkcode selectLines} parses every line. {@linkcode selectText} gives
 * the same lines as text without parsing them: a line in the writer's
 * canonical shape is recognised by one compiled pattern of the JSON
 * grammar (nesting up to a bound), its `seq` read from its fixed prefix;
 * any other line (torn, hand-written, nested deeper) is parsed.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";

/** What a follower has delivered so far, and where it starts. */
export interface SelectState {
  /** The highest `seq` seen (0 before any). */
  lastSeq: number;
  /** The first `seq` to deliver. */
  minSeq: number;
  /**
   * The status of the `run_finished` the events seen so far end with;
   * `null` (or absent) when they do not end with one.
   */
  ended?: string | null;
}

/** Whether a `run_finished` with this status may be followed by a continuation. */
function continuable(status: string | null | undefined): boolean {
  return status === "interrupted";
}

/** One event with the exact line it was stored as. */
export interface EventLine {
  /** The stored line, byte for byte (without its newline). */
  line: string;
  /** The parsed event. */
  event: RunEvent;
}

/** Parses a stored line, or returns `null` when it is not an event. */
export function parseEvent(line: string): RunEvent | null {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null &&
        Number.isInteger(value.seq) && typeof value.type === "string"
      ? value as RunEvent
      : null;
  } catch {
    return null;
  }
}

/**
 * The events of a batch of complete lines (text, each line with its
 * newline) to deliver, and whether the events so far end with
 * `run_finished` (`state.ended` says its status). Nothing after a final
 * `run_finished` is read; after an interrupted one, a continuation is.
 */
export function selectLines(
  text: string,
  state: SelectState,
): { lines: EventLine[]; finished: boolean } {
  const lines: EventLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const event = parseEvent(line);
    if (event === null || event.seq <= state.lastSeq) continue;
    state.lastSeq = event.seq;
    state.ended = null;
    if (event.seq >= state.minSeq) lines.push({ line, event });
    if (event.type === "run_finished") {
      const status = event.data?.status;
      state.ended = typeof status === "string" ? status : "failed";
      if (!continuable(state.ended)) return { lines, finished: true };
    }
  }
  return { lines, finished: (state.ended ?? null) !== null };
}

const STRING = String
  .raw`"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"`;
const NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;

/** A JSON value nested at most `depth` deep, exactly as JSON.parse reads it. */
function jsonValue(depth: number): string {
  const scalar = `${STRING}|${NUMBER}|true|false|null`;
  if (depth === 0) return `(?:${scalar})`;
  const inner = jsonValue(depth - 1);
  // Members separated by commas, none trailing: a comma must be followed by
  // another member, the last member by the closing bracket.
  return `(?:${scalar}|\\{(?:${STRING}:${inner}(?:,(?=")|(?=\\})))*\\}` +
    `|\\[(?:${inner}(?:,(?!\\])|(?=\\])))*\\])`;
}

/** Where the digits of `seq` start in a canonical line. */
const SEQ_AT = '{"v":1,"seq":'.length;

/**
 * A run of lines in the canonical shape the plane writes
 * (`JSON.stringify` of an event, keys in order), each with its newline,
 * none of them `run_finished` (that one is parsed: it may end the stream).
 */
const CANONICAL_LINES = new RegExp(
  `(?:\\{"v":1,"seq":(?:0|[1-9]\\d*),"at":${STRING},"run_id":${STRING},` +
    `"prompt_id":(?:${STRING}|null),"attempt":(?:${NUMBER}|null),` +
    `"type":"(?!run_finished")[a-z_]+","data":${jsonValue(5)}\\}\\n)*`,
  "y",
);

function seqAt(text: string, at: number): number {
  let end = at;
  let seq = 0;
  for (;; end++) {
    const digit = text.charCodeAt(end) - 48;
    if (digit < 0 || digit > 9) break;
    seq = seq * 10 + digit;
  }
  return end - at > 15 ? Number(text.slice(at, end)) : seq;
}

/**
 * The same lines as {@linkcode selectLines}, as text: each delivered line
 * with its newline, unchanged.
 */
export function selectText(
  text: string,
  state: SelectState,
): { text: string; finished: boolean } {
  const all = text;
  let out = "";
  let at = 0;
  while (at < all.length) {
    CANONICAL_LINES.lastIndex = at;
    CANONICAL_LINES.test(all);
    const end = CANONICAL_LINES.lastIndex;
    if (end > at) {
      out += keptLines(all, at, end, state);
      at = end;
    }
    if (at >= all.length) break;
    // A line of another shape: parsed.
    const newline = all.indexOf("\n", at);
    const chosen = selectLines(all.slice(at, newline), state);
    if (chosen.lines.length > 0) out += chosen.lines[0]!.line + "\n";
    if (chosen.finished && !continuable(state.ended)) {
      return { text: out, finished: true };
    }
    at = newline + 1;
  }
  return { text: out, finished: (state.ended ?? null) !== null };
}

/** The canonical lines of `all[from, to)` to deliver, as one text. */
function keptLines(
  all: string,
  from: number,
  to: number,
  state: SelectState,
): string {
  let out = "";
  let keepFrom = from;
  for (let line = from; line < to;) {
    const next = all.indexOf("\n", line) + 1;
    const seq = seqAt(all, line + SEQ_AT);
    const keep = seq > state.lastSeq && seq >= state.minSeq;
    if (seq > state.lastSeq) {
      state.lastSeq = seq;
      state.ended = null;
    }
    if (!keep) {
      if (keepFrom < line) out += all.slice(keepFrom, line);
      keepFrom = next;
    }
    line = next;
  }
  if (keepFrom < to) out += all.slice(keepFrom, to);
  return out;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
/**
 * Bytes decoded at once: below the size V8 keeps apart from its young
 * generation, so a long replay's memory stays flat.
 */
const CHUNK_BYTES = 120 * 1024;
const NEWLINE = 0x0a;

/** Where the chunk of whole lines starting at `at` ends (after its newline). */
function chunkEnd(bytes: Uint8Array, at: number): number {
  const limit = Math.min(at + CHUNK_BYTES, bytes.length);
  const last = bytes.subarray(at, limit).lastIndexOf(NEWLINE);
  if (last >= 0) return at + last + 1;
  const beyond = bytes.indexOf(NEWLINE, limit);
  return beyond >= 0 ? beyond + 1 : bytes.length;
}

/**
 * The same lines as {@linkcode selectText}, from a block of bytes read
 * from the stream (complete lines), decoded a chunk of lines at a time:
 * the block itself when every line in it is delivered and each chunk's
 * text reads back to the same bytes (valid UTF-8, no leading byte-order
 * mark: what a decode and an encode would give), so a verified block
 * passes through as it was read; otherwise the delivered lines' text,
 * encoded (`null` when there is none).
 */
export function selectBytes(
  bytes: Uint8Array,
  state: SelectState,
): { batch: Uint8Array | null; finished: boolean } {
  const texts: string[] = [];
  let whole = true;
  for (let at = 0; at < bytes.length;) {
    const end = chunkEnd(bytes, at);
    const chunk = bytes.subarray(at, end);
    const text = decoder.decode(chunk);
    const selected = selectText(text, state);
    texts.push(selected.text);
    // The delivered lines are whole lines of `text` in order: as long as
    // it, they are all of it.
    whole &&= selected.text.length === text.length &&
      !(chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) &&
      !text.includes("\ufffd");
    at = end;
    if (selected.finished && !continuable(state.ended)) {
      whole &&= at === bytes.length;
      break;
    }
  }
  const out = whole ? bytes : encoder.encode(texts.join(""));
  return {
    batch: out.length > 0 ? out : null,
    finished: (state.ended ?? null) !== null,
  };
}
