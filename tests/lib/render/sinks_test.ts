import assert from "node:assert/strict";
import { paint } from "../../../lib/render/ansi.ts";
import {
  ndjsonSink,
  terminalSink,
  transcriptSink,
} from "../../../lib/render/sinks.ts";
import type { RunEvent } from "../../../lib/shared/mod.ts";

const EVENT: RunEvent = {
  v: 1,
  seq: 1,
  at: "2026-11-30T12:00:00.000Z",
  run_id: "r",
  prompt_id: "01",
  attempt: 1,
  type: "message_received",
  data: { content: "hi\x07\x1b]0;t\x07", role: "assistant" },
};

/** Text that slipped past a renderer: its own styling around hostile bytes. */
const TEXT = `${paint("ok", "green")} \x07\x1b]0;title\x07\x9b2J\x1b[2Jdone\n`;

async function collect(
  make: (write: (text: string) => Promise<void>) => {
    event(event: RunEvent, text: string): Promise<void>;
    text(text: string): Promise<void>;
  },
): Promise<string> {
  let out = "";
  const sink = make((text) => {
    out += text;
    return Promise.resolve();
  });
  await sink.event(EVENT, TEXT);
  await sink.text(TEXT);
  return out;
}

Deno.test("terminalSink() with colour keeps only SGR styling; without colour only text", async () => {
  assert.equal(
    await collect((write) => terminalSink(write, { color: true })),
    "\x1b[32mok\x1b[0m done\n".repeat(2),
  );
  assert.equal(
    await collect((write) => terminalSink(write, { color: false })),
    "ok done\n".repeat(2),
  );
});

Deno.test("transcriptSink() writes no escape sequence and no control but newline and tab", async () => {
  assert.equal(await collect(transcriptSink), "ok done\n".repeat(2));
});

Deno.test("ndjsonSink() writes the event itself, unaltered", async () => {
  const out = await collect(ndjsonSink);
  assert.equal(out, JSON.stringify(EVENT) + "\n");
  assert.deepEqual(JSON.parse(out), EVENT);
});
