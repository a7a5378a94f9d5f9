import assert from "node:assert/strict";
import { join } from "node:path";
import {
  isRunEndReason,
  runEndedReason,
  RUNNER_STOPPED_REASON,
  runReplacedReason,
} from "../../../lib/control/_run_end_reason.ts";
import type { ControlPlane } from "../../../lib/control/plane.ts";
import { requestOutcome } from "../../../lib/control/request_outcome.ts";
import { setView } from "../../../lib/control/set_view.ts";
import { steer } from "../../../lib/control/steer.ts";
import {
  waitForOutcome,
  type WaitResult,
} from "../../../lib/control/wait_for_outcome.ts";
import { NotFoundError, UsageError } from "../../../lib/shared/errors.ts";
import type { SteerCommand } from "../../../lib/shared/run_hooks.ts";
import { acquireRunLock, type RunLock } from "../../../lib/shared/run_lock.ts";
import { MemoryTransport } from "../../_helpers/memory_transport.ts";
import {
  type ControlRoot,
  makeControlRoot,
  promptStart,
  testSnapshot,
} from "../../_helpers/plane.ts";

/** A live run in-process: its plane and its run lock, as a runner holds them. */
interface LiveRun {
  plane: ControlPlane;
  lock: RunLock;
}

async function openRun(root: ControlRoot, runId: string): Promise<LiveRun> {
  const plane = await root.open(runId);
  const lock = await acquireRunLock(root.stateRoot, runId);
  await plane.promptStarted(promptStart());
  return { plane, lock };
}

/** The run ends as a runner ends it: the plane closes, then the lock goes. */
async function endRun(run: LiveRun): Promise<void> {
  await run.plane.close("completed");
  await run.lock.release();
}

/** Whether `promise` is still pending once the tasks queued now have run. */
async function stillPending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol("pending");
  const first = await Promise.race([
    promise,
    new Promise((resolve) => setTimeout(() => resolve(marker), 50)),
  ]);
  return first === marker;
}

Deno.test("waitForOutcome() returns applied with the set_view entry once the plane consumes the request", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const { request_id } = await setView(ref, { thinking: "hide" }, {
      author: "ada",
    });
    const waiting = waitForOutcome(ref, request_id);
    await run.plane.boundary({ idle: true });
    const result = await waiting;
    assert.equal(result.outcome, "applied");
    assert.equal(result.reason, null);
    assert.equal(result.entry?.request_id, request_id);
    assert.equal(result.entry?.command, "set_view");
    assert.equal(result.entry?.outcome, "applied");
    assert.equal(result.entry?.author, "ada");
    assert.deepEqual(result.entry?.params, { thinking: "hide" });
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() does not end at a steer's accepted: it returns applied once the lane delivers it", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const { request_id } = await steer(ref, "keep it short");
    const waiting = waitForOutcome(ref, request_id);
    const [command] = await run.plane.boundary({ idle: true });
    assert.equal(command?.command, "steer");
    assert.equal((await requestOutcome(ref, request_id)).outcome, "accepted");
    assert.ok(await stillPending(waiting), "accepted is not final");
    await run.plane.steerSettled({
      command: command as SteerCommand,
      delivered: true,
      delivery: "send_input",
      mechanism: "simulated",
      attempt: 1,
      provider: "simulated",
    });
    const result = await waiting;
    assert.equal(result.outcome, "applied");
    assert.equal(result.entry?.outcome, "applied");
    assert.equal(result.entry?.params.delivery, "send_input");
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() returns rejected with the reason for a steer to a prompt that is not running, and for one its lane refuses", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const wrong = await steer(ref, "for the next one", { promptId: "02" });
    const waitingWrong = waitForOutcome(ref, wrong.request_id);
    await run.plane.boundary({ idle: true });
    const first = await waitingWrong;
    assert.equal(first.outcome, "rejected");
    assert.equal(
      first.reason,
      "the steer is for prompt 02, but prompt 01 is running",
    );
    assert.equal(first.entry?.outcome, "rejected");

    const refused = await steer(ref, "too late");
    const waitingRefused = waitForOutcome(ref, refused.request_id);
    const [command] = await run.plane.boundary({ idle: true });
    await run.plane.steerSettled({
      command: command as SteerCommand,
      delivered: false,
      reason:
        "prompt 01 finished (completed) before the steer could be delivered",
      attempt: 1,
      provider: "simulated",
    });
    const second = await waitingRefused;
    assert.equal(second.outcome, "rejected", "its prompt ended, not the run");
    assert.match(String(second.reason), /^prompt 01 finished/);
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() says run_ended when the run closes with the request still waiting: the entry is the refusal the run logged as it closed", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  const ref = root.ref("run-a");
  const { request_id } = await setView(ref, { diff: "full" });
  const waiting = waitForOutcome(ref, request_id);
  await endRun(run);
  const result = await waiting;
  assert.equal(result.outcome, "run_ended");
  assert.equal(result.entry?.outcome, "rejected");
  assert.equal(result.reason, runEndedReason("completed"));
});

