/**
 * The Gemini CLI end to end: the real `gemini` (0.61.0) against the scripted
 * Gemini API server, first on its own (the dialect), then driven by a real
 * `prompt_runner run` process: tools that really change the repo, status,
 * a steer on the interrupt lane, auth, rate-limit and capacity failures, a
 * dropped stream and a hung server.
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
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

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

const VERIFY = `verify:
  files_exist: [hello.txt, seen.txt]
  contains: [{path: hello.txt, text: "hello\\nthere\\n"}, {path: seen.txt, text: "there"}]`;

/**
 * A packet for the fixture's CLI. `recovery` is the manifest's whole
 * `recovery:` value (flow YAML). The manifest is rewritten after
 * `makePacket()`, whose own names the simulated provider and a recovery.
 */
async function geminiPacket(
  fixture: AgentFixture,
  options: { recovery?: string; timeoutMs?: number; prompt?: string } = {},
): Promise<TempPacket> {
  const packet = await makePacket({
    prompts: {
      "01_hello.prompt.md": options.prompt ??
        promptFile(VERIFY, "Create hello.txt, fix it, and show it.\n"),
    },
  });
  const manifest = [
    "---",
    "name: gemini-packet",
    `provider: ${fixture.provider}`,
    `model: ${fixture.model}`,
    "repos:",
    "  app: {path: workspace, default: true}",
    `agent: ${JSON.stringify(fixture.agent)}`,
    `timeout_ms: ${options.timeoutMs ?? 60000}`,
    `recovery: ${
      options.recovery ??
        "{retry: {base_delay_ms: 0, max_delay_ms: 0}, repair: {enabled: false}}"
    }`,
    "---",
    "A packet for the Gemini CLI.",
    "",
  ].join("\n");
  await Deno.writeTextFile(
    join(packet.dir, "prompt_runner_packet.md"),
    manifest,
  );
  return packet;
}

async function stateOf(packet: TempPacket): Promise<Json> {
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
    await using packet = await geminiPacket(fixture);
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
