import assert from "node:assert/strict";
import { join } from "node:path";
import { runPacket } from "../../../lib/runner/mod.ts";
import {
  type AttemptRecord,
  type PromptState,
  readState,
  type StateFile,
} from "../../../lib/status/mod.ts";
import { lastEventOf, StateReplay } from "../../../lib/fleet/_state_replay.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

const NOTES = `verify:
  contains: [{path: NOTES.md, text: "done"}]`;

/** What both the runner's record and the replay know of an attempt. */
function attemptFacts(a: AttemptRecord): Record<string, unknown> {
  return {
    run_id: a.run_id,
    attempt: a.attempt,
    mode: a.mode,
    status: a.status,
    resumes: a.resumes,
    usage: a.usage,
    verifier: a.verifier === null ? null : {
      passed: a.verifier.passed,
      failures: a.verifier.failures,
      faults: a.verifier.faults,
      items: a.verifier.items.map(({ clause, label, status, reason }) => ({
        clause,
        label,
        status,
        reason,
      })),
    },
  };
}

function promptFacts(p: PromptState): Record<string, unknown> {
  return {
    status: p.status,
    name: p.name,
    run_id: p.run_id,
    attempts: p.attempts.map(attemptFacts),
    last_verifier: p.last_verifier === null ? null : attemptFacts({
      ...p.attempts[0]!,
      verifier: p.last_verifier,
    }).verifier,
  };
}

function replay(runId: string, text: string): StateFile {
  const replayed = new StateReplay(runId);
  for (const line of text.split("\n").filter(Boolean)) replayed.line(line);
  return replayed.state;
}

Deno.test("StateReplay rebuilds from a run's events what state.json records of its retries, repairs, resumed sessions, usage and verifier reports", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_retried.prompt.md": promptFile(`${NOTES}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "at capacity"}
      usage: {input_tokens: 5, output_tokens: 1, cost_usd: 0.01}
    - writes: [{path: NOTES.md, text: "done"}]
      usage: {input_tokens: 7, output_tokens: 2, cost_usd: 0.02}`),
      "02_repaired.prompt.md": promptFile(`verify:
  contains: [{path: NOTES.md, text: "twice"}]
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "draft"}]
      usage: {input_tokens: 11, output_tokens: 3}
    - writes: [{path: NOTES.md, text: "done twice"}]
      usage: {input_tokens: 13, output_tokens: 4}`),
      "03_resumed.prompt.md": promptFile(`${NOTES}
simulate:
  attempts:
    - error: {kind: transport_timeout, message: "stream idle"}
      usage: {input_tokens: 17, output_tokens: 5}
  resume:
    writes: [{path: NOTES.md, text: "done thrice"}]
    usage: {input_tokens: 19, output_tokens: 6}`),
      "04_failed.prompt.md": promptFile(`verify:
  contains: [{path: NOTES.md, text: "never"}]
recovery:
  repair: {max_attempts: 1}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "no"}]
    - writes: [{path: NOTES.md, text: "still no"}]`),
    },
  });
  const result = await runPacket(packet.dir, {});
  assert.equal(result.status, "failed");
  const state = await readState(packet.stateRoot);
  const events = await Deno.readTextFile(
    join(packet.stateRoot, "control", "events.jsonl"),
  );
  const replayed = replay(result.run_id, events);
  assert.deepEqual(
    Object.keys(replayed.prompts).sort(),
    ["01", "02", "03", "04"],
  );
  for (const id of ["01", "02", "03", "04"]) {
    assert.deepEqual(
      promptFacts(replayed.prompts[id]!),
      promptFacts(state.prompts[id]!),
      `prompt ${id}`,
    );
  }
  // A retry names its failure's class, as the runner records it.
  assert.equal(
    replayed.prompts["01"]!.attempts[0]!.failure_class,
    "provider_capacity",
  );
  assert.equal(replayed.prompts["04"]!.reason, state.prompts["04"]!.reason);
  const last = lastEventOf(events.trimEnd().split("\n").at(-1)!);
  assert.equal(last?.type, "run_finished");
  assert.equal(last?.data.status, "failed");
});

function line(
  seq: number,
  type: string,
  data: Record<string, unknown>,
  place: { prompt_id?: string; attempt?: number } = {},
): string {
  return JSON.stringify({
    v: 1,
    seq,
    at: `2026-01-01T00:00:${String(seq).padStart(2, "0")}.000Z`,
    run_id: "r1",
    prompt_id: place.prompt_id ?? null,
    attempt: place.attempt ?? null,
    type,
    data,
  });
}

Deno.test("StateReplay settles what a dead runner left running when the run resumes, replays a line stored twice once, and records a blocked prompt", () => {
  const at = { prompt_id: "01", attempt: 1 };
  const lines = [
    line(1, "prompt_started", {
      prompt_id: "01",
      name: "first",
      attempt: 1,
      mode: "run",
    }, at),
    line(2, "run_started", { session_id: "s" }, at),
    line(3, "token_usage_updated", { input_tokens: 4, output_tokens: 1 }, at),
    line(3, "token_usage_updated", { input_tokens: 9, output_tokens: 9 }, at),
    line(4, "message_streamed", { delta: '{"type":"prompt_failed"' }, at),
    "{not json",
    line(5, "run_resumed", { after_seq: 4, after: "runner_gone" }),
    line(6, "prompt_started", {
      prompt_id: "01",
      name: "first",
      attempt: 2,
      mode: "run",
    }, { prompt_id: "01", attempt: 2 }),
    line(7, "prompt_completed", {
      prompt_id: "01",
      status: "completed",
      reason: null,
    }, { prompt_id: "01", attempt: 2 }),
    line(8, "prompt_failed", {
      prompt_id: "02",
      status: "blocked",
      reason: "waiting for 09 (not run)",
      blocked_by: ["09"],
    }, { prompt_id: "02" }),
  ];
  const state = replay("r1", lines.join("\n"));
  const first = state.prompts["01"]!;
  assert.equal(first.status, "completed");
  assert.equal(first.name, "first");
  assert.deepEqual(first.attempts.map((a) => [a.attempt, a.status]), [
    [1, "interrupted"],
    [2, "completed"],
  ]);
  assert.match(
    first.attempts[0]!.reason!,
    /runner stopped during this attempt/,
  );
  // The killed attempt's usage was never recorded by its runner.
  assert.equal(first.attempts[0]!.usage, undefined);
  assert.deepEqual(first.attempts[1]!.usage, {
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
  });
  const blocked = state.prompts["02"]!;
  assert.equal(blocked.status, "blocked");
  assert.deepEqual(blocked.blocked_by, ["09"]);
  assert.deepEqual(blocked.attempts, []);
  assert.equal(state.updated_at, "2026-01-01T00:00:08.000Z");
});
