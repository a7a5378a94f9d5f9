import assert from "node:assert/strict";
import { UsageError } from "../../../lib/shared/errors.ts";
import {
  checkPromptId,
  isPromptIdWord,
  normalizePromptId,
} from "../../../lib/shared/prompt_id.ts";

Deno.test("normalizePromptId: a long run of digits stays those digits, never a number in exponent form", () => {
  assert.equal(
    normalizePromptId("1234567890123456789012345"),
    "1234567890123456789012345",
  );
  assert.equal(normalizePromptId("0000000000000000000000007"), "07");
  assert.equal(normalizePromptId("000"), "00");
});

Deno.test("checkPromptId: digits, trimmed and written with two at least; anything else is a usage error naming the value", () => {
  assert.equal(checkPromptId("1"), "01");
  assert.equal(checkPromptId(" 012 "), "12");
  for (const value of ["", "  ", "1a", "-1", "1.5", "../01", 1, null]) {
    assert.throws(
      () => checkPromptId(value),
      (error: unknown) =>
        error instanceof UsageError && error.code === "INVALID_PROMPT_ID" &&
        error.message ===
          `Invalid prompt id ${
            JSON.stringify(value)
          }: expected digits such as "01"`,
      String(value),
    );
  }
});

Deno.test("isPromptIdWord: a command-line word of digits is a prompt id, a path or workspace id is not", () => {
  assert.equal(isPromptIdWord("01"), true);
  assert.equal(isPromptIdWord("7"), true);
  for (const word of ["./01", "01_intro", "ws-1", "my-packet", ""]) {
    assert.equal(isPromptIdWord(word), false, word);
  }
});
