/**
 * The Gemini CLI end to end: the real `gemini` (0.61.0) against the scripted
 * Gemini API server, first on its own (the dialect), then driven by a real
 * `prompt_runner run` process on its `transport: stream_json` lane: tools
 * that really change the repo, status, a steer on the interrupt lane, auth,
 * rate-limit and capacity failures, a dropped stream and a hung server.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable, agentBin } from "../_helpers/agent_cli.ts";
import {
  GEMINI_TEST_MODEL,
  geminiFixture,
  geminiHome,
} from "../_helpers/agents/gemini.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { startGeminiServer } from "../_helpers/model_server/gemini.ts";
import type { ScriptedReply } from "../_helpers/model_server/server.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import {
  type AgentPacket,
  makeAgentPacket,
} from "../_helpers/agents/packet.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";

const ignore = !agentAvailable("gemini");

type Json = Record<string, unknown>;

/** The scripted conversation that writes, edits and reads `hello.txt`. */
const TOOL_SCRIPT: ScriptedReply[] = [
  {
    thinking: "The file does not exist yet.",
    text: "Creating the file.",
    tools: [{ kind: "write", path: "hello.txt", content: "hello\nworld\n" }],
    usage: { input_tokens: 100, output_tokens: 20 },
  },
  {
    text: "Fixing a word.",
    tools: [{ kind: "edit", path: "hello.txt", old: "world", new: "there" }],
    usage: { input_tokens: 200, output_tokens: 20 },
  },
  {
    tools: [{ kind: "shell", command: "cat hello.txt > seen.txt" }],
    usage: { input_tokens: 300, output_tokens: 20 },
  },
  { text: "All done.", usage: { input_tokens: 400, output_tokens: 10 } },
];

const VERIFY = {
  files_exist: ["hello.txt", "seen.txt"],
  contains: [
    { path: "hello.txt", text: "hello\nthere\n" },
    { path: "seen.txt", text: "there" },
  ],
};

/**
 * A packet under `dir` for the fixture's CLI on its stream_json lane (the
 * ACP lane, gemini's default, is `agent_acp_test.ts`); repairs are off.
 */
function geminiPacket(
  dir: string,
  fixture: AgentFixture,
  options: {
    verify?: Record<string, unknown>;
    body?: string;
    recovery?: Record<string, unknown>;
    timeout_ms?: number;
  } = {},
): Promise<AgentPacket> {
  const streamJson = {
    ...fixture,
    agent: { ...fixture.agent, transport: "stream_json" },
  };
  return makeAgentPacket(dir, streamJson, {
    verify: options.verify ?? VERIFY,
    body: options.body ?? "Create hello.txt, fix it, and show it.",
    recovery: { repair: { enabled: false }, ...options.recovery },
    timeout_ms: options.timeout_ms ?? 60_000,
  });
}

async function stateOf(packet: AgentPacket): Promise<Json> {
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  return state.prompts["01"] as Json;
}

function ofType(events: Json[], type: string): Json[] {
  return events.filter((e) => e.type === type);
}

function data(event: Json | undefined): Json {
  return (event?.data ?? {}) as Json;
}

/** The text of every part of every turn a request sent. */
function contentsText(body: unknown): string {
  const contents = (body as { contents?: { parts?: unknown[] }[] }).contents ??
    [];
  return JSON.stringify(contents);
}

/** The JSON chunks of an SSE body. */
function sseChunks(text: string): Json[] {
  return text.split(/\r?\n\r?\n/).filter((c) => c.startsWith("data: ")).map((
    c,
  ) => JSON.parse(c.slice("data: ".length)));
}

