/**
 * The amp provider end to end: the real `prompt_runner run` process drives
 * the fake `amp` (Amp's server protocol is proprietary, so nothing can
 * drive the real CLI past its login) through a whole packet, a live status,
 * and a steer; and the real `amp` without a key, whose login flow must end
 * the attempt at once with nothing left running.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import { makeAmpFixture } from "../_helpers/agents/amp.ts";
import { agentAvailable, agentBin } from "../_helpers/agent_cli.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import type { ScriptedReply } from "../_helpers/model_server/server.ts";

type Json = Record<string, unknown>;

/** A prompt run by amp through `bin`, with `extra` front matter lines. */
function ampPrompt(bin: string, extra: string, body: string): string {
  return promptFile(
    `provider: amp
agent: {bin: ${JSON.stringify(bin)}, permission_mode: allow_all}
${extra}`,
    body,
  );
}

async function readState(stateRoot: string): Promise<Json> {
  return JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")));
}

Deno.test("a packet on the fake amp runs its tools, verifies, and control status --json shows its tokens and tool count", async () => {
  await using packet = await makePacket();
  const replies: ScriptedReply[] = [
    {
      thinking: "Notes first.",
      text: "Writing the notes.",
      tools: [{ kind: "write", path: "NOTES.md", content: "hello world\n" }],
      usage: { input_tokens: 100, output_tokens: 10 },
    },
    {
      tools: [
        { kind: "edit", path: "NOTES.md", old: "world", new: "there" },
        { kind: "shell", command: "cat NOTES.md" },
      ],
      usage: { input_tokens: 200, output_tokens: 20 },
    },
    // A slow last turn, so the status can be read while the run is live.
    {
      text: "Done.",
      usage: { input_tokens: 300, output_tokens: 30 },
      delay_ms: 1500,
    },
  ];
  const amp = await makeAmpFixture(packet.root, replies);
  await packet.writePrompt(
    "01_notes.prompt.md",
    ampPrompt(
      amp.fake.bin,
      'verify: {contains: [{path: NOTES.md, text: "hello there"}]}',
      "Write NOTES.md.\n",
    ),
  );
  const run = startRun(packet.dir, [], { env: amp.env });
  const status = await waitFor("a live status with three tools", async () => {
    const result = await runCli(["control", "status", packet.dir, "--json"]);
    if (result.code !== 0) return null;
    const parsed = JSON.parse(result.stdout) as Json;
    return Number(parsed.tool_count) >= 3 ? parsed : null;
  });
  assert.equal(status.provider, "amp");
  assert.equal(status.tool_count, 3);
  assert.ok(Number(status.input_tokens) >= 300, JSON.stringify(status));
  assert.ok(Number(status.output_tokens) >= 30, JSON.stringify(status));
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.equal(
    await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
    "hello there\n",
  );
  const types = done.events.map((e) => e.type);
  assert.ok(types.includes("run_completed"));
  const verified = done.events.find((e) => e.type === "verification_finished")!;
  assert.equal((verified.data as Json).passed, true);
  const usage = done.events.filter((e) => e.type === "token_usage_updated")
    .at(-1)!.data as Json;
  assert.deepEqual(usage, {
    input_tokens: 600,
    output_tokens: 60,
    total_tokens: 660,
  });
  const tools = done.events.filter((e) => e.type === "tool_call_started")
    .map((e) => (e.data as Json).tool_name);
  assert.deepEqual(tools, ["Write", "Edit", "Bash"]);
  const thinking = done.events.find((e) =>
    e.type === "message_streamed" && (e.data as Json).kind === "thinking"
  );
  assert.equal((thinking?.data as Json).delta, "Notes first.");
  const after = await runCli(["control", "status", packet.dir, "--json"]);
  const final = JSON.parse(after.stdout) as Json;
  assert.equal(final.tool_count, 3);
  assert.equal(final.input_tokens, 600);
  assert.equal(final.output_tokens, 60);
  const [call] = await amp.fake.invocations();
  assert.equal(call!.cwd, packet.workspace);
  assert.deepEqual(call!.argv, [
    "--execute=Write NOTES.md.\n",
    "--stream-json",
    "--stream-json-thinking",
    "--dangerously-allow-all",
  ]);
  await amp.close();
});

