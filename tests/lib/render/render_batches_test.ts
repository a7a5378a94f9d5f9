import assert from "node:assert/strict";
import { vouchParsed } from "../../../lib/render/ansi.ts";
import { createRenderer } from "../../../lib/render/create_renderer.ts";
import { renderEventBatches, terminalSink } from "../../../lib/render/sinks.ts";
import type { RunEvent } from "../../../lib/shared/events.ts";
import { DEFAULT_VIEW } from "../../../lib/shared/view.ts";
import { runEvent } from "../../_helpers/plane.ts";

/** A run's events, some carrying text a terminal would obey. */
function stream(): RunEvent[] {
  const hostile = "\x1b]0;owned\x07\u009b2J\x1b[31mred\r\x08\u0085";
  const events: RunEvent[] = [
    runEvent("run-a", 1, "prompt_started", {
      prompt_id: "01",
      name: `Load ${hostile}`,
      attempt: 1,
      mode: "run",
      provider: "simulated",
      model: "simulated",
    }),
  ];
  for (let seq = 2; seq < 200; seq++) {
    const text = seq % 5 === 0 ? hostile : `step ${seq} `;
    events.push(
      seq % 3 === 0
        ? runEvent("run-a", seq, "tool_call_started", {
          tool_call_id: `t${seq}`,
          tool_name: seq % 2 ? "Bash" : `Edit${hostile}`,
          tool_input: { command: `ls ${text}` },
        })
        : runEvent("run-a", seq, "message_streamed", {
          delta: text,
          kind: seq % 4 === 0 ? "thinking" : "text",
        }),
    );
  }
  return events;
}

/** Batches as a follower delivers them: parsed from their stored lines. */
async function* batches(
  lines: string[],
): AsyncGenerator<{ line: string; event: RunEvent }[]> {
  for (let at = 0; at < lines.length; at += 50) {
    yield lines.slice(at, at + 50).map((line) => ({
      line,
      event: JSON.parse(line) as RunEvent,
    }));
  }
}

/** Today's output: a terminal sink, one write per event. */
async function perEvent(events: RunEvent[], color: boolean): Promise<string> {
  let out = "";
  const renderer = createRenderer({ ...DEFAULT_VIEW });
  const sink = terminalSink((text) => {
    out += text;
    return Promise.resolve();
  }, { color });
  for (const event of events) await sink.event(event, renderer.render(event));
  await sink.text(renderer.finish());
  return out;
}

Deno.test("renderEventBatches() writes the bytes a terminal sink writes, one write per batch", async () => {
  const events = stream();
  for (const color of [false, true]) {
    const lines = events.map((event) => JSON.stringify(event));
    const writes: string[] = [];
    await renderEventBatches(
      batches(lines),
      createRenderer({ ...DEFAULT_VIEW }),
      (
        text,
      ) => {
        writes.push(text);
        return Promise.resolve();
      },
      { color },
    );
    assert.equal(writes.join(""), await perEvent(events, color));
    // Four batches and the closing text.
    assert.ok(writes.length <= 5, `${writes.length} writes`);
  }
});

Deno.test("renderEventBatches() skips the closing text once aborted", async () => {
  const abort = new AbortController();
  abort.abort();
  const writes: string[] = [];
  await renderEventBatches(
    (async function* (): AsyncGenerator<{ event: RunEvent }[]> {
      yield [{
        event: runEvent("run-a", 1, "message_streamed", {
          delta: "hi",
          kind: "text",
        }),
      }];
    })(),
    createRenderer({ ...DEFAULT_VIEW }),
    (text) => (writes.push(text), Promise.resolve()),
    { color: false, signal: abort.signal },
  );
  // The open line stays open: no closing newline.
  assert.equal(writes.join(""), ">> hi");
});

Deno.test("vouchParsed() vouches only for JSON text with nothing that can decode to a control", () => {
  for (
    const json of [
      '{"a":"\\u001b[31m"}',
      '{"a":"\\r"}',
      '{"a":"\\b"}',
      '{"a":"\\f"}',
      '{"a":"\u009b2J"}',
      '{"a":"\u007f"}',
      '{"a\\u0007":1}',
    ]
  ) {
    assert.equal(vouchParsed(JSON.parse(json), json), false, json);
  }
  const json = '{"a":"tab\\tnewline\\n naïve ✓","b":["\\"quoted\\\\"]}';
  assert.equal(vouchParsed(JSON.parse(json), json), true);
  vouchParsed(null);
});
