import assert from "node:assert/strict";
import {
  decideRequest,
  MAX_NESTING,
  type RequestRunState,
} from "../../../lib/control/decide_request.ts";

const NAME = "20261130T025200123Z-k3j9x0a1bq.json";

function state(overrides: Partial<RequestRunState> = {}): RequestRunState {
  return {
    run_id: "r1",
    promptInFlight: "01",
    delivered: 0,
    pending: 0,
    max_steers: 3,
    ...overrides,
  };
}

function request(
  value: Record<string, unknown>,
): { kind: "json"; value: Record<string, unknown> } {
  return {
    kind: "json" as const,
    value: { v: 1, run_id: "r1", author: "ann", ...value },
  };
}

Deno.test("decideRequest() applies a valid set_view with its parsed settings", () => {
  const verdict = decideRequest(
    NAME,
    request({ command: "set_view", params: { thinking: "hide" } }),
    state(),
  );
  assert.equal(verdict.outcome, "applied");
  assert.equal(verdict.reason, null);
  assert.deepEqual(verdict.apply, {
    command: "set_view",
    view: { thinking: "hide" },
    request_id: "20261130T025200123Z-k3j9x0a1bq",
    author: "ann",
  });
});

Deno.test("decideRequest() rejects a bad view value naming the allowed values", () => {
  const verdict = decideRequest(
    NAME,
    request({ command: "set_view", params: { tool_output: "everything" } }),
    state(),
  );
  assert.equal(verdict.outcome, "rejected");
  assert.match(String(verdict.reason), /full/);
  assert.equal(verdict.apply, null);
});

Deno.test("decideRequest() accepts a steer for the running prompt with its text trimmed", () => {
  const verdict = decideRequest(
    NAME,
    request({ command: "steer", params: { text: "  mind the gap " } }),
    state(),
  );
  assert.equal(verdict.outcome, "accepted");
  assert.deepEqual(verdict.params, { text: "mind the gap" });
  assert.equal(verdict.apply?.command, "steer");
  assert.equal(verdict.prompt_id, "01");
});

Deno.test("decideRequest() counts pending and delivered steers against the budget", () => {
  const steer = request({ command: "steer", params: { text: "go" } });
  assert.equal(
    decideRequest(NAME, steer, state({ delivered: 1, pending: 1 })).outcome,
    "accepted",
  );
  const spent = decideRequest(NAME, steer, state({ delivered: 2, pending: 1 }));
  assert.equal(spent.outcome, "rejected");
  assert.match(String(spent.reason), /budget spent: 3\/3/);
  // The refusal tells a person: the runner raises attention for it.
  assert.deepEqual(spent.apply, {
    command: "attention",
    reason: "steer_budget_exhausted",
    prompt_id: "01",
    detail: spent.reason,
    request_id: spent.apply?.request_id,
  });
});

Deno.test("decideRequest() rejects a steer with no prompt running, or for another prompt", () => {
  const steer = request({ command: "steer", params: { text: "go" } });
  assert.match(
    String(decideRequest(NAME, steer, state({ promptInFlight: null })).reason),
    /no prompt is running/,
  );
  const other = request({
    command: "steer",
    params: { text: "go" },
    prompt_id: "02",
  });
  assert.match(
    String(decideRequest(NAME, other, state()).reason),
    /for prompt 02, but prompt 01 is running/,
  );
});

Deno.test("decideRequest() rejects another run's request, a missing run_id, and unknown commands", () => {
  assert.match(
    String(
      decideRequest(
        NAME,
        request({ command: "set_view", run_id: "r2" }),
        state(),
      )
        .reason,
    ),
    /targets run r2, but this is run r1/,
  );
  assert.match(
    String(
      decideRequest(NAME, request({ command: "steer", run_id: 7 }), state())
        .reason,
    ),
    /names no run_id/,
  );
  const unknown = decideRequest(NAME, request({ command: "rm" }), state());
  assert.equal(unknown.command, "rm");
  assert.match(String(unknown.reason), /unknown command "rm"/);
});

Deno.test("decideRequest() rejects what is not a request object: unreadable, non-objects, too deep", () => {
  const unreadable = decideRequest(
    NAME,
    { kind: "unreadable", reason: "not JSON: x", command: "unparseable" },
    state(),
  );
  assert.equal(unreadable.command, "unparseable");
  assert.deepEqual(unreadable.params, { file: NAME });
  assert.match(
    String(decideRequest(NAME, { kind: "json", value: [1] }, state()).reason),
    /not a JSON object \(an array\)/,
  );
  let deep: unknown = 1;
  for (let i = 0; i <= MAX_NESTING; i++) deep = [deep];
  assert.match(
    String(decideRequest(NAME, { kind: "json", value: deep }, state()).reason),
    /too deeply nested/,
  );
  assert.match(
    String(
      decideRequest(NAME, request({ command: "steer", params: [] }), state())
        .reason,
    ),
    /params must be a JSON object/,
  );
});
