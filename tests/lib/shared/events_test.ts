/**
 * The event union narrows `data` by `type`. The `@ts-expect-error` lines
 * are the test: were `data` a plain record again (or a shape wrong), they
 * would type-check, and `deno check` (which `deno test` runs) would reject
 * the unused directives.
 */

import assert from "node:assert/strict";
import type {
  EventData,
  ProviderEvent,
  RunEvent,
} from "../../../lib/shared/events.ts";
import {
  PROVIDER_EVENT_TYPES,
  RUNNER_EVENT_TYPES,
} from "../../../lib/shared/events.ts";

/** What a reader takes from an event, using only what narrowing gives it. */
function describe(event: RunEvent): string {
  switch (event.type) {
    case "message_streamed": {
      const delta: string = event.data.delta;
      const kind: "text" | "thinking" = event.data.kind;
      return `${kind}:${delta}`;
    }
    case "tool_call_started": {
      const input: Record<string, unknown> = event.data.tool_input;
      return `${event.data.tool_name}(${Object.keys(input).join(",")})`;
    }
    case "run_finished": {
      const status: "completed" | "failed" | "blocked" | "interrupted" =
        event.data.status;
      return status;
    }
    case "verification_finished":
      return event.data.items.map((item) => item.clause).join(",");
    default:
      return event.type;
  }
}

function stamp(
  seq: number,
  event: ProviderEvent | {
    type: "run_finished";
    data: EventData<"run_finished">;
  },
): RunEvent {
  return {
    v: 1,
    seq,
    at: "2026-11-30T00:00:00.000Z",
    run_id: "r",
    prompt_id: null,
    attempt: null,
    ...event,
  } as RunEvent;
}

Deno.test("RunEvent: checking the type narrows data to that type's shape", () => {
  assert.equal(
    describe(stamp(1, {
      type: "message_streamed",
      data: { delta: "hi", kind: "text" },
    })),
    "text:hi",
  );
  assert.equal(
    describe(stamp(2, {
      type: "tool_call_started",
      data: { tool_call_id: "t1", tool_name: "Edit", tool_input: { a: 1 } },
    })),
    "Edit(a)",
  );
  assert.equal(
    describe(stamp(3, {
      type: "run_finished",
      data: { status: "blocked", reason: "x", prompts: {} },
    })),
    "blocked",
  );
});

Deno.test("RunEvent: a field of another type's shape, or of the wrong type, does not type-check", () => {
  const event = stamp(1, {
    type: "message_streamed",
    data: { delta: "hi", kind: "thinking" },
  });
  // Not narrowed: data could be any type's, so no field is a string for sure.
  // @ts-expect-error data.delta is unknown until the type is checked
  const unnarrowed: string = event.data.delta;
  assert.equal(unnarrowed, "hi");
  if (event.type === "tool_call_started") {
    // @ts-expect-error tool_input is a record, not a string
    const input: string = event.data.tool_input;
    assert.fail(input);
  }
  const wrong: ProviderEvent[] = [
    // @ts-expect-error message_streamed's kind is text or thinking
    { type: "message_streamed", data: { delta: "x", kind: "shout" } },
    // @ts-expect-error tool_call_started needs its call id, name and input
    { type: "tool_call_started", data: { tool_name: "Edit" } },
    // @ts-expect-error a token count is a number
    {
      type: "token_usage_updated",
      data: { input_tokens: "1", output_tokens: 0, total_tokens: 1 },
    },
  ];
  assert.equal(wrong.length, 3);
  const finished: EventData<"run_finished"> = {
    // @ts-expect-error run_finished's status is one of the four final statuses
    status: "done",
    reason: null,
    prompts: {},
  };
  assert.equal(finished.status, "done");
});

Deno.test("the union has one shape for every event type the runner and the providers emit", () => {
  const shaped: Record<RunEvent["type"], true> = Object.fromEntries(
    [...PROVIDER_EVENT_TYPES, ...RUNNER_EVENT_TYPES].map((t) => [t, true]),
  ) as Record<RunEvent["type"], true>;
  assert.equal(
    Object.keys(shaped).length,
    PROVIDER_EVENT_TYPES.length + RUNNER_EVENT_TYPES.length,
  );
});
