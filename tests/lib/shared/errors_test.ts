import assert from "node:assert/strict";
import { errorText, StateError } from "../../../lib/shared/errors.ts";

Deno.test("errorText: an error's message, without its name or stack", () => {
  assert.equal(errorText(new Error("disk full")), "disk full");
  assert.equal(
    errorText(new StateError("Run is not running", { code: "NOT_RUNNING" })),
    "Run is not running",
  );
  assert.equal(
    errorText(new Deno.errors.NotFound("no such file")),
    "no such file",
  );
});

Deno.test("errorText: anything else thrown reads as its string", () => {
  assert.equal(errorText("no such run"), "no such run");
  assert.equal(errorText(42), "42");
  assert.equal(errorText(undefined), "undefined");
  assert.equal(errorText({ toString: () => "an object" }), "an object");
});
