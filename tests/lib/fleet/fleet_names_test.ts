import assert from "node:assert/strict";
import {
  contractKey,
  eventsSubject,
  fleetAddress,
  fleetTargetParts,
  matchesTarget,
  nodeName,
  parseRunKey,
  rootName,
  runName,
  sanitizeName,
} from "../../../lib/fleet/fleet_names.ts";
import { UsageError } from "../../../lib/shared/errors.ts";

Deno.test("names are one subject token each: anything but [A-Za-z0-9_-] becomes _", () => {
  assert.equal(sanitizeName("build.box-7 (eu)"), "build_box-7__eu_");
  assert.equal(sanitizeName(""), "_");
  assert.equal(sanitizeName("x".repeat(100)).length, 64);
  assert.equal(nodeName(" m1 "), "m1");
  assert.match(nodeName(), /^[A-Za-z0-9_-]+$/);
});

Deno.test("a root is its workspace id, else r- and 12 hex digits of a SHA-256 of its real path", async () => {
  assert.equal(await rootName("/srv/pr", "ops.packet"), "ops_packet");
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode("/srv/pr/.prompt_runner"),
    ),
  );
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(
    await rootName("/srv/pr/.prompt_runner", null),
    `r-${hex.slice(0, 12)}`,
  );
});

Deno.test("a run's key, subjects and address; a key is read back, a run id with dots included", () => {
  const run = runName("m1", "r-0123456789ab", "2026.12.04-x");
  assert.equal(run.key, "m1.r-0123456789ab.2026.12.04-x");
  assert.equal(eventsSubject(run.key), "pr.ev.m1.r-0123456789ab.2026.12.04-x");
  assert.equal(contractKey(run.key, "01"), `${run.key}.01`);
  assert.equal(fleetAddress(run), "fleet:m1/r-0123456789ab/2026.12.04-x");
  assert.deepEqual(parseRunKey(run.key), run);
  assert.equal(parseRunKey("m1.only"), null);
  assert.equal(parseRunKey(".r.x"), null);
});

Deno.test("a fleet TARGET names a run by its address or a suffix of it; anything else is a usage error", () => {
  const run = runName("m1", "r-0123456789ab", "run-a");
  for (
    const target of [
      "fleet:run-a",
      "fleet:r-0123456789ab/run-a",
      "fleet:m1/r-0123456789ab/run-a",
    ]
  ) {
    assert.ok(matchesTarget(run, fleetTargetParts(target)), target);
  }
  assert.ok(
    !matchesTarget(run, fleetTargetParts("fleet:m2/r-0123456789ab/run-a")),
  );
  assert.ok(!matchesTarget(run, fleetTargetParts("fleet:run")));
  for (const bad of ["fleet:", "fleet:a/b/c/d", "fleet:a//b", "fleet:a b"]) {
    assert.throws(() => fleetTargetParts(bad), UsageError, bad);
  }
});