Deno.test("the Gemini dialect streams a scripted turn as SSE chunks (thought, text, calls, usage last) and answers side calls and errors in the API's shape", async () => {
  const server = await startGeminiServer([
    {
      thinking: "Plan.",
      text: "Two words.",
      tools: [{ kind: "shell", command: "ls" }],
      usage: { input_tokens: 7, output_tokens: 3 },
    },
    { status: 429 },
  ]);
  try {
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // The routing classifier of the `auto` model: a JSON side call.
    const side = await post(
      "/v1beta/models/gemini-3.5-flash-lite:generateContent",
      {
        contents: [],
        generationConfig: {
          responseMimeType: "application/json",
          responseJsonSchema: {
            type: "OBJECT",
            properties: {
              complexity_reasoning: { type: "STRING" },
              complexity_score: { type: "INTEGER" },
            },
          },
        },
      },
    );
    const sideBody = await side.json();
    const answer = JSON.parse(sideBody.candidates[0].content.parts[0].text);
    assert.equal(typeof answer.complexity_reasoning, "string");
    assert.equal(typeof answer.complexity_score, "number");
    const tokens = await post("/v1beta/models/m:countTokens", { contents: [] });
    assert.equal(typeof (await tokens.json()).totalTokens, "number");
    assert.equal(server.turns().length, 0);
    const turn = await post("/v1beta/models/m:streamGenerateContent?alt=sse", {
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
    });
    assert.match(turn.headers.get("content-type") ?? "", /text\/event-stream/);
    const chunks = sseChunks(await turn.text());
    const parts = chunks.flatMap((c) =>
      (c.candidates as { content: { parts: Json[] } }[])[0]!.content.parts
    );
    assert.deepEqual(parts[0], { thought: true, text: "Plan." });
    assert.equal(
      parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) =>
        p.text
      ).join(""),
      "Two words.",
    );
    assert.deepEqual(parts.at(-1), {
      functionCall: {
        name: "run_shell_command",
        args: { command: "ls", description: "Scripted command." },
      },
    });
    assert.deepEqual(chunks.at(-1)!.usageMetadata, {
      promptTokenCount: 7,
      candidatesTokenCount: 3,
      totalTokenCount: 10,
    });
    assert.ok(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined));
    const limited = await post(
      "/v1beta/models/m:streamGenerateContent?alt=sse",
      {},
    );
    assert.equal(limited.status, 429);
    assert.equal((await limited.json()).error.status, "RESOURCE_EXHAUSTED");
    assert.equal(server.turns().length, 2);
  } finally {
    await server.close();
  }
});

