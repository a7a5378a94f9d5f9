import assert from "node:assert/strict";
import { isRecord } from "../../../lib/shared/is_record.ts";

Deno.test("isRecord: a JSON object is a record; null, arrays and scalars are not", () => {
  assert.equal(isRecord({}), true);
  assert.equal(isRecord(JSON.parse('{"a":[1]}')), true);
  assert.equal(isRecord(Object.create(null)), true);
  for (const value of [null, undefined, [], [{}], "{}", 1, true]) {
    assert.equal(isRecord(value), false, JSON.stringify(value) ?? "undefined");
  }
});
