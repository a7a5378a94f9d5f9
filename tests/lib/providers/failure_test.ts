import assert from "node:assert/strict";
import { classifyFailure } from "../../../lib/providers/failure.ts";

Deno.test("classifyFailure() maps error kinds to classes and recovery flags", () => {
  const cases: [string, string, boolean, boolean][] = [
    ["provider_capacity", "provider_capacity", true, false],
    ["rate_limit", "provider_rate_limit", true, false],
    ["auth_error", "provider_auth_claim", true, false],
    ["config_invalid", "provider_config_claim", true, false],
    ["runtime_error", "provider_runtime_claim", true, false],
    ["protocol_error", "protocol_error", true, true],
    ["transport_error", "transport_disconnect", true, true],
    ["transport_exit", "transport_disconnect", true, true],
    ["transport_disconnect", "transport_disconnect", true, true],
    ["transport_timeout", "transport_timeout", true, true],
    ["user_cancelled", "user_cancelled", false, false],
    ["approval_denied", "approval_denied", false, false],
    ["guardrail_blocked", "guardrail_blocked", false, false],
  ];
  for (const [kind, expected, retryable, resumeable] of cases) {
    const failure = classifyFailure({ kind, message: "x" });
    assert.equal(failure.failure_class, expected, kind);
    assert.equal(failure.retryable, retryable, kind);
    assert.equal(failure.resumeable, resumeable, kind);
  }
});

Deno.test("classifyFailure() reads the message when there is no known kind", () => {
  assert.equal(
    classifyFailure({ message: "429 Too Many Requests" }).failure_class,
    "provider_rate_limit",
  );
  assert.equal(
    classifyFailure({ message: "Server overloaded" }).failure_class,
    "provider_capacity",
  );
  assert.equal(
    classifyFailure({ message: "Invalid API key" }).failure_class,
    "provider_auth_claim",
  );
  assert.equal(
    classifyFailure({ message: "something odd" }).failure_class,
    "provider_runtime_claim",
  );
});

Deno.test("classifyFailure() lets an explicit recovery map override the defaults", () => {
  const failure = classifyFailure({
    kind: "provider_capacity",
    message: "x",
    recovery: {
      class: "Custom-Class",
      retryable: false,
      local_deterministic: true,
      suggested_delay_ms: 5,
    },
  });
  assert.equal(failure.failure_class, "custom_class");
  assert.equal(failure.retryable, false);
  assert.equal(failure.local_deterministic, true);
  assert.equal(failure.suggested_delay_ms, 5);
});