Deno.test({
  name:
    "the real gemini CLI holds a scripted conversation with the Gemini dialect: its tools really write, edit and run, and each turn carries the last",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_dialect_" });
  const server = await startGeminiServer(TOOL_SCRIPT);
  try {
    const env = await geminiHome(dir, server.url);
    const work = join(dir, "work");
    await Deno.mkdir(work);
    const output = await new Deno.Command(agentBin("gemini")!, {
      args: [
        "--prompt=Create hello.txt.",
        "--output-format",
        "stream-json",
        "--skip-trust",
        "-m",
        GEMINI_TEST_MODEL,
        "--approval-mode",
        "yolo",
      ],
      cwd: work,
      env: { PATH: Deno.env.get("PATH") ?? "", TMPDIR: dir, ...env },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.equal(
      await Deno.readTextFile(join(work, "hello.txt")),
      "hello\nthere\n",
    );
    assert.equal(
      (await Deno.readTextFile(join(work, "seen.txt"))).trim(),
      "hello\nthere",
    );
    const turns = server.turns();
    assert.equal(turns.length, 4);
    assert.ok(
      turns.every((t) =>
        t.path ===
          `/v1beta/models/${GEMINI_TEST_MODEL}:streamGenerateContent?alt=sse`
      ),
    );
    // Each turn resends the conversation: the prompt, then each call and its answer.
    assert.match(contentsText(turns[0]!.body), /Create hello\.txt\./);
    assert.match(contentsText(turns[1]!.body), /"functionCall".*write_file/);
    assert.match(contentsText(turns[1]!.body), /"functionResponse"/);
    assert.match(contentsText(turns[2]!.body), /replace/);
    assert.match(contentsText(turns[3]!.body), /hello\\nthere/);
    const result = JSON.parse(stdout.trimEnd().split("\n").at(-1)!);
    assert.equal(result.type, "result");
    assert.equal(result.status, "success");
    assert.equal(result.stats.input_tokens, 1000);
    assert.equal(result.stats.output_tokens, 70);
    assert.equal(result.stats.tool_calls, 3);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "prompt_runner runs gemini to a verified completion: write_file, replace and run_shell_command changed the repo; status shows its tokens and tool calls",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_e2e_" });
  const fixture = await geminiFixture(dir, TOOL_SCRIPT);
  try {
    const packet = await geminiPacket(dir, fixture);
    const run = startRun(packet.dir, [], { env: fixture.env });
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    assert.equal(
      await Deno.readTextFile(join(packet.workspace, "hello.txt")),
      "hello\nthere\n",
    );
    const started = ofType(done.events, "run_started");
    assert.equal(started.length, 1);
    assert.match(String(data(started[0]).session_id), /^[0-9a-f-]{36}$/);
    assert.equal(data(started[0]).model, GEMINI_TEST_MODEL);
    const tools = ofType(done.events, "tool_call_started").map((e) =>
      data(e).tool_name
    );
    assert.deepEqual(tools, ["write_file", "replace", "run_shell_command"]);
    assert.deepEqual(
      ofType(done.events, "message_received").map((e) => data(e).content),
      ["Creating the file.", "Fixing a word.", "All done."],
    );
    const verified = ofType(done.events, "verification_finished");
    assert.equal(data(verified[0]).passed, true);
    assert.equal(
      data(ofType(done.events, "run_finished")[0]).status,
      "completed",
    );
    const status = await runCli(["control", "status", packet.dir, "--json"]);
    assert.equal(status.code, 0, status.stderr);
    const snapshot = JSON.parse(status.stdout);
    assert.equal(snapshot.provider, "gemini");
    assert.equal(snapshot.input_tokens, 1000);
    assert.equal(snapshot.output_tokens, 70);
    assert.equal(snapshot.tool_count, 3);
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a steer mid-turn interrupts gemini and resumes its session with the steer: the model sees it after the earlier turns, under the same session id",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_steer_" });
  const fixture = await geminiFixture(dir, [
    {
      text: "Writing the first file.",
      tools: [{ kind: "write", path: "a.txt", content: "one\n" }],
      usage: { input_tokens: 100, output_tokens: 10 },
    },
    { text: "Still thinking.", delay_ms: 120_000 },
    {
      text: "Steer taken.",
      tools: [{ kind: "write", path: "b.txt", content: "two\n" }],
      usage: { input_tokens: 300, output_tokens: 10 },
    },
    { text: "Done.", usage: { input_tokens: 400, output_tokens: 5 } },
  ]);
  try {
    const packet = await geminiPacket(dir, fixture, {
      verify: { files_exist: ["a.txt", "b.txt"] },
      body: "Write a.txt.",
    });
    const run = startRun(packet.dir, [], { env: fixture.env });
    await waitFor(
      "the slow turn",
      () => Promise.resolve(fixture.server!.turns().length >= 2),
      45_000,
    );
    const steer = await runCli([
      "control",
      "steer",
      packet.dir,
      "Also write b.txt, please.",
    ]);
    assert.equal(steer.code, 0, steer.stderr);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    const started = ofType(done.events, "run_started");
    assert.equal(started.length, 2);
    const id = data(started[0]).session_id;
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.equal(data(started[1]).session_id, id);
    assert.equal(ofType(done.events, "prompt_steered").length, 1);
    const interventions = await readJsonl(
      join(packet.stateRoot, "interventions", "01.jsonl"),
    );
    assert.deepEqual(
      interventions.map((i) => [i.text, i.delivery]),
      [["Also write b.txt, please.", "interrupt_and_resume"]],
    );
    const turns = fixture.server!.turns();
    assert.equal(turns.length, 4);
    const steered = contentsText(turns[2]!.body);
    assert.match(steered, /Also write b\.txt, please\./);
    // The earlier turns' context: the prompt, and the first call and its answer.
    assert.match(steered, /Write a\.txt\./);
    assert.match(steered, /"functionCall".*write_file/);
    assert.ok(
      steered.indexOf("Write a.txt.") <
        steered.indexOf("Also write b.txt, please."),
    );
    assert.equal(
      await Deno.readTextFile(join(packet.workspace, "b.txt")),
      "two\n",
    );
    const prompt = await stateOf(packet);
    assert.equal(prompt.status, "completed");
    assert.equal(prompt.steered, true);
    const attempts = prompt.attempts as Json[];
    assert.equal(attempts.length, 1);
    const transcript = await Deno.readTextFile(
      join(packet.stateRoot, String(attempts[0]!.transcript)),
    );
    assert.match(transcript, new RegExp(`--resume ${id}`));
    assert.match(transcript, /SIGINT to the gemini CLI/);
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a 401 from the model API fails the prompt as provider_auth_claim at once: no retry",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_401_" });
  const fixture = await geminiFixture(dir, [{ status: 401 }, ...TOOL_SCRIPT]);
  try {
    const packet = await geminiPacket(dir, fixture, {
      // DESIGN §3: an auth claim is never retried unless class_attempts
      // says so, whatever max_attempts allows.
      recovery: {
        retry: { max_attempts: 3 },
        resume_attempts: 2,
      },
    });
    const done = await startRun(packet.dir, [], { env: fixture.env }).finish();
    assert.notEqual(done.code, 0);
    assert.equal(fixture.server!.turns().length, 1);
    assert.equal(ofType(done.events, "retry_scheduled").length, 0);
    const failed = ofType(done.events, "run_failed");
    assert.equal(failed.length, 1);
    const error = data(failed[0]).provider_error as Json;
    assert.equal(error.kind, "provider_auth_claim");
    assert.match(String(error.message), /UNAUTHENTICATED/);
    const prompt = await stateOf(packet);
    assert.equal(prompt.status, "failed");
    const attempts = prompt.attempts as Json[];
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.failure_class, "provider_auth_claim");
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a 429 then a 529 are retried as provider_rate_limit and provider_capacity, and the third attempt completes and verifies",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_429_" });
  const fixture = await geminiFixture(dir, [
    { status: 429 },
    { status: 529 },
    ...TOOL_SCRIPT,
  ]);
  try {
    const packet = await geminiPacket(dir, fixture, {
      recovery: { retry: { max_attempts: 3 } },
    });
    const done = await startRun(packet.dir, [], { env: fixture.env }).finish();
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(
      ofType(done.events, "retry_scheduled").map((e) => data(e).failure_class),
      ["provider_rate_limit", "provider_capacity"],
    );
    assert.equal(fixture.server!.turns().length, 2 + TOOL_SCRIPT.length);
    const prompt = await stateOf(packet);
    assert.equal(prompt.status, "completed");
    assert.deepEqual(
      (prompt.attempts as Json[]).map((a) => a.failure_class),
      ["provider_rate_limit", "provider_capacity", null],
    );
    assert.equal(
      await Deno.readTextFile(join(packet.workspace, "hello.txt")),
      "hello\nthere\n",
    );
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a stream dropped mid-answer is a transport_disconnect, resumed in the same gemini session, which then completes",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_drop_" });
  // The drop comes in the second turn: a session whose first turn failed at
  // the API holds nothing gemini can resume (exit 42).
  const [first, ...rest] = TOOL_SCRIPT;
  const fixture = await geminiFixture(dir, [first!, { drop: true }, ...rest]);
  try {
    const packet = await geminiPacket(dir, fixture, {
      recovery: { retry: { max_attempts: 0 }, resume_attempts: 1 },
    });
    const done = await startRun(packet.dir, [], { env: fixture.env }).finish();
    assert.equal(done.code, 0, done.stderr);
    const started = ofType(done.events, "run_started");
    assert.equal(started.length, 2);
    assert.equal(data(started[1]).session_id, data(started[0]).session_id);
    const failed = ofType(done.events, "run_failed");
    assert.equal(
      (data(failed[0]).provider_error as Json).kind,
      "transport_disconnect",
    );
    // The resumed session still holds the prompt and the first turn.
    const resumed = contentsText(fixture.server!.turns()[2]!.body);
    assert.match(resumed, /Create hello\.txt, fix it/);
    assert.match(resumed, /"functionCall".*write_file/);
    assert.equal(fixture.server!.turns().length, 2 + rest.length);
    assert.equal(
      await Deno.readTextFile(join(packet.workspace, "hello.txt")),
      "hello\nthere\n",
    );
    const prompt = await stateOf(packet);
    assert.equal(prompt.status, "completed");
    const attempts = prompt.attempts as Json[];
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.resumes, 1);
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "a hung model server: gemini is killed at timeout_ms, the prompt fails as transport_timeout, and no process it started is left",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemini_hang_" });
  const fixture = await geminiFixture(dir, [{ hang: true }]);
  try {
    const packet = await geminiPacket(dir, fixture, {
      timeout_ms: 8000,
      recovery: { retry: { max_attempts: 0 }, resume_attempts: 0 },
    });
    const run = startRun(packet.dir, [], { env: fixture.env });
    const watch = watchDescendants(run.child.pid);
    const done = await run.finish();
    const seen = await watch.stop();
    // A killed group's members are reaped within moments.
    for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.notEqual(done.code, 0);
    assert.equal(fixture.server!.turns().length, 1);
    // The watch saw the CLI itself (run_started names its pid).
    const agentPid = Number(data(ofType(done.events, "run_started")[0]).pid);
    assert.ok(seen.has(agentPid), `pid ${agentPid} among ${[...seen]}`);
    const prompt = await stateOf(packet);
    assert.equal(prompt.status, "failed");
    assert.equal(
      (prompt.attempts as Json[])[0]!.failure_class,
      "transport_timeout",
    );
    assert.deepEqual(watch.alive(), []);
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
});
