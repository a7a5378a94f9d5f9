import assert from "node:assert/strict";
import { join } from "node:path";
import { runPacket, type RunResult } from "../../../lib/runner/mod.ts";
import { readState } from "../../../lib/status/mod.ts";
import type {
  BoundaryCommand,
  RunEvent,
  ViewSettings,
} from "../../../lib/shared/mod.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

async function runCollecting(
  dir: string,
  options: Parameters<typeof runPacket>[1] = {},
): Promise<{ result: RunResult; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  const result = await runPacket(dir, {
    ...options,
    onEvent: (event) => {
      events.push(event);
    },
  });
  return { result, events };
}

const NOTES_CONTRACT = `verify:
  files_exist: [NOTES.md]
  contains: [{path: NOTES.md, text: "done"}]`;

Deno.test("runPacket() retries after provider_capacity and completes", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "at capacity"}
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "retry"]);
  const retry = events.find((e) => e.type === "retry_scheduled");
  assert.equal(retry?.data.failure_class, "provider_capacity");
  const state = await readState(packet.stateRoot);
  assert.deepEqual(
    state.prompts["01"]?.attempts.map((a) => [a.mode, a.status]),
    [["run", "failed"], ["retry", "completed"]],
  );
  assert.equal(
    state.prompts["01"]?.attempts[0]?.failure_class,
    "provider_capacity",
  );
});

Deno.test("runPacket() repairs a nominal success whose verifier failed, naming the unmet item", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "draft"}]
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "repair"]);
  const state = await readState(packet.stateRoot);
  const [first, second] = state.prompts["01"]!.attempts;
  assert.equal(first?.status, "verification_failed");
  assert.equal(first?.verifier?.passed, false);
  const transcript = await Deno.readTextFile(
    join(packet.stateRoot, second!.transcript!),
  );
  assert.match(transcript, /## Repair Instructions/);
  assert.match(transcript, /- contains: NOTES\.md contains "done"/);
  assert.match(transcript, /Do the task\./);
});

Deno.test("runPacket() resumes the session after transport_timeout within one attempt", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - error: {kind: transport_timeout, message: "stream idle"}
  resume:
    writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run"]);
  const resumed = events.filter((e) => e.type === "session_resumed");
  assert.equal(resumed.length, 1);
  assert.equal(resumed[0]?.data.failure_class, "transport_timeout");
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]?.attempts[0]?.resumes, 1);
});

Deno.test("runPacket() stops resuming when resume_attempts is spent, then retries", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery: {resume_attempts: 1}
simulate:
  attempts:
    - error: {kind: protocol_error, message: "bad frame"}
    - writes: [{path: NOTES.md, text: "done"}]
  resume:
    error: {kind: protocol_error, message: "bad frame again"}`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "retry"]);
  assert.equal(events.filter((e) => e.type === "session_resumed").length, 1);
});

Deno.test("runPacket() completes with a verifier override when the provider failed but the work verifies", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "done"}]
      error: {kind: runtime_error, message: "exit 1 after the work"}`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run"]);
  assert.match(result.prompts["01"]!.reason!, /verification passed/);
  const completed = events.find((e) => e.type === "prompt_completed");
  assert.match(String(completed?.data.reason), /provider_runtime_claim/);
});

Deno.test("runPacket() fails at once on approval_denied, even when the work verifies", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "done"}]
      error: {kind: approval_denied, message: "approval denied for Bash"}
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run"]);
  assert.equal(result.prompts["01"]?.status, "failed");
  assert.match(result.prompts["01"]!.reason!, /approval_denied/);
  assert.equal(events.at(-1)?.type, "run_finished");
  assert.equal(events.at(-1)?.data.status, "failed");
});

Deno.test("runPacket() fails with provider_failed when the retry budget is spent", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery:
  retry: {class_attempts: {provider_capacity: 1}}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "at capacity"}
    - error: {kind: provider_capacity, message: "still at capacity"}
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "retry"]);
  assert.match(result.prompts["01"]!.reason!, /retry budget spent 1\/1/);
});

Deno.test("runPacket() fails verification when the repair budget is spent", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery:
  repair: {max_attempts: 1}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "draft"}]
    - writes: [{path: NOTES.md, text: "draft 2"}]
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.equal(result.prompts["01"]?.status, "verification_failed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "repair"]);
  assert.match(result.prompts["01"]!.reason!, /repair budget spent/);
});

