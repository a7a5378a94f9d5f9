/**
 * What the dashboard's server and page share (`commands/serve/page/shared.ts`):
 * the view's keys are the library's, and the timeline's fold decides each
 * attempt's outcome one way for both.
 */

import assert from "node:assert/strict";
import { VIEW_OPTIONS } from "../../mod.ts";
import {
  rowCells,
  type TimelineEvent,
  timelineSteps,
  VIEW_KEYS,
} from "../../commands/serve/page/shared.ts";

Deno.test("the page's view keys are the library's VIEW_OPTIONS keys, in order", () => {
  assert.deepEqual([...VIEW_KEYS], Object.keys(VIEW_OPTIONS));
});

Deno.test("the timeline's fold: a next attempt ends the one before by its mode, run_finished ends every running one, a steer is a mark", () => {
  const event = (
    seq: number,
    type: string,
    data: Record<string, unknown> = {},
  ): TimelineEvent => ({ seq, type, prompt_id: "01", attempt: 2, data });
  assert.deepEqual(
    timelineSteps(event(5, "prompt_started", { mode: "retry" })),
    [
      { kind: "end", prompt: "01", outcome: "retried" },
      {
        kind: "start",
        prompt: "01",
        name: null,
        number: 2,
        mode: "retry",
        seq: 5,
      },
    ],
  );
  assert.deepEqual(
    timelineSteps(event(6, "prompt_started", { mode: "repair" }))[0],
    { kind: "end", prompt: "01", outcome: "repaired" },
  );
  assert.deepEqual(timelineSteps(event(6, "prompt_started"))[0], {
    kind: "end",
    prompt: "01",
    outcome: "interrupted",
  });
  assert.deepEqual(
    timelineSteps(event(7, "prompt_failed", { status: "interrupted" })).at(-1),
    { kind: "end", prompt: "01", outcome: "interrupted" },
  );
  assert.deepEqual(timelineSteps(event(8, "prompt_failed")).at(-1), {
    kind: "end",
    prompt: "01",
    outcome: "failed",
  });
  assert.deepEqual(
    timelineSteps(event(9, "prompt_steered", { author: "ada", text: "go" })),
    [
      { kind: "reach", prompt: "01", seq: 9 },
      { kind: "steer", prompt: "01", seq: 9, text: "ada: go" },
    ],
  );
  assert.deepEqual(timelineSteps({ seq: 10, type: "run_finished" }), [
    { kind: "end_all", outcome: "interrupted" },
  ]);
  assert.deepEqual(
    timelineSteps({ seq: 11, type: "text", prompt_id: null }),
    [],
  );
});

Deno.test("a runs-page row's cells, as both the server and the page write them", () => {
  const { text, classes } = rowCells({
    root: "ws-1",
    run: "r1",
    target: "TARGET",
    packet: "PACKET",
    status: "runner_gone",
    progress: { completed: 1, selected: 3 },
    current: { id: "02", name: "build" },
    attempt: { number: 2, mode: "retry", detail: null },
    elapsed_ms: 125_000,
    input_tokens: 12_300,
    output_tokens: 950,
    cost_usd: 0.0123,
    last_event_age_ms: 4000,
    runner: "gone",
    attention: {
      reason: "budget_exhausted",
      prompt_id: "02",
      attempt: 2,
      detail: "spent",
    },
  });
  assert.deepEqual(text, {
    target: "TARGET",
    status: "runner gone",
    attention: "budget exhausted on 02 attempt 2",
    progress: "1/3",
    prompt: "02 build",
    attempt: "#2 retry",
    elapsed: "2m05s",
    tokens: "12.3k in · 950 out",
    cost: "$0.0123",
    "last-event": "4s ago",
    runner: "gone",
  });
  assert.equal(classes.status, "status status-runner_gone");
  assert.equal(classes.runner, "runner runner-gone");
  assert.equal(classes.attention, "attention attention-budget_exhausted");
});