Deno.test("a steer mid-turn interrupts the fake amp and continues its thread with the steer, under the same session id", async () => {
  await using packet = await makePacket();
  const amp = await makeAmpFixture(packet.root, [
    {
      text: "Starting.",
      tools: [{ kind: "write", path: "a.txt", content: "a\n" }],
    },
    // The slow turn the steer interrupts.
    { text: "Thinking for a long time.", delay_ms: 60_000 },
    {
      text: "Steered.",
      tools: [{ kind: "write", path: "steered.txt", content: "tabs\n" }],
    },
  ]);
  await packet.writePrompt(
    "01_steer.prompt.md",
    ampPrompt(
      amp.fake.bin,
      "verify: {files_exist: [a.txt, steered.txt]}",
      "Write a.txt.\n",
    ),
  );
  const run = startRun(packet.dir, [], { env: amp.env });
  const first = await run.until((e) => e.type === "run_started");
  await run.until((e) => e.type === "tool_call_completed");
  // The slow reply is taken once the tool's result went back.
  await waitFor("the slow turn", async () => {
    const state = JSON.parse(
      await Deno.readTextFile(join(amp.fake.dir, "state.json")),
    );
    return state.next >= 2;
  });
  const steer = await runCli([
    "control",
    "steer",
    packet.dir,
    "use",
    "tabs",
  ]);
  assert.equal(steer.code, 0, steer.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const sessionId = (first.data as Json).session_id as string;
  assert.match(sessionId, /^T-[0-9a-f-]{36}$/);
  const started = done.events.filter((e) => e.type === "run_started");
  assert.equal(started.length, 2);
  assert.ok(started.every((e) => (e.data as Json).session_id === sessionId));
  const calls = await amp.fake.invocations();
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[1]!.argv.slice(0, 3), [
    "threads",
    "continue",
    sessionId,
  ]);
  assert.ok(calls[1]!.argv[3]!.startsWith("--execute=use tabs"));
  assert.ok(calls[1]!.argv.includes("--stream-json"));
  const interventions = await readJsonl(
    join(packet.stateRoot, "interventions", "01.jsonl"),
  );
  assert.equal(interventions.length, 1);
  assert.equal(interventions[0]!.delivery, "interrupt_and_resume");
  assert.equal(
    await Deno.readTextFile(join(packet.workspace, "steered.txt")),
    "tabs\n",
  );
  const state = await readState(packet.stateRoot);
  const result = (state.prompts as Json)["01"] as Json;
  assert.equal(result.status, "completed");
  assert.equal(result.steer_count, 1);
  const [attempt] = result.attempts as Json[];
  const transcript = await Deno.readTextFile(
    join(packet.stateRoot, attempt!.transcript as string),
  );
  assert.match(transcript, /SIGINT to the amp CLI/);
  assert.ok(
    !/Thinking for a long time/.test(JSON.stringify(done.events)),
    "the interrupted turn never answered",
  );
  await amp.close();
});

Deno.test({
  name:
    "the real amp without a key fails at once with provider_auth_claim, not at the timeout, and leaves no process",
  ignore: !agentAvailable("amp"),
  async fn(): Promise<void> {
    await using packet = await makePacket();
    const home = join(packet.root, "home");
    await Deno.mkdir(home);
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    await packet.writePrompt(
      "01_login.prompt.md",
      promptFile(
        `provider: amp
agent: {bin: ${JSON.stringify(agentBin("amp"))}}
timeout_ms: 600000
recovery: {retry: {max_attempts: 0}, repair: {enabled: false}}`,
        "Say hi.\n",
      ),
    );
    const run = startRun(packet.dir, [], {
      env: { HOME: home, AMP_URL: `http://127.0.0.1:${port}` },
      unsetEnv: ["AMP_API_KEY"],
    });
    const watch = watchDescendants(run.child.pid);
    const done = await run.finish();
    await watch.stop();
    assert.notEqual(done.code, 0);
    const failed = done.events.find((e) => e.type === "run_failed");
    assert.equal(
      ((failed?.data as Json).provider_error as Json | undefined)?.kind ??
        (failed?.data as Json).error_code,
      "provider_auth_claim",
    );
    const state = await readState(packet.stateRoot);
    const result = (state.prompts as Json)["01"] as Json;
    assert.equal(result.failure_class, "provider_auth_claim");
    assert.ok(watch.pids.size >= 1, "amp was seen running");
    assert.deepEqual(watch.alive(), []);
  },
});

const FAILURES: [string, ScriptedReply, string, RegExp][] = [
  [
    "a 401 (stderr, exit 1)",
    { status: 401 },
    "provider_auth_claim",
    /Invalid or missing API key/,
  ],
  [
    "a 429 (an error result)",
    { status: 429 },
    "provider_rate_limit",
    /429 rate limit exceeded/,
  ],
  [
    "a dropped stream (half a line, exit 1)",
    { drop: true },
    "transport_disconnect",
    /Cannot reach Amp servers/,
  ],
];

for (const [what, reply, failureClass, message] of FAILURES) {
  Deno.test(`the fake amp's ${what} fails the prompt as ${failureClass} with Amp's words`, async () => {
    await using packet = await makePacket();
    const amp = await makeAmpFixture(packet.root, [reply]);
    await packet.writePrompt(
      "01_fail.prompt.md",
      ampPrompt(
        amp.fake.bin,
        "recovery: {resume_attempts: 0, retry: {max_attempts: 0}, repair: {enabled: false}}",
        "Say hi.\n",
      ),
    );
    const done = await startRun(packet.dir, [], { env: amp.env }).finish();
    assert.notEqual(done.code, 0);
    const state = await readState(packet.stateRoot);
    const result = (state.prompts as Json)["01"] as Json;
    assert.equal(result.status, "failed");
    assert.equal(result.failure_class, failureClass);
    assert.match(String(result.reason), message);
    assert.equal((await amp.fake.invocations()).length, 1);
    await amp.close();
  });
}
