/**
 * No agent is left behind: processes an agent CLI leaves (a setsid
 * grandchild, a grandchild holding its output) are stopped, and never keep
 * a runner alive. Played by the `leaves_behind` fake CLI (under the amp
 * parser) and run by real `prompt_runner run` processes; every process a
 * test starts is killed when it ends, however it ends.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startRun } from "../_helpers/live_run.ts";
import { waitFor } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import {
  type FakeCli,
  leftPid,
  makeFakeCli,
} from "../_helpers/fake_cli/mod.ts";
import { processReaper } from "../_helpers/fake_cli/proc_tree.ts";

type Json = Record<string, unknown>;

const NO_RETRY =
  "recovery: {retry: {max_attempts: 0}, repair: {enabled: false}, resume_attempts: 0}";

/** A packet whose prompt 01 runs the `leaves_behind` fake in `mode`. */
async function leavingPacket(mode: string): Promise<
  Awaited<ReturnType<typeof makePacket>> & { fake: FakeCli }
> {
  const packet = await makePacket();
  const fake = await makeFakeCli(packet.root, "leaves_behind", {
    FAKE_LEAVE: mode,
  });
  await packet.writePrompt(
    "01_fake.prompt.md",
    promptFile(
      `provider: amp\nagent: {bin: ${JSON.stringify(fake.bin)}}\n${NO_RETRY}`,
    ),
  );
  return Object.assign(packet, { fake });
}

async function promptState(stateRoot: string): Promise<Json> {
  const state = JSON.parse(
    await Deno.readTextFile(join(stateRoot, "state.json")),
  );
  return state.prompts["01"] as Json;
}

async function transcript(stateRoot: string, attempt: number): Promise<string> {
  const entry = await promptState(stateRoot);
  const record = (entry.attempts as Json[]).find((a) => a.attempt === attempt);
  return await Deno.readTextFile(
    join(stateRoot, String(record?.transcript)),
  );
}

/** Waits for the pid the fake wrote of what it left behind. */
async function waitForLeft(fake: FakeCli): Promise<number> {
  return await waitFor("the fake's left-behind pid", () => leftPid(fake));
}

/** `promise`, or a failure naming `what` once `ms` pass. */
async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Timed out waiting ${ms} ms for ${what}`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a setsid grandchild (output redirected) the CLI left when its turn ended normally is killed at the attempt's end, and the transcript names it", async () => {
  await using packet = await leavingPacket("setsid");
  await using reaper = processReaper();
  const done = await startRun(packet.dir).finish();
  const left = reaper.track(await waitForLeft(packet.fake));
  assert.equal(done.code, 0, done.stderr);
  assert.equal((await promptState(packet.stateRoot)).status, "completed");
  await waitFor(
    "the setsid grandchild to be gone",
    () => Promise.resolve(reaper.alive([left]).length === 0),
    15_000,
  );
  assert.match(
    await transcript(packet.stateRoot, 1),
    new RegExp(
      `killed 1 process\\(es\\) the amp CLI left running: ${left} \\(sleep\\)`,
    ),
  );
});

for (const stream of ["stdout", "stderr"] as const) {
  Deno.test(`a grandchild out of the runner's reach that holds the CLI's ${stream} never keeps the runner alive after the run completed`, async () => {
    await using packet = await leavingPacket(`holds_${stream}`);
    await using reaper = processReaper();
    await using run = startRun(packet.dir);
    const finished = await run.until((e) => e.type === "run_finished");
    reaper.track(await waitForLeft(packet.fake));
    assert.equal((finished.data as Json).status, "completed");
    const status = await within(
      run.child.status,
      30_000,
      "the runner to exit after run_finished",
    );
    assert.equal(status.code, 0);
    // It escaped every sweep: only the test's reaper ends it.
    assert.equal(reaper.alive().length, 1);
  });
}
