import assert from "node:assert/strict";
import type { ProviderEvent } from "../../../lib/shared/events.ts";
import { UsageTally } from "../../../lib/status/usage_tally.ts";

Deno.test("UsageTally sums the running totals of each session of an attempt, and the cost only once one was reported", () => {
  const tally = new UsageTally();
  assert.deepEqual(tally.usage, {
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
  });
  tally.observe({ type: "run_started", data: {} });
  tally.observe({
    type: "token_usage_updated",
    data: { input_tokens: 100, output_tokens: 10 },
  } as ProviderEvent);
  tally.observe({
    type: "token_usage_updated",
    data: { input_tokens: 250, output_tokens: 30, cost_usd: 0.25 },
  } as ProviderEvent);
  // A resumed session counts from zero again.
  tally.observe({ type: "run_started", data: {} });
  tally.observe({
    type: "token_usage_updated",
    data: { input_tokens: 40, output_tokens: "x", cost_usd: 0.05 },
    // A hostile line: a count that is not a number.
  } as unknown as ProviderEvent);
  assert.deepEqual(tally.usage, {
    input_tokens: 290,
    output_tokens: 30,
    cost_usd: 0.3,
  });
});
