/**
 * What a real agent CLI cannot be made to do on demand, played by fake CLIs
 * under the amp parser (`provider: amp`, `agent.bin` = the fake) and run
 * by the real `prompt_runner run` process: garbage on stdout, a crash in
 * the middle of a line, and a stream that never ends and ignores SIGINT.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startRun } from "../_helpers/live_run.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import {
  fakeChildren,
  type FakeKind,
  makeFakeCli,
} from "../_helpers/fake_cli/mod.ts";
import {
  descendantPids,
  livingPids,
  watchDescendants,
} from "../_helpers/fake_cli/proc_tree.ts";

type Json = Record<string, unknown>;

const NO_RETRY =
  "recovery: {retry: {max_attempts: 0}, repair: {enabled: false}";

/** A packet whose prompt 01 runs `kind` under the amp parser. */
async function fakePacket(
  kind: FakeKind,
  frontMatter: string,
  env: Record<string, string> = {},
): Promise<
  Awaited<ReturnType<typeof makePacket>> & {
    fake: Awaited<ReturnType<typeof makeFakeCli>>;
  }
> {
  const packet = await makePacket();
  const fake = await makeFakeCli(packet.root, kind, env);
  await packet.writePrompt(
    "01_fake.prompt.md",
    promptFile(
      `provider: amp
agent: {bin: ${JSON.stringify(fake.bin)}}
${frontMatter}`,
      "Do the task.\n",
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

async function transcripts(stateRoot: string, result: Json): Promise<string> {
  const texts = [];
  for (const attempt of result.attempts as Json[]) {
    if (typeof attempt.transcript !== "string") continue;
    texts.push(await Deno.readTextFile(join(stateRoot, attempt.transcript)));
  }
  return texts.join("\n");
}

Deno.test("descendantPids finds a grandchild, and watchDescendants still reports it after it died", async () => {
  const child = new Deno.Command("bash", {
    args: ["-c", "sleep 30 & echo $!; wait"],
    stdin: "null",
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  const grandchild = Number((await reader.read()).value!.trim());
  const watch = watchDescendants(child.pid);
  assert.deepEqual(descendantPids(child.pid), [grandchild]);
  Deno.kill(grandchild, "SIGKILL");
  await child.status;
  await reader.cancel();
  const seen = await watch.stop();
  assert.ok(seen.has(grandchild));
  assert.deepEqual(watch.alive(), []);
  assert.deepEqual(livingPids([grandchild]), []);
});

Deno.test("garbage on stdout never crashes the run: it completes, verifies, and the transcript keeps the lines that are not JSON", async () => {
  await using packet = await fakePacket(
    "garbage_lines",
    `verify: {files_exist: [garbage_ok.txt]}\n${NO_RETRY}}`,
  );
  const done = await startRun(packet.dir).finish();
  assert.equal(done.code, 0, done.stderr);
  const result = await promptState(packet.stateRoot);
  assert.equal(result.status, "completed");
  const types = done.events.map((e) => e.type);
  assert.ok(types.includes("run_completed"));
  assert.ok(!types.includes("run_failed"));
  const said = done.events.filter((e) => e.type === "message_received")
    .map((e) => (e.data as Json).content);
  assert.deepEqual(said, ["Survived the garbage."]);
  const transcript = await transcripts(packet.stateRoot, result);
  assert.match(transcript, /this line is not JSON at all/);
  assert.match(transcript, /xxxxxxxxxxxxxxxx/);
});

Deno.test("a crash mid-line is a transport_disconnect carrying the exit code and stderr's last lines, and the thread is resumed", async () => {
  await using packet = await fakePacket(
    "crash_midline",
    `verify: {files_exist: [resumed.txt]}
recovery: {resume_attempts: 1, retry: {max_attempts: 0}, repair: {enabled: false}}`,
  );
  const done = await startRun(packet.dir).finish();
  assert.equal(done.code, 0, done.stderr);
  const resumed = done.events.filter((e) => e.type === "session_resumed");
  assert.equal(resumed.length, 1);
  assert.equal(
    (resumed[0]!.data as Json).failure_class,
    "transport_disconnect",
  );
  const calls = await packet.fake.invocations();
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[1]!.argv.slice(0, 3), [
    "threads",
    "continue",
    "T-00000000-0000-4000-8000-000000000002",
  ]);
  const failed = done.events.find((e) => e.type === "run_failed");
  const message = String((failed?.data as Json).error_message);
  assert.match(message, /code 1\b/);
  assert.match(message, /stream reset by peer/);
  assert.match(message, /giving up after the crash/);
  const result = await promptState(packet.stateRoot);
  assert.equal(result.status, "completed");
});

Deno.test("a CLI that always crashes mid-line is resumed resume_attempts times, then fails as transport_disconnect", async () => {
  await using packet = await fakePacket(
    "crash_midline",
    `recovery: {resume_attempts: 2, retry: {max_attempts: 0}, repair: {enabled: false}}`,
    { FAKE_CRASH_ALWAYS: "1" },
  );
  const done = await startRun(packet.dir).finish();
  assert.notEqual(done.code, 0);
  assert.equal((await packet.fake.invocations()).length, 3);
  const result = await promptState(packet.stateRoot);
  assert.equal(result.status, "failed");
  assert.equal(result.failure_class, "transport_disconnect");
  assert.match(String(result.reason), /stream reset by peer|giving up/);
});

Deno.test("a stream that never ends and ignores SIGINT is killed at timeout_ms as transport_timeout, leaving no process", async () => {
  await using packet = await fakePacket(
    "never_ends",
    `timeout_ms: 1500\n${NO_RETRY}}`,
  );
  const run = startRun(packet.dir);
  const watch = watchDescendants(run.child.pid);
  const done = await run.finish();
  const seen = await watch.stop();
  assert.notEqual(done.code, 0);
  const result = await promptState(packet.stateRoot);
  assert.equal(result.failure_class, "transport_timeout");
  const [fake] = await packet.fake.invocations();
  const [sleeper] = await fakeChildren(packet.fake);
  assert.ok(seen.has(fake!.pid), "the fake was seen under the runner");
  assert.ok(seen.has(sleeper!), "its child sleep was seen under the runner");
  assert.deepEqual(watch.alive(), []);
  assert.deepEqual(livingPids([fake!.pid, sleeper!]), []);
  // It ignored SIGINT: only the SIGKILL after the grace period ended it.
  const transcript = await transcripts(packet.stateRoot, result);
  assert.match(transcript, /SIGINT[^]*SIGKILL/);
});
