import assert from "node:assert/strict";
import {
  parseEvent,
  selectBytes,
  selectLines,
  type SelectState,
  selectText,
} from "../../../lib/control/_event_text.ts";
import { runEvent } from "../../_helpers/plane.ts";

const line = (seq: number, type = "tool_call_started", data = {}): string =>
  JSON.stringify(runEvent("run-a", seq, type as "tool_call_started", data));

/** What selectLines delivers, as text: the reference the fast path must equal. */
function reference(text: string, minSeq: number): [string, boolean, number] {
  const state: SelectState = { lastSeq: 0, minSeq };
  const { lines, finished } = selectLines(text, state);
  return [lines.map((l) => l.line + "\n").join(""), finished, state.lastSeq];
}

function fast(text: string, minSeq: number): [string, boolean, number] {
  const state: SelectState = { lastSeq: 0, minSeq };
  const { text: out, finished } = selectText(text, state);
  return [out, finished, state.lastSeq];
}

function assertSame(text: string, minSeq = 1): void {
  assert.deepEqual(fast(text, minSeq), reference(text, minSeq), text);
}

Deno.test("selectText() passes canonical lines through unchanged, as selectLines() delivers them", () => {
  const text = [1, 2, 3].map((seq) => line(seq) + "\n").join("");
  assert.deepEqual(fast(text, 1), [text, false, 3]);
  assertSame(text);
});

Deno.test("selectText() skips lines that are not events exactly as the parser does", () => {
  const cases = [
    "not json at all",
    "",
    "{}",
    '{"seq":"4","type":"x"}',
    '{"seq":4.5,"type":"x"}',
    '{"seq":4}',
    "[1,2]",
    "null",
    line(4).slice(0, 60), // a torn line
    line(4).slice(0, -1), // torn just before the last brace
    line(4).replace('"data":{}', '"data":{},'),
    line(4) + ",",
    line(4).replace('"type"', '"type" '),
  ];
  for (const bad of cases) {
    assertSame(`${line(1)}\n${bad}\n${line(5)}\n`);
    assertSame(`${bad}\n`);
  }
});

Deno.test("selectText() reads lines the pattern does not cover with the parser: CRLF, spaces, other key orders, deep nesting, escapes", () => {
  const deep = { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } };
  const cases = [
    line(2) + "\r",
    " " + line(2),
    JSON.stringify({ type: "tool_call_started", seq: 2, v: 1 }),
    line(2, "tool_call_completed", deep),
    line(2, "message_received", { content: 'quote " and \\ and \u2028 é 🎉' }),
    line(2, "message_received", { content: "\u0001\u001f" }),
    '{"v":1,"seq":2,"seq":7,"type":"x"}',
    line(2).replace('"seq":2', '"seq":2e0'),
    line(2).replace('"seq":2', '"seq":-2'),
    line(2).replace('"seq":2', '"seq":02'),
    line(2).replace('"attempt":1', '"attempt":1.5e+3'),
    line(2, "x", { list: [1, [2, [3]], { k: [] }, "", true, false, null] }),
    line(2, "x", { bad: "tab\there" }).replace("\\t", "\t"),
    line(2, "x", { bad: "\\u12" }).replace("\\\\u12", "\\u12"),
  ];
  for (const other of cases) {
    assertSame(`${line(1)}\n${other}\n${line(8)}\n`);
  }
});

Deno.test("selectText() keeps only seqs above every one before and at least the start", () => {
  const text = [1, 2, 2, 5, 3, 6, 7].map((seq) => line(seq) + "\n").join("");
  assertSame(text);
  assertSame(text, 5);
  assertSame(text, 100);
  assert.deepEqual(
    fast(text, 5)[0],
    [5, 6, 7].map((s) => line(s) + "\n").join(""),
  );
});

