import assert from "node:assert/strict";
import {
  selectBytes,
  type SelectState,
  selectText,
} from "../../../lib/control/_event_text.ts";
import { runEvent } from "../../_helpers/plane.ts";

const line = (seq: number, type = "tool_call_started", data = {}): string =>
  JSON.stringify(runEvent("run-a", seq, type as "tool_call_started", data));

const encoder = new TextEncoder();
const CHUNK = 120 * 1024;

/**
 * What a replay wrote before blocks were passed through: the text path,
 * decoding at most ~120 KiB of whole lines at a time and encoding what it
 * delivers (the bytes of `control events --json`).
 */
function reference(bytes: Uint8Array, minSeq: number): [Uint8Array, boolean] {
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

function assertSame(bytes: Uint8Array, minSeq = 1): Uint8Array {
  const state: SelectState = { lastSeq: 0, minSeq };
  const got = selectBytes(bytes, state);
  const [want, finished] = reference(bytes, minSeq);
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
  assert.equal(assertSame(ascii), ascii);
  // Valid UTF-8 reads back the same: passed through too.
  const utf8 = encoder.encode(lines(1, 3000, { text: "naïve — ✓ 🎉" }));
  assert.ok(utf8.length > 2 * CHUNK);
  assert.equal(assertSame(utf8), utf8);
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
    assertSame(bytes);
    assertSame(bytes, 4);
  }
  // A start past the first lines drops them: the rest is the text path's.
  assertSame(encoder.encode(lines(1, 3000)), 1200);
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
    assertSame(encoder.encode(text));
    assertSame(encoder.encode(text), Math.floor(random() * 40));
  }
});
