import assert from "node:assert/strict";
import { isTransient, patiently } from "../../../lib/fleet/_patience.ts";
import { StateError } from "../../../lib/shared/errors.ts";

function named(name: string, message = "x"): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

Deno.test("isTransient: the NATS client's timeouts, no responders and a stream being made pass; refusals do not", () => {
  assert.ok(isTransient(named("TimeoutError", "timeout")));
  // nats-core 3.4 names its no-responders error "NoResponders".
  assert.ok(isTransient(named("NoResponders", "no responders: '$JS.API.X'")));
  assert.ok(isTransient(new Error("invalid stream")));
  assert.ok(isTransient({ code: 503, message: "" }));
  assert.ok(isTransient(new Error("JetStream system temporarily unavailable")));
  assert.ok(!isTransient(named("TimeoutError", "Permissions Violation")));
  assert.ok(!isTransient(new Error("Authorization Violation")));
  assert.ok(!isTransient(new Error("stream name already in use")));
  assert.ok(!isTransient(undefined));
});

Deno.test("patiently: tries again while it fails transiently, fails at once otherwise, and gives up as FLEET_NO_ANSWER with the URL masked", async () => {
  let calls = 0;
  const value = await patiently(async () => {
    calls++;
    if (calls < 3) throw named("NoResponders", "no responders");
    return await Promise.resolve("ok");
  }, { patienceMs: 5_000, shown: "nats://h:1" });
  assert.equal(value, "ok");
  assert.equal(calls, 3);

  calls = 0;
  await assert.rejects(
    patiently(() => {
      calls++;
      return Promise.reject(new Error("Permissions Violation for Publish"));
    }, { patienceMs: 5_000, shown: "nats://h:1" }),
    /Permissions Violation/,
  );
  assert.equal(calls, 1);

  await assert.rejects(
    patiently(
      () => Promise.reject(named("TimeoutError", "timeout at nats://u:pw@h:1")),
      { patienceMs: 200, shown: "nats://u:***@h:1", what: "reading X" },
    ),
    (error) => {
      assert.ok(error instanceof StateError);
      assert.equal(error.code, "FLEET_NO_ANSWER");
      assert.match(
        error.message,
        /^The fleet at nats:\/\/u:\*\*\*@h:1 did not answer \(reading X\)/,
      );
      assert.doesNotMatch(error.message, /pw/);
      return true;
    },
  );
});
