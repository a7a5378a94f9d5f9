import assert from "node:assert/strict";
import { followLog, log } from "../../../lib/control/read_log.ts";
import { writeRequest } from "../../../lib/control/request.ts";
import { RunLostError } from "../../../lib/shared/errors.ts";
import {
  appendText,
  makeControlRoot,
  promptStart,
  stillPendingAfter,
  writeSnapshotFile,
} from "../../_helpers/plane.ts";

function foreignEntry(runId: string, requestId: string): string {
  return JSON.stringify({
    v: 1,
    at: new Date().toISOString(),
    run_id: runId,
    request_id: requestId,
    command: "set_view",
    params: { diff: "none" },
    author: "someone",
    outcome: "applied",
    reason: null,
    prompt_id: null,
    attempt: null,
  }) + "\n";
}

Deno.test("log() returns only the entries of the run it names, oldest first", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  const a1 = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  const a2 = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "none",
  });
  await a.boundary({ idle: true });
  await a.close("completed");
  const b = await root.open("run-b");
  await b.promptStarted(promptStart());
  const b1 = await writeRequest(root.ref("run-b"), "steer", { text: "go" });
  await b.boundary({ idle: true });
  await b.close("completed");

  const ofA = await log(root.ref("run-a"));
  assert.deepEqual(ofA.map((e) => [e.run_id, e.request_id, e.outcome]), [
    ["run-a", a1.request_id, "applied"],
    ["run-a", a2.request_id, "applied"],
  ]);
  const ofB = await log(root.ref("run-b"));
  assert.ok(ofB.length > 0);
  assert.ok(ofB.every((e) => e.run_id === "run-b"));
  assert.ok(ofB.every((e) => e.request_id === b1.request_id));
});

Deno.test("log() of a run that was sent nothing is empty", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  assert.deepEqual(await log(root.ref("run-a")), []);
  await plane.close("completed");
});

Deno.test("log() skips a torn last line", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await writeRequest(root.ref("run-a"), "set_view", { diff: "full" });
  await plane.boundary({ idle: true });
  await appendText(root.paths.log, '{"v":1,"at":"2026-11-30T0');
  assert.equal((await log(root.ref("run-a"))).length, 1);
  await plane.close("completed");
});

Deno.test("followLog() yields the existing entries, then new ones, and ends when the run finishes", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const first = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.boundary({ idle: true });

  const iterator = followLog(root.ref("run-a"));
  assert.equal((await iterator.next()).value?.request_id, first.request_id);
  const next = iterator.next();
  // Another run's entry in the same log is not this run's.
  await appendText(root.paths.log, foreignEntry("run-z", "foreign"));
  const second = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "none",
  });
  await plane.boundary({ idle: true });
  const entry = (await next).value;
  assert.equal(entry?.request_id, second.request_id);
  assert.equal(entry?.outcome, "applied");

  const end = iterator.next();
  await plane.close("completed");
  assert.deepEqual(await end, { done: true, value: undefined });
});

Deno.test("followLog() waits for a log that does not exist yet", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const iterator = followLog(root.ref("run-a"));
  const next = iterator.next();
  assert.ok(await stillPendingAfter(next, 200));
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    thinking: "hide",
  });
  await plane.boundary({ idle: true });
  assert.equal((await next).value?.request_id, request_id);
  const end = iterator.next();
  await plane.close("completed");
  assert.equal((await end).done, true);
});

Deno.test("followLog() of a finished run yields its entries and ends", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.boundary({ idle: true });
  await plane.close("completed");
  const entries = await Array.fromAsync(followLog(root.ref("run-a")));
  assert.deepEqual(entries.map((e) => e.request_id), [request_id]);
});

Deno.test("followLog() fails with RunLostError when the runner is gone", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, {
    run_id: "run-a",
    updated_at: new Date(Date.now() - 60_000).toISOString(),
  });
  await appendText(root.paths.log, foreignEntry("run-a", "r1"));
  const seen: string[] = [];
  await assert.rejects(
    async () => {
      for await (const entry of followLog(root.ref("run-a"))) {
        seen.push(entry.request_id ?? "");
      }
    },
    (error: unknown) =>
      error instanceof RunLostError && /gone/.test(error.message),
  );
  assert.deepEqual(seen, ["r1"]);
});

Deno.test("followLog() ends quietly when its signal aborts", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const controller = new AbortController();
  const iterator = followLog(root.ref("run-a"), { signal: controller.signal });
  const next = iterator.next();
  controller.abort();
  assert.deepEqual(await next, { done: true, value: undefined });
  await plane.close("completed");
});

Deno.test("followLog() yields the rejections close() writes before it ends", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const iterator = followLog(root.ref("run-a"));
  const next = iterator.next();
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.close("interrupted");
  const entry = (await next).value;
  assert.equal(entry?.request_id, request_id);
  assert.equal(entry?.outcome, "rejected");
  assert.equal((await iterator.next()).done, true);
});