Deno.test("runPacket() repairs after the retry budget is spent when the workspace changed", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery:
  retry: {class_attempts: {provider_runtime_claim: 1}}
simulate:
  attempts:
    - error: {kind: runtime_error, message: "crashed"}
    - writes: [{path: NOTES.md, text: "half"}]
      error: {kind: runtime_error, message: "crashed again"}
    - writes: [{path: NOTES.md, text: "done"}]`),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "retry", "repair"]);
});

Deno.test("runPacket() does not repair when repair is disabled", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery:
  repair: {enabled: false}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "draft"}]`),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.prompts["01"]?.status, "verification_failed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run"]);
});

Deno.test("runPacket() halts on a verifier fault without spending a repair", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify:
  commands: [{exec: prompt-runner-no-such-binary, args: []}]
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: "done"}]`),
      "02_next.prompt.md": promptFile("simulate: {attempts: [{}]}"),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.equal(result.prompts["01"]?.status, "verifier_fault");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run"]);
  assert.match(result.prompts["01"]!.reason!, /not found on PATH/);
  assert.equal(result.prompts["02"], undefined);
});

Deno.test("runPacket() counts budgets within the current run", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
recovery:
  retry: {class_attempts: {provider_capacity: 1}}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "busy"}
    - error: {kind: provider_capacity, message: "busy"}`),
    },
  });
  const first = await runPacket(packet.dir);
  const second = await runPacket(packet.dir);
  assert.deepEqual(first.prompts["01"]?.attempts, ["run", "retry"]);
  // A second run gets its own budget: one retry again, not zero.
  assert.deepEqual(second.prompts["01"]?.attempts, ["run", "retry"]);
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]?.attempts.length, 4);
  assert.deepEqual(
    new Set(state.prompts["01"]?.attempts.map((a) => a.run_id)),
    new Set([first.run_id, second.run_id]),
  );
});

Deno.test("runPacket() orders selected prompts after the prompts they depend on", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_first.prompt.md": promptFile("simulate: {attempts: [{}]}"),
      "02_second.prompt.md": promptFile(
        "depends_on: [1]\nsimulate: {attempts: [{}]}",
      ),
      "03_third.prompt.md": promptFile("simulate: {attempts: [{}]}"),
    },
  });
  const { events } = await runCollecting(packet.dir, { ids: ["03", "2", "1"] });
  const order = events.filter((e) => e.type === "prompt_started").map((e) =>
    e.prompt_id
  );
  assert.deepEqual(order, ["03", "01", "02"]);
});

Deno.test("runPacket() blocks a prompt whose dependency has not completed", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_first.prompt.md": promptFile("simulate: {attempts: [{}]}"),
      "02_second.prompt.md": promptFile(
        'depends_on: ["01"]\nsimulate: {attempts: [{}]}',
      ),
    },
  });
  const { result, events } = await runCollecting(packet.dir, { ids: ["02"] });
  assert.equal(result.status, "blocked");
  assert.equal(result.prompts["02"]?.status, "blocked");
  assert.match(result.reason!, /waiting for 01 \(not run\)/);
  assert.equal(events.some((e) => e.type === "prompt_started"), false);
  const state = await readState(packet.stateRoot);
  assert.deepEqual(state.prompts["02"]?.blocked_by, ["01"]);
  // Once 01 completed in an earlier run, 02 runs on its own.
  await runPacket(packet.dir, { ids: ["01"] });
  const again = await runPacket(packet.dir, { ids: ["02"] });
  assert.equal(again.status, "completed");
});

Deno.test("runPacket() stops at the first failed prompt (fail-fast)", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_first.prompt.md": promptFile(`verify: {files_exist: [MISSING.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{}]}`),
      "02_second.prompt.md": promptFile("simulate: {attempts: [{}]}"),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.deepEqual(Object.keys(result.prompts), ["01"]);
});

