import assert from "node:assert/strict";
import { paint, terminalSafe } from "../../../lib/render/ansi.ts";

// A BEL in front takes the full scan (it is removed on its own, and the
// scan goes on where it would have started): the reference for the quick
// path taken by text whose only escapes are styling.
const full = (text: string, style: boolean): string =>
  terminalSafe("\x07" + text, { style });

Deno.test("terminalSafe() gives styled text what the full scan gives, with and without style", () => {
  const styled = `${paint("ok", "green")} ${paint("t+Bash", "bold")} ls\n`;
  assert.equal(terminalSafe(styled), "ok t+Bash ls\n");
  assert.equal(terminalSafe(styled, { style: true }), styled);
  let seed = 3;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const parts = [
    "\x1b[",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b[1;2m",
    "\x1b]0;",
    "\x1b",
    "\x9b",
    "\x07",
    "\x1b\\",
    "m",
    "[",
    "3",
    ";",
    "é",
    "a",
    "\n",
    "\t",
    "\x85",
  ];
  for (let round = 0; round < 5000; round++) {
    let text = "";
    const n = Math.floor(random() * 12);
    for (let i = 0; i < n; i++) {
      text += parts[Math.floor(random() * parts.length)];
    }
    for (const style of [false, true]) {
      assert.equal(
        terminalSafe(text, { style }),
        full(text, style),
        JSON.stringify(text),
      );
    }
  }
});
