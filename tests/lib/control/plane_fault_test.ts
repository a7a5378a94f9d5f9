import assert from "node:assert/strict";
import { openPlane } from "../../../lib/control/plane.ts";
import type { FaultStep } from "../../../lib/control/plane.ts";
import {
  makeControlRoot,
  promptStart,
  requestJson,
  runInfo,
  writeRawRequest,
} from "../../_helpers/plane.ts";

Deno.test("openPlane() calls an injected fault hook at each step of a request's processing, in order", async () => {
  await using root = await makeControlRoot();
  const steps: FaultStep[] = [];
  const plane = await openPlane(
    root.stateRoot,
    runInfo("run-a", root.stateRoot),
    { fault: (step) => steps.push(step) },
  );
  try {
    await plane.promptStarted(promptStart());
    const id = "20261130T025200123Z-faulthook0";
    await writeRawRequest(
      root.paths,
      `${id}.json`,
      requestJson(id, "run-a", "set_view", { diff: "full" }),
    );
    const commands = await plane.boundary({ idle: false });
    assert.deepEqual(commands.map((c) => c.request_id), [id]);
    assert.deepEqual(steps, [
      "request_decided",
      "receipt_written",
      "log_written",
      "request_deleted",
    ]);
  } finally {
    await plane.close("completed");
  }
});

Deno.test("a fault hook that stops processing at receipt_written leaves the receipt for the next plane to finish, applied once", async () => {
  await using root = await makeControlRoot();
  const id = "20261130T025200123Z-faulthook1";
  const first = await openPlane(
    root.stateRoot,
    runInfo("run-a", root.stateRoot),
    {
      fault: (step) => {
        if (step === "receipt_written") throw new Error("stopped here");
      },
    },
  );
  await first.promptStarted(promptStart());
  await writeRawRequest(
    root.paths,
    `${id}.json`,
    requestJson(id, "run-a", "set_view", { tool_output: "full" }),
  );
  assert.deepEqual(await first.boundary({ idle: false }), []);
  await first.abandon();
  const second = await openPlane(
    root.stateRoot,
    runInfo("run-a", root.stateRoot),
  );
  try {
    assert.deepEqual(second.opened.view, { tool_output: "full" });
    const log = (await Deno.readTextFile(root.paths.log)).trim().split("\n")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.request_id === id);
    assert.deepEqual(log.map((entry) => entry.outcome), ["applied"]);
  } finally {
    await second.close("completed");
  }
});

Deno.test("close() gives a steer accepted and never settled its final rejected entry at once", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const id = "20261130T025200123Z-unsettled0";
  await writeRawRequest(
    root.paths,
    `${id}.json`,
    requestJson(id, "run-a", "steer", { text: "too late" }),
  );
  assert.equal((await plane.boundary({ idle: false })).length, 1);
  await plane.close("interrupted");
  const log = (await Deno.readTextFile(root.paths.log)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.request_id === id);
  assert.deepEqual(log.map((entry) => entry.outcome), ["accepted", "rejected"]);
  assert.match(log[1].reason, /stopped before the steer could be delivered/);
});