Deno.test("selectText() stops after run_finished, and is not fooled by the words inside data", () => {
  const inData = line(2, "tool_call_completed", {
    nested: { type: "run_finished" },
  });
  const text = [
    line(1),
    inData,
    line(3),
    line(4, "run_finished", { status: "completed" }),
    line(5),
  ].map((l) => l + "\n").join("");
  assertSame(text);
  const [out, finished, last] = fast(text, 1);
  assert.equal(finished, true);
  assert.equal(last, 4);
  assert.ok(!out.includes('"seq":5'));
});

Deno.test("selectText() goes on after an interrupted run_finished and says whether the text ends with one", () => {
  const stop = line(3, "run_finished", { status: "interrupted" });
  const ended = [line(1), line(2), stop].map((l) => l + "\n").join("");
  assertSame(ended);
  const state: SelectState = { lastSeq: 0, minSeq: 1 };
  assert.equal(selectText(ended, state).finished, true);
  assert.equal(state.ended, "interrupted");
  const resumed = [line(1), stop, line(4, "run_resumed"), line(5)]
    .map((l) => l + "\n").join("");
  assertSame(resumed);
  const [out, finished, last] = fast(resumed, 1);
  assert.equal(finished, false);
  assert.equal(last, 5);
  assert.equal(out, resumed);
  // Continued in a later batch: the state carries the end until then.
  const carried: SelectState = { lastSeq: 0, minSeq: 1 };
  assert.equal(selectLines(ended, carried).finished, true);
  const more = selectLines(line(4) + "\n", carried);
  assert.deepEqual([more.lines.length, more.finished, carried.ended], [
    1,
    false,
    null,
  ]);
});

Deno.test("selectText() equals selectLines() on random streams with corruptions", () => {
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let round = 0; round < 200; round++) {
    const lines: string[] = [];
    let seq = 0;
    for (let n = 0; n < 30; n++) {
      const roll = random();
      seq += roll < 0.1 ? 0 : roll < 0.2 ? 3 : 1;
      let text = line(
        seq,
        random() < 0.03 ? "run_finished" : "message_streamed",
        {
          ...(random() < 0.5 ? { status: "interrupted" } : {}),
          delta: "x".repeat(Math.floor(random() * 20)),
          n: random() < 0.5 ? [1, { a: null }] : -1.5e-7,
        },
      );
      const damage = random();
      if (damage < 0.05) {
        text = text.slice(0, Math.floor(random() * text.length));
      } else if (damage < 0.08) text = text + "\r";
      else if (damage < 0.1) text = text.replace(":", ": ");
      lines.push(text);
    }
    const text = lines.join("\n") + "\n";
    assertSame(text, 1);
    assertSame(text, Math.floor(random() * 40));
  }
});

Deno.test("parseEvent() accepts an object with an integer seq and a string type, nothing else", () => {
  assert.equal(parseEvent(line(3))?.seq, 3);
  assert.equal(parseEvent('{"seq":1}'), null);
  assert.equal(parseEvent("garbage"), null);
});

const encoder = new TextEncoder();
const CHUNK = 120 * 1024;

/**
 * What a replay wrote before blocks were passed through: the text path,
 * decoding at most ~120 KiB of whole lines at a time and encoding what it
 * delivers (the bytes of `control events --json`).
 */
function textPath(bytes: Uint8Array, minSeq: number): [Uint8Array, boolean] {
  const state: SelectState = { lastSeq: 0, minSeq };
  let out = "";
  let finished = false;
  for (let at = 0; at < bytes.length;) {
    const limit = Math.min(at + CHUNK, bytes.length);
    let end = bytes.subarray(at, limit).lastIndexOf(0x0a) + at + 1;
    if (end === at) end = bytes.indexOf(0x0a, limit) + 1;
    const selected = selectText(
      new TextDecoder().decode(bytes.subarray(at, end)),
      state,
    );
    out += selected.text;
    finished = selected.finished;
    at = end;
    if (finished && state.ended !== "interrupted") break;
  }
  return [encoder.encode(out), finished];
}

