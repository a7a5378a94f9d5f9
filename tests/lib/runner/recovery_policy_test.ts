import assert from "node:assert/strict";
import {
  DEFAULT_RECOVERY,
  type RecoveryConfig,
} from "../../../lib/packet/mod.ts";
import { classifyFailure } from "../../../lib/providers/failure.ts";
import {
  decideOutcome,
  type DecisionInput,
  retryDelay,
} from "../../../lib/runner/recovery_policy.ts";
import type { VerifyReport } from "../../../lib/verify/mod.ts";

const PASS: VerifyReport = {
  passed: true,
  failures: 0,
  faults: 0,
  items: [{
    clause: "files_exist",
    label: "a.md",
    status: "pass",
    reason: "exists",
  }],
};
const FAIL: VerifyReport = {
  passed: false,
  failures: 1,
  faults: 0,
  items: [{
    clause: "files_exist",
    label: "a.md",
    status: "fail",
    reason: "missing",
  }],
};
const FAULT: VerifyReport = {
  passed: false,
  failures: 0,
  faults: 1,
  items: [{
    clause: "commands",
    label: "x",
    status: "fault",
    reason: "not found",
  }],
};
const EMPTY: VerifyReport = { passed: true, failures: 0, faults: 0, items: [] };

function recovery(
  change: (r: RecoveryConfig) => void = () => {},
): RecoveryConfig {
  const config = structuredClone(DEFAULT_RECOVERY) as RecoveryConfig;
  config.retry.jitter = false;
  change(config);
  return config;
}

function decide(
  input: Partial<DecisionInput>,
): ReturnType<typeof decideOutcome> {
  return decideOutcome({
    failure: null,
    report: PASS,
    retries: 0,
    repairs: 0,
    recovery: recovery(),
    workspace_changed: false,
    ...input,
  });
}

Deno.test("decideOutcome() follows the decision table", () => {
  const capacity = classifyFailure({
    kind: "provider_capacity",
    message: "busy",
  });
  const denied = classifyFailure({ kind: "approval_denied", message: "no" });
  assert.equal(decide({}).kind, "complete");
  assert.equal(decide({ report: FAIL }).kind, "repair");
  assert.equal(
    decide({ report: FAIL, repairs: 2 }).kind,
    "verification_failed",
  );
  const override = decide({ failure: capacity, report: PASS });
  assert.deepEqual(
    [override.kind, "override" in override && override.override],
    ["complete", true],
  );
  assert.equal(
    decide({ failure: denied, report: PASS }).kind,
    "provider_failed",
  );
  assert.equal(decide({ failure: capacity, report: FAIL }).kind, "retry");
  assert.equal(
    decide({ failure: capacity, report: FAIL, retries: 3 }).kind,
    "provider_failed",
  );
  assert.equal(
    decide({
      failure: capacity,
      report: FAIL,
      retries: 3,
      workspace_changed: true,
    }).kind,
    "repair",
  );
  assert.equal(decide({ report: FAULT }).kind, "verifier_fault");
  assert.equal(
    decide({ failure: capacity, report: FAULT }).kind,
    "verifier_fault",
  );
});

Deno.test("decideOutcome() does not treat an empty contract as evidence against a failed session", () => {
  const capacity = classifyFailure({
    kind: "provider_capacity",
    message: "busy",
  });
  assert.equal(decide({ report: EMPTY }).kind, "complete");
  assert.equal(decide({ failure: capacity, report: EMPTY }).kind, "retry");
});

Deno.test("decideOutcome() uses class_attempts over max_attempts for the retry budget", () => {
  const capacity = classifyFailure({
    kind: "provider_capacity",
    message: "busy",
  });
  const config = recovery((r) => {
    r.retry.max_attempts = 5;
    r.retry.class_attempts = { provider_capacity: 1 };
  });
  assert.equal(
    decide({ failure: capacity, report: FAIL, retries: 1, recovery: config })
      .kind,
    "provider_failed",
  );
  const other = classifyFailure({ kind: "protocol_error", message: "x" });
  assert.equal(
    decide({ failure: other, report: FAIL, retries: 4, recovery: config }).kind,
    "retry",
  );
});

Deno.test("retryDelay() doubles from the base, respects the cap, and jitters within [d/2, d]", () => {
  const runtime = classifyFailure({ kind: "runtime_error", message: "x" });
  const config = recovery((r) => {
    r.retry.base_delay_ms = 100;
    r.retry.max_delay_ms = 350;
  });
  assert.deepEqual([0, 1, 2, 3].map((n) => retryDelay(config, runtime, n)), [
    100,
    200,
    350,
    350,
  ]);
  const capacity = classifyFailure({ kind: "provider_capacity", message: "x" });
  assert.equal(retryDelay(recovery(), capacity, 0), 2000);
  const jittered = recovery((r) => {
    r.retry.base_delay_ms = 100;
    r.retry.jitter = true;
  });
  assert.equal(retryDelay(jittered, runtime, 0, () => 0), 50);
  assert.equal(retryDelay(jittered, runtime, 0, () => 0.999), 100);
  const none = recovery((r) => {
    r.retry.base_delay_ms = 0;
    r.retry.max_delay_ms = 0;
  });
  assert.equal(retryDelay(none, capacity, 0), 0);
});

Deno.test("decideOutcome() never retries or repairs an auth failure unless class_attempts names its class", () => {
  const auth = classifyFailure({
    kind: "provider_auth_claim",
    message: "401 Unauthorized",
  });
  const config = recovery((r) => {
    r.retry.max_attempts = 5;
  });
  const refused = decide({
    failure: auth,
    report: FAIL,
    recovery: config,
    workspace_changed: true,
  });
  assert.equal(refused.kind, "provider_failed");
  assert.match(
    String(refused.reason),
    /\(not retried: set retry\.class_attempts\.provider_auth_claim to allow it\)$/,
  );
  const asked = recovery((r) => {
    r.retry.class_attempts = { provider_auth_claim: 1 };
  });
  assert.equal(
    decide({ failure: auth, report: FAIL, recovery: asked }).kind,
    "retry",
  );
  assert.equal(
    decide({
      failure: auth,
      report: FAIL,
      retries: 1,
      recovery: asked,
      workspace_changed: true,
    }).kind,
    "repair",
  );
});
