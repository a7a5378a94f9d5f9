/**
 * Lines read from a child's output with bounded memory however long a line
 * is, and parsed as JSON without ever throwing.
 *
 * @module
 */

import { errorText } from "../shared/errors.ts";

/** One line of the child's stdout (without its line ending). */
export interface ChildLine {
  /** The line's text, cut at `maxLineBytes` when it was longer. */
  text: string;
  /** Whether the line was longer than `maxLineBytes` and was cut. */
  truncated: boolean;
  /** The line's whole length in bytes, before any cut. */
  bytes: number;
}

/** A line parsed as JSON, or why it is not. */
export type ParsedLine =
  | { kind: "json"; value: unknown; line: ChildLine }
  | { kind: "text"; reason: string; line: ChildLine };

const NEWLINE = 10;

/**
 * Splits a byte stream into lines, keeping at most `maxBytes` of each: the
 * rest of a longer line is counted and dropped, never held.
 */
export async function* readLines(
  stream: AsyncIterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<ChildLine> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let kept = 0;
  let bytes = 0;
  const take = (chunk: Uint8Array): void => {
    bytes += chunk.length;
    const room = maxBytes - kept;
    if (room <= 0 || chunk.length === 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    // A copy: the stream may reuse its buffer.
    parts.push(part.slice());
    kept += part.length;
  };
  const line = (): ChildLine => {
    let joined: Uint8Array;
    if (parts.length === 1) joined = parts[0]!;
    else {
      joined = new Uint8Array(kept);
      let offset = 0;
      for (const part of parts) {
        joined.set(part, offset);
        offset += part.length;
      }
    }
    let text = decoder.decode(joined);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    const result = { text, truncated: bytes > maxBytes, bytes };
    parts = [];
    kept = 0;
    bytes = 0;
    return result;
  };
  for await (const chunk of stream) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end === -1) break;
      take(chunk.subarray(start, end));
      yield line();
      start = end + 1;
    }
    take(chunk.subarray(start));
  }
  if (bytes > 0) yield line();
}

/**
 * Parses one line as JSON without ever throwing: blank, cut or malformed
 * lines come back as text with the reason.
 *
 * @example Usage
 * ```ts
 * import { parseJsonLine } from "./read_lines.ts";
 * import assert from "node:assert/strict";
 *
 * const ok = parseJsonLine({ text: '{"type":"result"}', truncated: false, bytes: 17 });
 * assert.equal(ok.kind, "json");
 * const noise = parseJsonLine({ text: "Warning: slow", truncated: false, bytes: 13 });
 * assert.equal(noise.kind, "text");
 * ```
 */
export function parseJsonLine(line: ChildLine): ParsedLine {
  if (line.truncated) {
    return {
      kind: "text",
      reason: `line of ${line.bytes} bytes was cut`,
      line,
    };
  }
  if (line.text.trim() === "") return { kind: "text", reason: "blank", line };
  try {
    return { kind: "json", value: JSON.parse(line.text), line };
  } catch (error) {
    return { kind: "text", reason: errorText(error), line };
  }
}
