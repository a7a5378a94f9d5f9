import assert from "node:assert/strict";
import {
  type ChildLine,
  parseJsonLine,
  readLines,
} from "../../../lib/providers/read_lines.ts";

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(
    chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c),
  );
}

async function collect(lines: AsyncIterable<ChildLine>): Promise<ChildLine[]> {
  const all: ChildLine[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

Deno.test("readLines() joins lines split across chunks, even inside a UTF-8 character, and strips CRLF", async () => {
  const euro = new TextEncoder().encode("€"); // three bytes
  const lines = await collect(readLines(
    streamOf([
      "one\r\ntw",
      "o\nprice ",
      euro.subarray(0, 1),
      euro.subarray(1),
      "\n\nlast",
    ]),
    1024,
  ));
  assert.deepEqual(lines.map((l) => l.text), [
    "one",
    "two",
    "price €",
    "",
    "last",
  ]);
  assert.ok(lines.every((l) => !l.truncated));
});

Deno.test("readLines() cuts a line longer than the limit, counts its bytes, and reads the next line whole", async () => {
  const huge = "x".repeat(300_000);
  const chunks = [...huge.match(/.{1,65536}/g)!, '\n{"after":true}\n'];
  const lines = await collect(readLines(streamOf(chunks), 1000));
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.text.length, 1000);
  assert.equal(lines[0]!.truncated, true);
  assert.equal(lines[0]!.bytes, 300_000);
  assert.deepEqual(lines[1], {
    text: '{"after":true}',
    truncated: false,
    bytes: 14,
  });
});

Deno.test("parseJsonLine() never throws: malformed, blank and cut lines come back as text with a reason", () => {
  const line = (text: string, truncated = false): ChildLine => ({
    text,
    truncated,
    bytes: text.length,
  });
  const parsed = parseJsonLine(line('{"type":"system","subtype":"init"}'));
  assert.equal(parsed.kind, "json");
  assert.deepEqual(parsed.kind === "json" && parsed.value, {
    type: "system",
    subtype: "init",
  });
  for (const bad of [line("{not json"), line("   "), line('{"a":1}', true)]) {
    const result = parseJsonLine(bad);
    assert.equal(result.kind, "text");
    assert.ok(result.kind === "text" && result.reason.length > 0);
  }
});
