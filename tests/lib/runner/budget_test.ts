/**
 * Budgets enforced live: a limit passed stops the attempt at that usage
 * event, fails the prompt `budget_exhausted` (never retried or repaired),
 * and raises attention; a prompt's own limit replaces the run's; a resumed
 * run counts what it had spent.
 */

import assert from "node:assert/strict";
import { runCollecting as run } from "../../_helpers/run_events.ts";
import { readState } from "../../../lib/status/mod.ts";
import { readSnapshot } from "../../_helpers/live_run.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

/** A prompt that reports `rounds` usage events, each adding `cost` and 100/10 tokens. */
function spender(id: string, rounds: number, cost: number, extra = ""): string {
  return promptFile(`id: "${id}"
${extra}
simulate:
  attempts:
    - repeat: ${rounds}
      messages: ["spending"]
      usage: {input_tokens: 100, output_tokens: 10, cost_usd: ${cost}}`);
}

const RETRIES = `recovery:
  retry: {max_attempts: 3, base_delay_ms: 0, max_delay_ms: 0}
  repair: {enabled: true, max_attempts: 2}`;

Deno.test("a run whose cost passes budget.max_cost_usd mid-attempt is stopped at that usage event, fails budget_exhausted and is not retried or repaired", async () => {
  await using packet = await makePacket({
    manifest: `budget: {max_cost_usd: 0.05}`,
    prompts: { "01_spend.prompt.md": spender("01", 10, 0.02, RETRIES) },
  });
  const { status, events } = await run(packet.dir);
  assert.equal(status, "failed");
  const usage = events.filter((e) => e.type === "token_usage_updated");
  // 0.02, 0.04, 0.06: the third passes the limit, and is the last.
  assert.equal(usage.length, 3);
  const passing = events.indexOf(usage[2]!);
  const after = events.slice(passing + 1).map((e) => e.type);
  // Runner events only: the agent was stopped, and told once.
  assert.deepEqual(after, [
    "error_occurred",
    "attention_needed",
    "verification_finished",
    "prompt_failed",
    "run_finished",
  ]);
  const attention = events.find((e) => e.type === "attention_needed")!;
  assert.equal(attention.data.reason, "budget_exhausted");
  assert.match(String(attention.data.detail), /max_cost_usd of \$0\.0500/);
  assert.equal(
    events.filter((e) => e.type === "prompt_started").length,
    1,
    "not retried, not repaired",
  );
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]?.failure_class, "budget_exhausted");
  assert.equal(state.prompts["01"]?.attempts[0]?.usage?.cost_usd, 0.06);
  const snapshot = await readSnapshot(packet.stateRoot);
  assert.equal(
    (snapshot?.attention as Record<string, unknown>).reason,
    "budget_exhausted",
  );
  assert.deepEqual(snapshot?.budget, [
    { key: "max_cost_usd", scope: "run", limit: 0.05, spent: 0.06 },
  ]);
});

Deno.test("token budgets stop an attempt like a cost budget: max_output_tokens", async () => {
  await using packet = await makePacket({
    manifest: `budget: {max_output_tokens: 25}`,
    prompts: { "01_spend.prompt.md": spender("01", 10, 0.001) },
  });
  const { status, events } = await run(packet.dir);
  assert.equal(status, "failed");
  assert.equal(
    events.filter((e) => e.type === "token_usage_updated").length,
    3,
    "10, 20, then 30 output tokens passes 25",
  );
  const error = events.find((e) =>
    e.type === "error_occurred" && e.data.error_code === "budget_exhausted"
  );
  assert.match(String(error?.data.error_message), /max_output_tokens of 25/);
});

Deno.test("a prompt's budget replaces the run's: a higher one lets it finish, a lower one stops it", async () => {
  await using packet = await makePacket({
    manifest: `budget: {max_cost_usd: 0.03}`,
    prompts: {
      "01_generous.prompt.md": spender(
        "01",
        3,
        0.02,
        "budget: {max_cost_usd: 1.0}",
      ),
    },
  });
  const generous = await run(packet.dir);
  assert.equal(generous.status, "completed", "0.06 spent under its own 1.00");
  await packet.writePrompt(
    "01_generous.prompt.md",
    spender("01", 5, 0.001, "budget: {max_cost_usd: 0.002}"),
  );
  const strict = await run(packet.dir);
  assert.equal(strict.status, "failed");
  const attention = strict.events.find((e) => e.type === "attention_needed")!;
  assert.match(
    String(attention.data.detail),
    /the prompt's budget\.max_cost_usd of \$0\.0020 is spent: \$0\.0030 on this prompt/,
  );
});

Deno.test("the run's budget counts every prompt of the run: a prompt that starts with it spent never starts its agent", async () => {
  await using packet = await makePacket({
    manifest: `budget: {max_cost_usd: 0.04}`,
    prompts: {
      "01_first.prompt.md": spender("01", 2, 0.02),
      "02_second.prompt.md": spender("02", 2, 0.01),
    },
  });
  const { status, events } = await run(packet.dir);
  assert.equal(status, "failed");
  const second = events.filter((e) => e.prompt_id === "02").map((e) => e.type);
  assert.ok(!second.includes("run_started"), second.join(" "));
  assert.ok(second.includes("attention_needed"));
  const error = events.find((e) =>
    e.prompt_id === "02" && e.type === "error_occurred"
  );
  assert.match(String(error?.data.error_message), /\$0\.0400 in this run/);
});

Deno.test("a resumed run counts what the run spent before it was interrupted", async () => {
  await using packet = await makePacket({
    manifest: `budget: {max_cost_usd: 0.05}`,
    prompts: {
      "01_first.prompt.md": spender("01", 3, 0.01),
      "02_long.prompt.md": promptFile(`id: "02"
simulate:
  attempts:
    - repeat: 3
      delay_ms: 30
      messages: ["spending"]
      usage: {input_tokens: 100, output_tokens: 10, cost_usd: 0.01}`),
    },
  });
  // The first process: 01 spends 0.03, then 02 is interrupted after 0.01.
  const abort = new AbortController();
  const first = await run(packet.dir, {
    signal: abort.signal,
    onEvent: (event) => {
      if (event.prompt_id === "02" && event.type === "token_usage_updated") {
        abort.abort();
      }
    },
  });
  assert.equal(first.status, "interrupted");
  const runId = first.events[0]!.run_id;
  // Resumed: 02 again spends 0.01, 0.02, 0.03; with the 0.04 already
  // spent, the second report passes 0.05 (alone, it never would).
  const resumed = await run(packet.dir, { runId, ids: ["02"] });
  assert.equal(resumed.status, "failed");
  const detail = resumed.events.find((e) => e.type === "attention_needed")
    ?.data.detail;
  assert.match(String(detail), /\$0\.0600 in this run/);
});
