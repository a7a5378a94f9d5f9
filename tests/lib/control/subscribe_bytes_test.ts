import assert from "node:assert/strict";
import {
  eventByteBatches,
  eventTextBatches,
} from "../../../lib/control/events.ts";
import type { RunEvent } from "../../../lib/shared/events.ts";
import {
  appendText,
  makeControlRoot,
  runEvent,
  writeSnapshotFile,
} from "../../_helpers/plane.ts";

const line = (event: RunEvent): string => JSON.stringify(event) + "\n";

function concat(blocks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const block of blocks) {
    out.set(block, at);
    at += block.length;
  }
  return out;
}

Deno.test("eventByteBatches() hands out a long stream as the bytes stored, in a few blocks", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  let text = "";
  for (let seq = 1; seq < 20_000; seq++) {
    text += line(runEvent("run-a", seq, "message_streamed", {
      delta: seq % 7 === 0 ? "naïve ✓ " : "text ",
      kind: "text",
    }));
  }
  text += line(runEvent("run-a", 20_000, "run_finished", {
    status: "completed",
  }, null));
  await Deno.writeTextFile(root.paths.events, text);
  const stored = await Deno.readFile(root.paths.events);
  const blocks = await Array.fromAsync(
    eventByteBatches(root.ref("run-a")),
    (block) => block.slice(),
  );
  // Blocks of about a read each (1 MiB), not the text path's 120 KiB.
  assert.ok(stored.length > 3 * 1024 * 1024);
  assert.ok(blocks.length <= Math.ceil(stored.length / (1024 * 1024)) + 1);
  assert.deepEqual(concat(blocks), stored);
});

Deno.test("eventByteBatches() writes what eventTextBatches() delivers: hostile, torn, repeated and non-canonical lines", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, {
    run_id: "run-a",
    status: "completed",
  });
  const invalid = new Uint8Array([0xff, 0xfe, 0x0a]);
  const parts: (string | Uint8Array)[] = [
    line(runEvent("run-a", 1, "tool_call_started")),
    line(runEvent("run-a", 2, "message_streamed", {
      delta: "\x1b]0;owned\x07\u009b2J\x1b[31mred",
      kind: "text",
    })),
    "not json\n",
    line(runEvent("run-a", 2, "tool_call_started")),
    invalid,
    '{"seq":3,"v":1,"type":"message_streamed","data":{"delta":"caf\\u00e9"}}\r\n',
    line(runEvent("run-a", 4, "run_finished", { status: "completed" }, null)),
    line(runEvent("run-a", 5, "tool_call_started")),
    line(runEvent("run-a", 6, "tool_call_started")).slice(0, 30),
  ];
  for (const part of parts) {
    if (typeof part === "string") await appendText(root.paths.events, part);
    else await Deno.writeFile(root.paths.events, part, { append: true });
  }
  for (const from of ["start", 2, 3] as const) {
    const bytes = concat(
      await Array.fromAsync(
        eventByteBatches(root.ref("run-a"), { from }),
        (block) => block.slice(),
      ),
    );
    const text = (await Array.fromAsync(
      eventTextBatches(root.ref("run-a"), { from }),
    )).join("");
    assert.deepEqual(bytes, new TextEncoder().encode(text), `from ${from}`);
  }
});
