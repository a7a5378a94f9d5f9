import assert from "node:assert/strict";
import {
  DEFAULT_RECOVERY,
  parseRecovery,
  type RecoveryConfig,
} from "../../../lib/packet/recovery.ts";
import { UsageError } from "../../../lib/shared/errors.ts";

const FILE = "/packet/prompt_runner_packet.md";

/** Asserts parseRecovery() refuses `raw` and returns the message. */
function refused(raw: unknown): string {
  try {
    parseRecovery(raw, DEFAULT_RECOVERY, FILE);
  } catch (error) {
    assert.ok(error instanceof UsageError, `not a UsageError: ${error}`);
    assert.equal(error.exitCode, 2);
    assert.equal(error.code, "INVALID_PACKET");
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(raw)} to be refused`);
}

Deno.test("DEFAULT_RECOVERY holds the documented defaults", () => {
  assert.deepEqual(DEFAULT_RECOVERY, {
    max_steers: 3,
    resume_attempts: 2,
    retry: {
      max_attempts: 3,
      base_delay_ms: 1000,
      max_delay_ms: 30_000,
      jitter: true,
      class_attempts: {},
    },
    repair: { enabled: true, max_attempts: 2 },
  });
});

Deno.test("parseRecovery() returns the base when the block is absent or null", () => {
  assert.deepEqual(parseRecovery(undefined, DEFAULT_RECOVERY, FILE), {
    ...DEFAULT_RECOVERY,
  });
  assert.deepEqual(parseRecovery(null, DEFAULT_RECOVERY, FILE), {
    ...DEFAULT_RECOVERY,
  });
  assert.deepEqual(parseRecovery({}, DEFAULT_RECOVERY, FILE), {
    ...DEFAULT_RECOVERY,
  });
});

Deno.test("parseRecovery() returns a copy the caller can change without touching the base", () => {
  const base = parseRecovery(undefined, DEFAULT_RECOVERY, FILE);
  const result = parseRecovery(undefined, base, FILE);
  result.retry.max_attempts = 99;
  result.retry.class_attempts.provider_capacity = 7;
  result.repair.enabled = false;
  assert.equal(base.retry.max_attempts, 3);
  assert.deepEqual(base.retry.class_attempts, {});
  assert.equal(base.repair.enabled, true);
  assert.equal(DEFAULT_RECOVERY.retry.max_attempts, 3);
});

Deno.test("parseRecovery() overrides only the keys it is given", () => {
  const result = parseRecovery(
    {
      max_steers: 5,
      retry: { base_delay_ms: 0, jitter: false },
      repair: { max_attempts: 0 },
    },
    DEFAULT_RECOVERY,
    FILE,
  );
  assert.deepEqual(result, {
    max_steers: 5,
    resume_attempts: 2,
    retry: {
      max_attempts: 3,
      base_delay_ms: 0,
      max_delay_ms: 30_000,
      jitter: false,
      class_attempts: {},
    },
    repair: { enabled: true, max_attempts: 0 },
  });
});

Deno.test("parseRecovery() merges a prompt's block over the packet's settings", () => {
  const packet = parseRecovery(
    { retry: { max_attempts: 1, class_attempts: { provider_capacity: 4 } } },
    DEFAULT_RECOVERY,
    FILE,
  );
  const prompt = parseRecovery(
    {
      resume_attempts: 0,
      retry: { class_attempts: { rate_limit: 2 } },
      repair: { enabled: false },
    },
    packet,
    "/packet/prompts/01_a.prompt.md",
  );
  const expected: RecoveryConfig = {
    max_steers: 3,
    resume_attempts: 0,
    retry: {
      max_attempts: 1,
      base_delay_ms: 1000,
      max_delay_ms: 30_000,
      jitter: true,
      class_attempts: { provider_capacity: 4, rate_limit: 2 },
    },
    repair: { enabled: false, max_attempts: 2 },
  };
  assert.deepEqual(prompt, expected);
  assert.deepEqual(packet.retry.class_attempts, { provider_capacity: 4 });
});

Deno.test("parseRecovery() accepts a count written as a string of digits", () => {
  const result = parseRecovery(
    { max_steers: " 4 ", retry: { max_delay_ms: "500" } },
    DEFAULT_RECOVERY,
    FILE,
  );
  assert.equal(result.max_steers, 4);
  assert.equal(result.retry.max_delay_ms, 500);
});

Deno.test("parseRecovery() accepts zero for every count", () => {
  const result = parseRecovery(
    {
      max_steers: 0,
      resume_attempts: 0,
      retry: { max_attempts: 0, base_delay_ms: 0, max_delay_ms: 0 },
      repair: { max_attempts: 0 },
    },
    DEFAULT_RECOVERY,
    FILE,
  );
  assert.equal(result.max_steers, 0);
  assert.equal(result.retry.max_attempts, 0);
  assert.equal(result.repair.max_attempts, 0);
});

Deno.test("parseRecovery() refuses a negative, fractional or non-numeric count and names the key", () => {
  assert.equal(
    refused({ max_steers: -1 }),
    `Invalid recovery setting recovery.max_steers in "${FILE}": expected a whole number >= 0, found -1`,
  );
  assert.match(
    refused({ resume_attempts: 1.5 }),
    /^Invalid recovery setting recovery\.resume_attempts in .*found 1\.5$/,
  );
  assert.match(
    refused({ retry: { max_attempts: "three" } }),
    /recovery\.retry\.max_attempts .*found "three"$/,
  );
  assert.match(
    refused({ retry: { base_delay_ms: "-5" } }),
    /recovery\.retry\.base_delay_ms /,
  );
  assert.match(
    refused({ retry: { max_delay_ms: true } }),
    /recovery\.retry\.max_delay_ms .*found true$/,
  );
  assert.match(
    refused({ repair: { max_attempts: null } }),
    /recovery\.repair\.max_attempts .*found null$/,
  );
  assert.match(
    refused({ retry: { class_attempts: { provider_capacity: -2 } } }),
    /recovery\.retry\.class_attempts\.provider_capacity /,
  );
});

Deno.test("parseRecovery() refuses a flag that is not true or false and names the key", () => {
  assert.equal(
    refused({ retry: { jitter: "yes" } }),
    `Invalid recovery setting recovery.retry.jitter in "${FILE}": expected true or false, found "yes"`,
  );
  assert.match(
    refused({ repair: { enabled: 1 } }),
    /recovery\.repair\.enabled .*expected true or false, found 1$/,
  );
});

Deno.test("parseRecovery() refuses an unknown key at every level, naming it and the nearest known key", () => {
  const unknown = (raw: unknown): [string, string] => {
    try {
      parseRecovery(raw, DEFAULT_RECOVERY, FILE);
    } catch (error) {
      assert.ok(error instanceof UsageError, `not a UsageError: ${error}`);
      assert.equal(error.exitCode, 2);
      assert.equal(error.code, "INVALID_PACKET");
      return [error.message, error.hint ?? ""];
    }
    assert.fail(`expected ${JSON.stringify(raw)} to be refused`);
  };
  assert.deepEqual(unknown({ max_steer: 3 }), [
    `Invalid packet file "${FILE}": unknown key "recovery.max_steer"`,
    'Did you mean "recovery.max_steers"? Known keys of recovery: max_steers, resume_attempts, retry, repair',
  ]);
  assert.deepEqual(unknown({ retry: { attempts: 3 } }), [
    `Invalid packet file "${FILE}": unknown key "recovery.retry.attempts"`,
    "Known keys of recovery.retry: max_attempts, base_delay_ms, max_delay_ms, jitter, class_attempts",
  ]);
  assert.deepEqual(unknown({ repair: { on: true } }), [
    `Invalid packet file "${FILE}": unknown key "recovery.repair.on"`,
    "Known keys of recovery.repair: enabled, max_attempts",
  ]);
});

Deno.test("parseRecovery() refuses a block or sub-block that is not a mapping", () => {
  assert.match(
    refused(3),
    /recovery setting recovery in .*expected a mapping$/,
  );
  assert.match(refused(["max_steers"]), /expected a mapping$/);
  assert.match(
    refused({ retry: 3 }),
    /recovery setting recovery\.retry in .*expected a mapping$/,
  );
  assert.match(
    refused({ repair: true }),
    /recovery setting recovery\.repair in .*expected a mapping$/,
  );
  assert.match(
    refused({ retry: { class_attempts: [1] } }),
    /recovery\.retry\.class_attempts in .*expected a mapping$/,
  );
});