Deno.test("waitForOutcome() says run_ended for a steer accepted and never delivered when the run closes", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  const ref = root.ref("run-a");
  const { request_id } = await steer(ref, "never delivered");
  const waiting = waitForOutcome(ref, request_id);
  await run.plane.boundary({ idle: true });
  await endRun(run);
  const result = await waiting;
  assert.equal(result.outcome, "run_ended");
  assert.equal(result.entry?.outcome, "rejected");
  assert.equal(result.reason, RUNNER_STOPPED_REASON);
});

Deno.test("waitForOutcome() says run_ended, naming the runner gone, when the runner dies before the request is taken", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  const ref = root.ref("run-a");
  const { request_id } = await setView(ref, { diff: "full" });
  const waiting = waitForOutcome(ref, request_id);
  // As after a SIGKILL: the plane stops where it is, and run.lock keeps its
  // record while no process holds its kernel lock any more.
  await run.plane.abandon();
  const record = await Deno.readTextFile(join(root.stateRoot, "run.lock"));
  await run.lock.release();
  await Deno.writeTextFile(join(root.stateRoot, "run.lock"), record);
  const result = await waiting;
  assert.equal(result.outcome, "run_ended");
  assert.equal(result.entry, null);
  assert.match(String(result.reason), /runner of run run-a .* is gone/);
});

Deno.test("waitForOutcome() returns timed_out with the request still pending, and the request is applied later", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const { request_id } = await setView(ref, { thinking: "hide" });
    const result = await waitForOutcome(ref, request_id, { timeoutMs: 100 });
    assert.deepEqual(result, {
      outcome: "timed_out",
      entry: null,
      reason: "pending",
    });
    await run.plane.boundary({ idle: true });
    assert.equal((await waitForOutcome(ref, request_id)).outcome, "applied");
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() times out on an accepted steer with its accepted entry", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const { request_id } = await steer(ref, "waiting for the lane");
    await run.plane.boundary({ idle: true });
    const result = await waitForOutcome(ref, request_id, { timeoutMs: 100 });
    assert.equal(result.outcome, "timed_out");
    assert.equal(result.reason, "accepted");
    assert.equal(result.entry?.outcome, "accepted");
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() of a request already final answers at once, after the run ended", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  const ref = root.ref("run-a");
  const { request_id } = await setView(ref, { thinking: "hide" });
  await run.plane.boundary({ idle: true });
  await endRun(run);
  const result = await waitForOutcome(ref, request_id);
  assert.equal(result.outcome, "applied");
  assert.equal(result.entry?.command, "set_view");
});

Deno.test("waitForOutcome() refuses an unknown request with NotFoundError, and a time limit that is not positive with UsageError", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    await assert.rejects(
      waitForOutcome(ref, "20261130T025200123Z-nosuchidxx"),
      NotFoundError,
    );
    for (const timeoutMs of [0, -5, Number.NaN, Infinity]) {
      await assert.rejects(
        waitForOutcome(ref, "x", { timeoutMs }),
        (error: unknown) =>
          error instanceof UsageError && /Invalid time limit/.test(
            error.message,
          ),
      );
    }
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() ends with the signal's reason when its signal aborts", async () => {
  await using root = await makeControlRoot();
  const run = await openRun(root, "run-a");
  try {
    const ref = root.ref("run-a");
    const { request_id } = await setView(ref, { thinking: "hide" });
    const abort = new AbortController();
    const waiting = waitForOutcome(ref, request_id, { signal: abort.signal });
    abort.abort(new Error("stopped by the test"));
    await assert.rejects(waiting, /stopped by the test/);
  } finally {
    await endRun(run);
  }
});

Deno.test("waitForOutcome() works over another transport: applied when decided, run_ended when its runner dies", async () => {
  const transport = new MemoryTransport();
  const address = "mem:root";
  transport.open(address, testSnapshot(address, { run_id: "run-m" }));
  const ref = { state_root: address, run_id: "run-m", transport };
  const sent = await setView(ref, { thinking: "hide" });
  const waiting = waitForOutcome(ref, sent.request_id);
  transport.decide(address, "run-m");
  const applied: WaitResult = await waiting;
  assert.equal(applied.outcome, "applied");
  assert.equal(applied.entry?.request_id, sent.request_id);

  const lost = await setView(ref, { diff: "none" });
  const waitingLost = waitForOutcome(ref, lost.request_id);
  transport.die(address, "run-m");
  const result = await waitingLost;
  assert.equal(result.outcome, "run_ended");
  assert.match(String(result.reason), /is gone/);
});

Deno.test("isRunEndReason() knows the refusals a run's end writes, and no other", () => {
  for (
    const reason of [
      runEndedReason("completed"),
      runEndedReason("interrupted"),
      runReplacedReason("run-a", "run-b"),
      runReplacedReason("run-a", null),
      RUNNER_STOPPED_REASON,
    ]
  ) assert.ok(isRunEndReason(reason), reason);
  for (
    const reason of [
      null,
      "prompt 01 finished (completed) before the steer could be delivered",
      "steer budget spent: 3/3 for prompt 01 in this run (raise recovery.max_steers to allow more)",
      "the steer is for prompt 02, but prompt 01 is running",
      `x ${runEndedReason("completed")}`,
    ]
  ) assert.ok(!isRunEndReason(reason), String(reason));
});