function assertSameBytes(bytes: Uint8Array, minSeq = 1): Uint8Array {
  const state: SelectState = { lastSeq: 0, minSeq };
  const got = selectBytes(bytes, state);
  const [want, finished] = textPath(bytes, minSeq);
  assert.deepEqual(got.batch ?? new Uint8Array(), want);
  assert.equal(got.finished, finished);
  return got.batch!;
}

const lines = (from: number, to: number, data: object = { n: 1 }): string => {
  let text = "";
  for (let seq = from; seq <= to; seq++) text += line(seq, "x_y", data) + "\n";
  return text;
};

Deno.test("selectBytes() passes a block of verified lines through as the very bytes read", () => {
  const ascii = encoder.encode(lines(1, 2000));
  assert.equal(assertSameBytes(ascii), ascii);
  // Valid UTF-8 reads back the same: passed through too.
  const utf8 = encoder.encode(lines(1, 3000, { text: "naïve — ✓ 🎉" }));
  assert.ok(utf8.length > 2 * CHUNK);
  assert.equal(assertSameBytes(utf8), utf8);
});

Deno.test("selectBytes() gives today's bytes for blocks it cannot pass through", () => {
  const good = encoder.encode(lines(1, 5));
  const cat = (...parts: (string | Uint8Array)[]): Uint8Array => {
    const arrays = parts.map((p) =>
      typeof p === "string" ? encoder.encode(p) : p
    );
    const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
    let at = 0;
    for (const a of arrays) (out.set(a, at), at += a.length);
    return out;
  };
  const invalid = encoder.encode(line(6, "x_y", { text: "@@" }) + "\n");
  invalid.set([0xff, 0xc3], invalid.indexOf(0x40));
  const cases: Uint8Array[] = [
    cat(good, invalid, lines(7, 8)), // invalid UTF-8: replaced, as decoded
    cat(new Uint8Array([0xef, 0xbb, 0xbf]), good), // a leading BOM
    cat(good, "not json\n", lines(6, 7)), // a line that is no event
    cat(good, lines(3, 7)), // seqs going back
    cat(good, line(6).slice(0, 40) + "\n", lines(7, 7)), // a torn line
    cat(
      good,
      line(6, "run_finished", { status: "completed" }) + "\n",
      lines(7, 9),
    ),
    cat(
      good,
      line(6, "run_finished", { status: "interrupted" }) + "\n",
      lines(7, 9),
    ),
    cat(
      good,
      "\x1b]0;title\x07\n",
      line(6, "x_y", { t: "\u009b2J\x1b[31m" }) + "\n",
    ),
    cat(lines(1, 1500), "{}\n", lines(1501, 3000)), // past the first chunk
    cat(lines(1, 1500), line(1501, "run_finished") + "\n", lines(1502, 3000)),
  ];
  for (const bytes of cases) {
    assertSameBytes(bytes);
    assertSameBytes(bytes, 4);
  }
  // A start past the first lines drops them: the rest is the text path's.
  assertSameBytes(encoder.encode(lines(1, 3000)), 1200);
});

Deno.test("selectBytes() equals the text path on random streams with corruptions", () => {
  let seed = 11;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let round = 0; round < 100; round++) {
    let text = "";
    let seq = 0;
    for (let n = 0; n < 40; n++) {
      const roll = random();
      seq += roll < 0.1 ? 0 : roll < 0.2 ? 3 : 1;
      let one = line(seq, random() < 0.03 ? "run_finished" : "x_y", {
        ...(random() < 0.5 ? { status: "interrupted" } : {}),
        delta: random() < 0.2 ? "é\u0085\x1b[2J" : "x".repeat(n),
      });
      const damage = random();
      if (damage < 0.05) one = one.slice(0, Math.floor(random() * one.length));
      else if (damage < 0.08) one += "\r";
      text += one + "\n";
    }
    assertSameBytes(encoder.encode(text));
    assertSameBytes(encoder.encode(text), Math.floor(random() * 40));
  }
});
