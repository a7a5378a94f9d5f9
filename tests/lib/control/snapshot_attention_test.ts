/**
 * The snapshot's `attention` and `budget`: set by `attention_needed` and
 * the runner's spend reports, cleared as DESIGN §5 says.
 */

import assert from "node:assert/strict";
import { snapshot } from "../../../lib/control/mod.ts";
import type { Snapshot } from "../../../lib/control/snapshot.ts";
import { DEFAULT_VIEW } from "../../../lib/shared/view.ts";
import type { RunEvent } from "../../../lib/shared/events.ts";
import {
  makeControlRoot,
  promptStart,
  runEvent,
} from "../../_helpers/plane.ts";

const RUN = "run-attention";

function attentionEvent(seq: number, reason: string): RunEvent {
  return runEvent(RUN, seq, "attention_needed", {
    reason,
    prompt_id: "01",
    attempt: 1,
    detail: `${reason} here`,
  });
}

Deno.test("the snapshot shows attention from attention_needed; a stall clears at the next agent event, any reason at the next attempt", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open(RUN);
  const published = async (): Promise<Snapshot> => {
    await plane.viewChanged({ ...DEFAULT_VIEW }); // writes the snapshot now
    return await snapshot(root.ref(RUN));
  };
  await plane.promptStarted(promptStart("01"));
  assert.equal((await published()).attention, null);
  const stall = attentionEvent(1, "stalled");
  await plane.observe(stall);
  assert.deepEqual((await published()).attention, {
    reason: "stalled",
    since: stall.at,
    prompt_id: "01",
    attempt: 1,
    detail: "stalled here",
  });
  // A runner event is not the agent coming back.
  await plane.observe(runEvent(RUN, 2, "prompt_steered", {}));
  assert.equal((await published()).attention?.reason, "stalled");
  await plane.observe(runEvent(RUN, 3, "message_streamed", { delta: "x" }));
  assert.equal((await published()).attention, null);
  // Any other reason stays through agent events, until the next attempt.
  await plane.observe(attentionEvent(4, "approval_denied"));
  await plane.observe(runEvent(RUN, 5, "message_streamed", { delta: "x" }));
  assert.equal((await published()).attention?.reason, "approval_denied");
  await plane.promptStarted(promptStart("01", { attempt: 2 }));
  assert.equal((await published()).attention, null);
  // It outlives the run's end: the final snapshot says what needed a person.
  await plane.observe(attentionEvent(6, "failed"));
  await plane.close("failed");
  assert.equal((await snapshot(root.ref(RUN))).attention?.reason, "failed");
});

Deno.test("the snapshot shows the budget's spend the runner reports, and a reader drops a malformed one", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open(RUN);
  plane.budgetChanged([
    { key: "max_cost_usd", scope: "run", limit: 0.5, spent: 0.125 },
  ]);
  await plane.viewChanged({ ...DEFAULT_VIEW });
  assert.deepEqual((await snapshot(root.ref(RUN))).budget, [
    { key: "max_cost_usd", scope: "run", limit: 0.5, spent: 0.125 },
  ]);
  plane.budgetChanged(null);
  await plane.viewChanged({ ...DEFAULT_VIEW });
  assert.equal((await snapshot(root.ref(RUN))).budget, null);
  await plane.close("completed");
  // A hand-edited snapshot: a reader keeps only well-formed entries.
  const path = `${root.stateRoot}/control/snapshot.json`;
  const stored = JSON.parse(await Deno.readTextFile(path));
  stored.budget = [
    { key: "max_cost_usd", scope: "run", limit: "lots", spent: 1 },
    { key: "max_input_tokens", scope: "prompt", limit: 100, spent: 5 },
    "junk",
  ];
  stored.attention = { reason: "bored", since: "x", detail: 3 };
  await Deno.writeTextFile(path, JSON.stringify(stored));
  const read = await snapshot(root.ref(RUN));
  assert.deepEqual(read.budget, [
    { key: "max_input_tokens", scope: "prompt", limit: 100, spent: 5 },
  ]);
  assert.equal(read.attention, null, "an unknown reason is not shown");
});
