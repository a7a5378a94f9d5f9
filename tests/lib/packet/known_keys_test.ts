import assert from "node:assert/strict";
import {
  editDistance,
  nearestKey,
  refuseUnknownKeys,
} from "../../../lib/packet/known_keys.ts";
import { UsageError } from "../../../lib/shared/errors.ts";

Deno.test("editDistance() counts insertions, deletions, substitutions and swapped neighbours as one each", () => {
  assert.equal(editDistance("timeout_ms", "timeout_ms"), 0);
  assert.equal(editDistance("timout_ms", "timeout_ms"), 1);
  assert.equal(editDistance("recoveryy", "recovery"), 1);
  assert.equal(editDistance("recovary", "recovery"), 1);
  assert.equal(editDistance("reocvery", "recovery"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("kitten", "sitting"), 3);
});

Deno.test("nearestKey() picks the closest candidate by its last segment, ignoring case and - for _", () => {
  const keys = ["recovery.max_steers", "recovery.retry", "agent.sandbox"];
  assert.equal(nearestKey("max_steer", keys), "recovery.max_steers");
  assert.equal(nearestKey("Max-Steers", keys), "recovery.max_steers");
  assert.equal(nearestKey("sandbx", keys), "agent.sandbox");
  assert.equal(nearestKey("colour", keys), null);
  // A short key is not a typo of a longer one it shares a letter with.
  assert.equal(nearestKey("x", ["id", "name"]), null);
});

Deno.test("refuseUnknownKeys() passes known keys and names the first unknown one with its dotted path", () => {
  refuseUnknownKeys({ path: "a", repo: "b" }, ["path", "repo"], "/p/x.md", {
    at: "verify.files_exist[0]",
  });
  assert.throws(
    () =>
      refuseUnknownKeys({ path: "a", rpo: "b" }, ["path", "repo"], "/p/x.md", {
        at: "verify.files_exist[0]",
      }),
    (error: unknown) =>
      error instanceof UsageError && error.exitCode === 2 &&
      error.code === "INVALID_PACKET" &&
      error.message ===
        'Invalid packet file "/p/x.md": unknown key "verify.files_exist[0].rpo"' &&
      error.hint ===
        'Did you mean "verify.files_exist[0].repo"? Known keys of verify.files_exist[0]: path, repo',
  );
});

Deno.test("refuseUnknownKeys() suggests a key of another block when none of its own is near", () => {
  assert.throws(
    () =>
      refuseUnknownKeys({ max_steer: 5 }, ["name", "recovery"], "/p/m.md", {
        elsewhere: ["recovery.max_steers"],
      }),
    (error: unknown) =>
      error instanceof UsageError &&
      error.message ===
        'Invalid packet file "/p/m.md": unknown key "max_steer"' &&
      error.hint ===
        'Did you mean "recovery.max_steers"? Known keys: name, recovery',
  );
});

Deno.test("refuseUnknownKeys() quotes a hostile key as JSON, control characters escaped", () => {
  assert.throws(
    () => refuseUnknownKeys({ "\x1b[2Jx": 1 }, ["name"], "/p/m.md"),
    (error: unknown) =>
      error instanceof UsageError && !error.message.includes("\x1b") &&
      error.message.endsWith('unknown key "\\u001b[2Jx"'),
  );
});
