/**
 * Every reason a run needs a person, produced by a real (simulated) run:
 * the runner emits `attention_needed`, and the snapshot carries it until
 * the next attempt starts or, for a stall, until events come again.
 */

import assert from "node:assert/strict";
import { steer } from "../../../lib/control/mod.ts";
import type { RunEvent } from "../../../lib/shared/mod.ts";
import { runCollecting as run } from "../../_helpers/run_events.ts";
import { readSnapshot } from "../../_helpers/live_run.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

function attentions(events: RunEvent[]): Record<string, unknown>[] {
  return events.filter((e) => e.type === "attention_needed").map((e) => e.data);
}

const NO_REPAIR = `recovery:
  retry: {max_attempts: 1, base_delay_ms: 0, max_delay_ms: 0}
  repair: {enabled: false}`;

Deno.test("a prompt that fails for good (retries spent) raises attention once, reason failed, and the snapshot keeps it", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`${NO_REPAIR}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "at capacity"}
    - error: {kind: provider_capacity, message: "still at capacity"}`),
    },
  });
  const { status, events } = await run(packet.dir);
  assert.equal(status, "failed");
  const raised = attentions(events);
  assert.equal(raised.length, 1, JSON.stringify(raised));
  assert.equal(raised[0]!.reason, "failed");
  assert.equal(raised[0]!.prompt_id, "01");
  assert.equal(raised[0]!.attempt, 2);
  assert.match(String(raised[0]!.detail), /still at capacity/);
  // After the retry_scheduled of attempt 1, not before: retries are not failures.
  const types = events.map((e) => e.type);
  assert.ok(types.indexOf("attention_needed") > types.indexOf("prompt_failed"));
  const snapshot = await readSnapshot(packet.stateRoot);
  const attention = snapshot?.attention as Record<string, unknown>;
  assert.equal(attention.reason, "failed");
  assert.equal(
    attention.since,
    events.find((e) => e.type === "attention_needed")!.at,
  );
});

Deno.test("a verifier fault raises attention with reason verifier_fault, not failed", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`verify:
  commands: [{exec: /nonexistent/checker, args: []}]
simulate:
  attempts:
    - messages: ["done"]`),
    },
  });
  const { events } = await run(packet.dir);
  assert.deepEqual(attentions(events).map((a) => a.reason), ["verifier_fault"]);
});

Deno.test("a refused permission raises attention at once, reason approval_denied, and the prompt's failure adds no second one", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`simulate:
  attempts:
    - error: {kind: approval_denied, message: "Bash was refused"}`),
    },
  });
  const { status, events } = await run(packet.dir);
  assert.equal(status, "failed");
  const raised = attentions(events);
  assert.deepEqual(raised.map((a) => a.reason), ["approval_denied"]);
  assert.match(String(raised[0]!.detail), /Bash was refused/);
  const types = events.map((e) => e.type);
  assert.ok(
    types.indexOf("attention_needed") < types.indexOf("verification_finished"),
    "raised when the refusal came, before verification",
  );
});

Deno.test("a steer refused because the steer budget is spent raises attention steer_budget_exhausted once", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`recovery: {max_steers: 0}
simulate:
  attempts:
    - delay_ms: 40
      repeat: 15
      messages: ["working"]`),
    },
  });
  let sent = 0;
  const { status, events } = await run(packet.dir, {
    async onEvent(event): Promise<void> {
      if (event.type === "message_received" && sent < 2) {
        sent++;
        await steer(
          { state_root: packet.stateRoot, run_id: event.run_id },
          `steer ${sent}`,
          { author: "test" },
        );
      }
    },
  });
  assert.equal(status, "completed", "a refused steer never fails the run");
  const raised = attentions(events);
  assert.deepEqual(raised.map((a) => a.reason), ["steer_budget_exhausted"]);
  assert.equal(raised[0]!.prompt_id, "01");
  assert.match(String(raised[0]!.detail), /steer budget spent: 0\/0/);
});

Deno.test("a stall raises attention once per stall, and the next event from the agent clears it in the snapshot", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`progress_timeout_ms: 400
simulate:
  attempts:
    - delay_ms: 1500
      messages: ["slow"]`),
    },
  });
  let stalls = 0;
  let checked: Promise<unknown> | null = null;
  const { status, events } = await run(packet.dir, {
    onEvent(event): void {
      if (event.type === "attention_needed") stalls++;
      if (stalls > 0 && event.type === "message_streamed" && !checked) {
        // Read once the plane has published this event (it writes the
        // snapshot soon after, never in the middle of the runner's work).
        checked = new Promise((resolve) =>
          setTimeout(
            () => resolve(readSnapshot(packet.stateRoot)),
            250,
          )
        );
      }
    },
  });
  assert.equal(status, "completed", "a stall is reported, never fatal");
  const raised = attentions(events);
  // Quiet spells of 1.5 s before each agent event.
  assert.ok(raised.length >= 2, JSON.stringify(raised));
  assert.ok(raised.every((a) => a.reason === "stalled"));
  assert.match(String(raised[0]!.detail), /progress timeout 0\.4 s/);
  // Once per stall: never two without an agent event between them.
  const types = events.map((e) => e.type);
  for (let i = 1; i < types.length; i++) {
    assert.ok(
      !(types[i] === "attention_needed" && types[i - 1] === "attention_needed"),
      types.join(" "),
    );
  }
  assert.ok(checked !== null);
  const snapshot = await checked as Record<string, unknown>;
  assert.equal(
    snapshot.attention,
    null,
    "the stall is cleared by the next event",
  );
});

Deno.test("--progress-timeout (runPacket's progressTimeoutMs) replaces the packet's", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`progress_timeout_ms: 60000
simulate:
  attempts:
    - delay_ms: 800
      thinking: ["slow"]`),
    },
  });
  const { events } = await run(packet.dir, { progressTimeoutMs: 300 });
  assert.ok(attentions(events).some((a) => a.reason === "stalled"));
  const quiet = await run(packet.dir);
  assert.deepEqual(attentions(quiet.events), [], "60 s never passes here");
});
