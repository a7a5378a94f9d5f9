import assert from "node:assert/strict";
import {
  paint,
  stripAnsi,
  terminalSafe,
  terminalSafeData,
} from "../../../lib/render/ansi.ts";

const CASES: [string, string, string][] = [
  ["BEL", "a\x07b", "ab"],
  ["OSC ended by BEL (window title)", "a\x1b]0;title\x07b", "ab"],
  [
    "OSC ended by ST (hyperlink)",
    "a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b",
    "alinkb",
  ],
  ["SGR", "a\x1b[31mred\x1b[0mb", "aredb"],
  ["CSI that clears the screen", "a\x1b[2J\x1b[Hb", "ab"],
  ["private CSI", "a\x1b[?1049hb", "ab"],
  ["DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"],
  ["charset ESC", "a\x1b(Bb", "ab"],
  ["8-bit CSI", "a\x9b2Jb", "ab"],
  ["8-bit OSC ended by 8-bit ST", "a\x9d0;t\x9cb", "ab"],
  ["lone C1", "a\x85\x8eb", "ab"],
  ["DEL", "a\x7fb", "ab"],
  ["carriage return and backspace", "abc\rx\by", "abcxy"],
  ["NUL and vertical tab", "a\x00\x0bb", "ab"],
  ["an unfinished OSC loses its ESC", "a\x1b]0;never ended", "a0;never ended"],
  ["an unfinished CSI loses its ESC", "a\x1b[3", "a3"],
  ["newline and tab", "a\n\tb", "a\n\tb"],
  ["text beyond Latin-1", "né → ✓ 日本 🙂", "né → ✓ 日本 🙂"],
];

for (const [what, input, expected] of CASES) {
  Deno.test(`terminalSafe() removes ${what} and keeps the text around it`, () => {
    assert.equal(terminalSafe(input), expected);
    assert.equal(stripAnsi(input), expected);
  });
}

Deno.test("terminalSafe() with style keeps SGR styling and removes every other sequence and control", () => {
  const styled = paint("ok", "green") + "\x1b]0;t\x07\x1b[2J\x07\x9b1m" +
    paint("no", "red");
  assert.equal(
    terminalSafe(styled, { style: true }),
    "\x1b[32mok\x1b[0m\x1b[31mno\x1b[0m",
  );
  assert.equal(terminalSafe(styled), "okno");
});

Deno.test("terminalSafe() returns clean text unchanged", () => {
  const text = "plain text\n\twith a tab";
  assert.equal(terminalSafe(text), text);
});

Deno.test("terminalSafeData() cleans every string and key of a copy and leaves the input alone", () => {
  const input = {
    author: "ada\x07",
    params: { "te\x1b[1mxt": ["\x1b]0;x\x07go", 3, null, true] },
  };
  const copy = structuredClone(input);
  assert.deepEqual(terminalSafeData(input), {
    author: "ada",
    params: { text: ["go", 3, null, true] },
  });
  assert.deepEqual(input, copy);
});

Deno.test("terminalSafeData() returns clean data itself, and copies only the branch that changes", () => {
  const clean = {
    type: "message",
    data: { text: "plain", list: ["a", 1, null] },
  };
  assert.equal(terminalSafeData(clean), clean);
  const dirty = { keep: { text: "plain" }, fix: ["ok", "bell\x07"] };
  const safe = terminalSafeData(dirty);
  assert.notEqual(safe, dirty);
  assert.equal(safe.keep, dirty.keep);
  assert.deepEqual(safe.fix, ["ok", "bell"]);
  assert.deepEqual(dirty.fix, ["ok", "bell\x07"]);
});
