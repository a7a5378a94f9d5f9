/**
 * The status rollup's reconciliation, from hand-made inputs: the cases a
 * real run reaches only by chance (a runner killed between publishing its
 * end and its last snapshot, a blocked prompt, a retry, costs).
 */

import assert from "node:assert/strict";
import type { Snapshot } from "../../../lib/control/snapshot.ts";
import {
  type AttemptRecord,
  type StateFile,
  type StatusInputs,
  statusRollup,
} from "../../../lib/status/mod.ts";

const RUN = "20261130T120000000Z-abcdefghij";
const NOW = Date.parse("2026-11-30T12:00:10.000Z");

function snapshot(extra: Partial<Snapshot> = {}): Snapshot {
  return {
    v: 1,
    run_id: RUN,
    packet: "p",
    packet_dir: "/p",
    status: "running",
    prompt_id: "01",
    prompt_name: "One",
    attempt: 2,
    mode: "retry",
    provider: "claude",
    model: "opus",
    run_started_at: "2026-11-30T12:00:00.000Z",
    prompt_started_at: "2026-11-30T12:00:05.000Z",
    updated_at: "2026-11-30T12:00:09.000Z",
    elapsed_ms: 9000,
    prompt_elapsed_ms: 4000,
    tool_count: 0,
    input_tokens: 50,
    output_tokens: 5,
    cost_usd: 0.25,
    agent_pid: 4242,
    agent_pid_start: null,
    event_count: 3,
    last_seq: 3,
    steer_count: 0,
    max_steers: 3,
    view: {
      log_mode: "compact",
      tool_output: "summary",
      thinking: "show",
      diff: "stat",
    },
    pid: 1000,
    host: "here",
    started_by: "ada",
    prompt_ids: ["01", "02"],
    attention: null,
    budget: null,
    ...extra,
  };
}

function attempt(extra: Partial<AttemptRecord>): AttemptRecord {
  return {
    run_id: RUN,
    attempt: 1,
    mode: "run",
    status: "failed",
    started_at: "2026-11-30T12:00:01.000Z",
    finished_at: "2026-11-30T12:00:04.000Z",
    resumes: 0,
    failure_class: null,
    reason: null,
    verifier: null,
    transcript: null,
    ...extra,
  };
}

function state(attempts: AttemptRecord[], status = "running"): StateFile {
  return {
    v: 1,
    run_id: RUN,
    updated_at: null,
    prompts: {
      "01": {
        status: status as StateFile["prompts"][string]["status"],
        name: "One",
        run_id: RUN,
        updated_at: "2026-11-30T12:00:05.000Z",
        attempts,
        last_verifier: null,
        failure_class: null,
        reason: null,
      },
    },
  };
}

function inputs(extra: Partial<StatusInputs> = {}): StatusInputs {
  return {
    target: "/p",
    workspace_id: null,
    state_root: "/p/.prompt_runner",
    packet_prompts: [{ id: "01", name: "One" }, { id: "02", name: "Two" }],
    snapshot: snapshot(),
    state: state([
      attempt({
        failure_class: "provider_capacity",
        usage: { input_tokens: 100, output_tokens: 10, cost_usd: 0.5 },
      }),
      attempt({ attempt: 2, mode: "retry", status: "running" }),
    ]),
    lock: {
      alive: true,
      info: {
        pid: 1000,
        pid_start: "1",
        host: "here",
        run_id: RUN,
        started_at: "2026-11-30T12:00:00.000Z",
      },
    },
    last_event: {
      at: "2026-11-30T12:00:08.000Z",
      type: "message_received",
      run_id: RUN,
      data: {},
    },
    delivered_steers: 0,
    log: [],
    amendments: [],
    agent_alive: true,
    host: "here",
    ...extra,
  };
}

