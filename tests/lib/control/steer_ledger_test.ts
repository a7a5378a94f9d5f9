import assert from "node:assert/strict";
import {
  SteerLedger,
  withSteerLedger,
} from "../../../lib/control/steer_ledger.ts";
import type { SteerResult } from "../../../lib/shared/run_hooks.ts";

function result(prompt: string, delivered: boolean): SteerResult {
  return {
    command: {
      command: "steer",
      text: "t",
      prompt_id: prompt,
      request_id: "r",
      author: "a",
    },
    delivered,
    attempt: 1,
    provider: "simulated",
  };
}

Deno.test("SteerLedger counts per prompt and restores an earlier process's count", () => {
  const ledger = new SteerLedger();
  assert.equal(ledger.record("01"), 1);
  assert.equal(ledger.record("01"), 2);
  ledger.restore("02", 5);
  assert.equal(ledger.record("02"), 6);
  assert.equal(ledger.count("03"), 0);
});

Deno.test("withSteerLedger() counts only delivered steers and still calls the hooks' steerSettled", async () => {
  const seen: boolean[] = [];
  const hooks = withSteerLedger({
    steerSettled(r: SteerResult): Promise<void> {
      seen.push(r.delivered);
      return Promise.resolve();
    },
  });
  await hooks.steerSettled!(result("01", true));
  await hooks.steerSettled!(result("01", false));
  await hooks.steerSettled!(result("02", true));
  assert.deepEqual(seen, [true, false, true]);
  assert.equal(hooks.steerCount!("01"), 1);
  assert.equal(hooks.steerCount!("02"), 1);
});

Deno.test("withSteerLedger() keeps hooks that own a ledger as they are", () => {
  const own = { steerCount: (): number => 7 };
  assert.equal(withSteerLedger(own), own);
});