Deno.test("runPacket() numbers events from 1 without gaps and ends with run_finished", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - thinking: ["plan the notes"]
      messages: ["writing notes now"]
      tools: [{name: Write, input: {file_path: NOTES.md, content: done}, output: ok}]
      writes: [{path: NOTES.md, text: "done"}]
      usage: {input_tokens: 10, output_tokens: 4}`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  assert.ok(events.every((e) => e.run_id === result.run_id && e.v === 1));
  assert.equal(events.at(-1)?.type, "run_finished");
  assert.equal(events.filter((e) => e.type === "run_finished").length, 1);
  const types = events.map((e) => e.type);
  for (
    const type of [
      "prompt_started",
      "run_started",
      "message_streamed",
      "message_received",
      "tool_call_started",
      "tool_call_completed",
      "token_usage_updated",
      "run_completed",
      "verification_finished",
      "prompt_completed",
    ]
  ) {
    assert.ok(types.includes(type as RunEvent["type"]), `missing ${type}`);
  }
  const started = events.find((e) => e.type === "prompt_started")!;
  assert.deepEqual(
    { ...started.data },
    {
      prompt_id: "01",
      name: "Notes",
      attempt: 1,
      mode: "run",
      provider: "simulated",
      model: "simulated",
    },
  );
});

Deno.test("runPacket() in memory writes nothing to disk", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`${NOTES_CONTRACT}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`),
    },
  });
  const result = await runPacket(packet.dir, { stateRoot: null });
  assert.equal(result.status, "completed");
  assert.equal(result.state_root, null);
  await assert.rejects(Deno.stat(packet.stateRoot), Deno.errors.NotFound);
});

Deno.test("runPacket() ends as interrupted when its signal aborts, leaving valid state", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_slow.prompt.md": promptFile(`simulate:
  attempts:
    - delay_ms: 20
      repeat: 500
      messages: ["working"]`),
    },
  });
  const abort = new AbortController();
  let seen = 0;
  const result = await runPacket(packet.dir, {
    signal: abort.signal,
    onEvent: () => {
      if (++seen === 5) abort.abort();
    },
  });
  assert.equal(result.status, "interrupted");
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]?.status, "interrupted");
  assert.equal(state.prompts["01"]?.attempts[0]?.status, "interrupted");
  await assert.rejects(
    Deno.stat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
});

Deno.test("runPacket() records the session's failure when the provider cannot start", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_bad_write.prompt.md": promptFile(`simulate:
  attempts:
    - writes: [{path: x.md, text: x, repo: nowhere}]`),
    },
  });
  const { result, events } = await runCollecting(packet.dir);
  assert.equal(result.status, "failed");
  assert.match(
    result.prompts["01"]!.reason!,
    /start_failed: cannot start simulated session/,
  );
  assert.ok(
    events.some((e) =>
      e.type === "error_occurred" && e.data.error_code === "start_failed"
    ),
  );
});

/**
 * Runs a packet in memory, capturing its rendered output; the hooks hand out
 * one set_view at the first boundary after an event `when` picks.
 */
async function runSwitching(
  dir: string,
  view: Partial<ViewSettings>,
  when: (event: RunEvent) => boolean,
  initial: Partial<ViewSettings> = {},
): Promise<string> {
  const chunks: string[] = [];
  let last: RunEvent | null = null;
  let sent = false;
  const result = await runPacket(dir, {
    stateRoot: null,
    view: initial,
    output: {
      write(text: string): Promise<void> {
        chunks.push(text);
        return Promise.resolve();
      },
    },
    hooks: {
      observe(event: RunEvent): Promise<void> {
        last = event;
        return Promise.resolve();
      },
      boundary(): Promise<BoundaryCommand[]> {
        if (sent || last === null || !when(last)) return Promise.resolve([]);
        sent = true;
        return Promise.resolve([{
          command: "set_view",
          view,
          request_id: "r",
          author: "ada",
        }]);
      },
    },
  });
  assert.equal(result.status, "completed");
  assert.ok(sent, "the view change was handed out");
  return chunks.join("");
}

Deno.test("runPacket() shows a message once when a log_mode switch lands between its streamed text and its message_received", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_talk.prompt.md": promptFile(`simulate:
  attempts:
    - messages: [m01, m02, m03]`),
    },
  });
  for (const [from, to] of [["compact", "studio"], ["studio", "compact"]]) {
    const output = await runSwitching(
      packet.dir,
      { log_mode: to as ViewSettings["log_mode"] },
      (event) =>
        event.type === "message_streamed" && event.data.delta === "m02",
      { log_mode: from as ViewSettings["log_mode"] },
    );
    const lines = output.split("\n");
    for (const name of ["m01", "m02", "m03"]) {
      const shown = lines.filter((line) =>
        line === `>> ${name}` || line === `  ${name}` ||
        line === `msg ${name}`
      );
      assert.equal(
        shown.length,
        1,
        `${from} → ${to}: ${name} shown once, found ${shown.length} in\n${output}`,
      );
    }
  }
});

Deno.test("runPacket() writes a transcript whose prompt text carries no escape sequence or control character", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_hostile.prompt.md": promptFile(
        "simulate: {attempts: [{messages: [ok]}]}",
        "Do it.\x07 \x1b]0;owned\x07 \x1b[31mred\x1b[0m \x9b2J tab\there\n",
      ),
    },
  });
  const { result } = await runCollecting(packet.dir);
  assert.equal(result.status, "completed");
  const state = await readState(packet.stateRoot);
  const transcript = await Deno.readTextFile(
    join(packet.stateRoot, state.prompts["01"]!.attempts[0]!.transcript!),
  );
  assert.match(transcript, /--- prompt text ---\nDo it\. +red +tab\there\n/);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(transcript, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
});