Deno.test("a retry names the failure it follows; tokens and cost add the finished attempts to the live one", () => {
  const rollup = statusRollup(inputs(), NOW);
  assert.equal(rollup.run.status, "running");
  assert.equal(rollup.run.elapsed_ms, 10_000);
  assert.deepEqual(rollup.attempt, {
    number: 2,
    mode: "retry",
    detail: "retry after provider_capacity",
  });
  assert.equal(rollup.provider.input_tokens, 150);
  assert.equal(rollup.provider.output_tokens, 15);
  assert.equal(rollup.provider.cost_usd, 0.75);
  assert.equal(rollup.provider.last_event_age_ms, 2000);
  assert.deepEqual(rollup.service, { agent_pid: 4242, alive: true });
  assert.deepEqual(rollup.lease, { state: "alive", pid: 1000, host: "here" });
  assert.deepEqual(rollup.progress, {
    selected: 2,
    completed: 0,
    failed: 0,
    current: { id: "01", name: "One" },
  });
});

Deno.test("a stream that ends with run_finished is finished, even when the snapshot still says running", () => {
  const rollup = statusRollup(
    inputs({
      lock: null,
      last_event: {
        at: "2026-11-30T12:00:08.000Z",
        type: "run_finished",
        run_id: RUN,
        data: { status: "completed", reason: null },
      },
    }),
    NOW,
  );
  assert.equal(rollup.run.status, "completed");
  assert.equal(rollup.lease.state, "none");
});

Deno.test("a run that ended blocked reads as failed, with the reason as the detail", () => {
  const rollup = statusRollup(
    inputs({
      snapshot: snapshot({ status: "blocked", attempt: null, mode: null }),
      lock: null,
      last_event: {
        at: "2026-11-30T12:00:08.000Z",
        type: "run_finished",
        run_id: RUN,
        data: { status: "blocked", reason: "prompt 02 is blocked" },
      },
    }),
    NOW,
  );
  assert.equal(rollup.run.status, "failed");
  assert.match(rollup.attempt.detail ?? "", /prompt 02 is blocked/);
});

Deno.test("a running snapshot whose lock is dead, or missing, is a runner gone", () => {
  const dead = inputs();
  dead.lock!.alive = false;
  assert.equal(statusRollup(dead, NOW).run.status, "runner_gone");
  assert.equal(statusRollup(dead, NOW).lease.state, "gone");
  assert.equal(
    statusRollup(inputs({ lock: null }), NOW).run.status,
    "runner_gone",
  );
});

Deno.test("a lock from another host reads as running there, and its agent cannot be checked", () => {
  const there = inputs({
    snapshot: snapshot({ host: "there" }),
    agent_alive: null,
  });
  there.lock!.info!.host = "there";
  const rollup = statusRollup(there, NOW);
  assert.equal(rollup.run.status, "running");
  assert.deepEqual(rollup.lease, {
    state: "other_host",
    pid: 1000,
    host: "there",
  });
  assert.equal(rollup.service.alive, null);
  assert.equal(rollup.run.elapsed_ms, 9000, "the other host's own count");
});

Deno.test("no cost reported anywhere is null, not zero; no agent pid means alive is null", () => {
  const rollup = statusRollup(
    inputs({
      snapshot: snapshot({ cost_usd: null, agent_pid: null }),
      state: state([attempt({ attempt: 2, mode: "run", status: "running" })]),
    }),
    NOW,
  );
  assert.equal(rollup.provider.cost_usd, null);
  assert.deepEqual(rollup.service, { agent_pid: null, alive: null });
  assert.equal(rollup.attempt.detail, null);
});

Deno.test("never run: every field present, unknowns null", () => {
  const rollup = statusRollup(
    inputs({
      snapshot: null,
      state: { v: 1, run_id: null, updated_at: null, prompts: {} },
      lock: null,
      last_event: null,
    }),
    NOW,
  );
  assert.equal(rollup.run.status, "never_run");
  assert.deepEqual(rollup.run, {
    id: null,
    status: "never_run",
    started_at: null,
    elapsed_ms: null,
    started_by: null,
  });
  assert.deepEqual(rollup.progress, {
    selected: null,
    completed: null,
    failed: null,
    current: { id: null, name: null },
  });
  assert.deepEqual(rollup.provider, {
    name: null,
    model: null,
    last_event_age_ms: null,
    input_tokens: null,
    output_tokens: null,
    cost_usd: null,
  });
});
