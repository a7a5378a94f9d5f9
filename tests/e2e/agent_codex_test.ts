/**
 * The real `codex` CLI (0.171.0) against the scripted Responses API server,
 * on the `exec` lane (`agent.transport: exec`; the default app-server lane
 * is `agent_codex_live_test.ts`): first the dialect alone (codex really
 * runs its tools), then the real `prompt_runner run` process driving
 * `codex exec --json` — verify, studio rendering, the
 * control plane's counts, a steer on the interrupt lane, failure classes
 * and recovery, and the timeout that leaves no process behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable, agentBin } from "../_helpers/agent_cli.ts";
import {
  CODEX_DUMMY_KEY,
  CODEX_TEST_MODEL,
  codexConfig,
  codexExecFixture,
} from "../_helpers/agents/codex.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { makeAgentPacket } from "../_helpers/agents/packet.ts";
import type { ScriptedReply } from "../_helpers/model_server/server.ts";
import { startOpenAiServer } from "../_helpers/model_server/openai.ts";
import { startRun } from "../_helpers/live_run.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { codexProfile } from "../../lib/providers/codex.ts";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../lib/packet/agent_options.ts";
import type { ProviderEvent } from "../../lib/shared/events.ts";

const ignore = !agentAvailable("codex");

type Json = Record<string, unknown>;

/** Runs codex itself (no runner) with the profile's argv; stdin closed. */
async function runCodex(
  dir: string,
  config: Record<string, string | number>,
  model: string | null = CODEX_TEST_MODEL,
  options: Partial<AgentOptions> = {},
): Promise<{ code: number; lines: Json[]; events: ProviderEvent[] }> {
  const home = join(dir, "home");
  const work = join(dir, "work");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(work, { recursive: true });
  const args = codexProfile.startArgs({
    text: "Create hello.txt, then fix it.",
    cwd: work,
    model,
    options: { ...DEFAULT_AGENT_OPTIONS, ...options, config },
    liveInput: false,
  });
  const output = await new Deno.Command(
    agentBin("codex")!,
    {
      args,
      cwd: work,
      clearEnv: true,
      env: {
        HOME: home,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        OPENAI_API_KEY: CODEX_DUMMY_KEY,
        CODEX_API_KEY: CODEX_DUMMY_KEY,
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    },
  ).output();
  const parser = codexProfile.parser();
  const lines: Json[] = [];
  const events: ProviderEvent[] = [];
  for (const text of new TextDecoder().decode(output.stdout).split("\n")) {
    if (!text.startsWith("{")) continue;
    const json = JSON.parse(text);
    lines.push(json);
    events.push(...parser.line(text, json).events);
  }
  return { code: output.code, lines, events };
}

const CONVERSATION: ScriptedReply[] = [
  {
    thinking: "I should create the file first.",
    text: "Creating the file.",
    tools: [{ kind: "write", path: "hello.txt", content: "hello\nworld\n" }],
    usage: { input_tokens: 100, output_tokens: 20 },
  },
  {
    tools: [{ kind: "edit", path: "hello.txt", old: "world", new: "there" }],
    usage: { input_tokens: 150, output_tokens: 10 },
  },
  {
    tools: [{ kind: "shell", command: "cat hello.txt > copy.txt" }],
    usage: { input_tokens: 200, output_tokens: 10 },
  },
  { text: "All done.", usage: { input_tokens: 250, output_tokens: 5 } },
];

Deno.test({
  name:
    "the real codex runs a scripted conversation: apply_patch writes and edits, exec_command runs, the server sees each tool's output",
  ignore,
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const server = await startOpenAiServer(CONVERSATION);
      try {
        const { code, events } = await runCodex(
          dir,
          codexConfig(server.url),
          CODEX_TEST_MODEL,
          { reasoning_effort: "high" },
        );
        assert.equal(code, 0);
        assert.deepEqual((server.turns()[0]!.body as Json).reasoning, {
          effort: "high",
        });
        const work = join(dir, "work");
        assert.equal(
          await Deno.readTextFile(join(work, "hello.txt")),
          "hello\nthere\n",
        );
        assert.equal(
          await Deno.readTextFile(join(work, "copy.txt")),
          "hello\nthere\n",
        );
        const turns = server.turns();
        assert.equal(turns.length, 4);
        const inputs = turns.map((t) => JSON.stringify((t.body as Json).input));
        assert.match(inputs[1]!, /"custom_tool_call_output"/);
        assert.match(inputs[3]!, /"function_call_output"/);
        assert.match(inputs[3]!, /Create hello\.txt, then fix it\./);
        assert.deepEqual(
          events.filter((e) => e.type === "tool_call_started").map((e) =>
            e.data.tool_name
          ),
          ["file_change", "file_change", "command_execution"],
        );
        assert.deepEqual(
          events.find((e) => e.type === "token_usage_updated")?.data,
          { input_tokens: 700, output_tokens: 45, total_tokens: 745 },
        );
      } finally {
        await server.close();
      }
    });
  },
});

Deno.test({
  name:
    "with codex's default model (code mode only) the scripted tools run through its JavaScript exec tool and show as the same items",
  ignore,
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const server = await startOpenAiServer(CONVERSATION);
      try {
        const { code, events } = await runCodex(
          dir,
          codexConfig(server.url),
          null,
        );
        assert.equal(code, 0);
        const body = server.turns()[0]!.body as Json;
        assert.equal(body.tools, undefined, "code mode sends no tools list");
        assert.equal(
          await Deno.readTextFile(join(dir, "work", "copy.txt")),
          "hello\nthere\n",
        );
        assert.deepEqual(
          events.filter((e) => e.type === "tool_call_completed").map((e) =>
            e.data.tool_name
          ),
          ["file_change", "file_change", "command_execution"],
        );
      } finally {
        await server.close();
      }
    });
  },
});

Deno.test({
  name:
    "codex's default workspace-write sandbox works here (root, in a container): a command cannot write outside the workspace",
  ignore,
  async fn(): Promise<void> {
    // Outside /tmp: workspace-write lets commands write to /tmp and $TMPDIR.
    const elsewhere = await Deno.makeTempDir({
      dir: "/var/tmp",
      prefix: "prompt_runner_sandbox_",
    });
    await withTempDir(async (dir) => {
      const outside = join(elsewhere, "outside.txt");
      const server = await startOpenAiServer([
        { tools: [{ kind: "shell", command: `echo x > ${outside}` }] },
        { text: "Done." },
      ]);
      try {
        const { code } = await runCodex(dir, codexConfig(server.url));
        assert.equal(code, 0);
        const told = JSON.stringify((server.turns()[1]!.body as Json).input);
        assert.match(told, /function_call_output/);
        assert.match(told, /Read-only file system/);
        await assert.rejects(Deno.stat(outside), Deno.errors.NotFound);
      } finally {
        await server.close();
        await Deno.remove(elsewhere, { recursive: true });
      }
    });
  },
});

Deno.test({
  name:
    "with only openai_base_url, codex's WebSocket is refused with 426 and it falls back to HTTPS without reconnecting",
  ignore,
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const server = await startOpenAiServer([{ text: "Hi." }]);
      try {
        const { code, lines } = await runCodex(dir, {
          openai_base_url: `${server.url}/v1`,
        });
        assert.equal(code, 0);
        const upgrades = server.requests.filter((r) => r.method === "GET");
        assert.ok(upgrades.length >= 1, "codex asked for no WebSocket");
        assert.equal(server.turns().length, 1);
        const text = JSON.stringify(lines);
        assert.doesNotMatch(text, /Reconnecting|Falling back/);
        assert.equal(lines.at(-1)?.type, "turn.completed");
      } finally {
        await server.close();
      }
    });
  },
});

Deno.test({
  name:
    "through the fixture's provider a 401, 429, 529 or dropped stream ends codex's turn after one request, classified",
  ignore,
  async fn(): Promise<void> {
    const cases: [ScriptedReply, string][] = [
      [{ status: 401 }, "provider_auth_claim"],
      [{ status: 429 }, "provider_rate_limit"],
      [{ status: 529 }, "provider_capacity"],
      [{ drop: true }, "transport_disconnect"],
    ];
    for (const [reply, kind] of cases) {
      await withTempDir(async (dir) => {
        const server = await startOpenAiServer([reply]);
        try {
          const { code, events } = await runCodex(dir, codexConfig(server.url));
          assert.equal(code, 1);
          assert.equal(server.turns().length, 1, `${kind}: one request`);
          const failed = events.filter((e) => e.type === "error_occurred");
          assert.equal(failed.length, 1);
          assert.equal(failed[0]!.data.error_code, kind);
        } finally {
          await server.close();
        }
      });
    }
  },
});

// --- the runner driving codex on its exec lane (transport: exec) --------

async function withCodex(
  replies: ScriptedReply[],
  fn: (fixture: AgentFixture, dir: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const fixture = await codexExecFixture(dir, replies);
    try {
      await fn(fixture, dir);
    } finally {
      await fixture.close();
    }
  });
}

async function controlJson(
  args: string[],
  env: Record<string, string>,
): Promise<Json[]> {
  const result = await runCli(["control", ...args, "--json"], { env });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
}

function ofType(events: Json[], type: string): Json[] {
  return events.filter((e) => e.type === type);
}

function dataOf(event: Json | undefined): Json {
  return (event?.data ?? {}) as Json;
}

Deno.test({
  name:
    "prompt_runner run with codex: tools really edit, the contract verifies, studio labels the path-only change as the current state, status counts tokens and tools",
  ignore,
  async fn(): Promise<void> {
    await withCodex([
      {
        thinking: "Notes first.",
        text: "Creating NOTES.md.",
        tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
        usage: { input_tokens: 300, output_tokens: 40 },
      },
      {
        tools: [{ kind: "edit", path: "NOTES.md", old: "draft", new: "final" }],
        usage: { input_tokens: 400, output_tokens: 30 },
      },
      {
        tools: [{ kind: "shell", command: "cp NOTES.md COPY.md" }],
        usage: { input_tokens: 500, output_tokens: 20 },
      },
      { text: "Done.", usage: { input_tokens: 600, output_tokens: 10 } },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: {
          files_exist: ["NOTES.md", "COPY.md"],
          contains: [{ path: "NOTES.md", text: "final" }],
        },
      });
      const result = await runCli(
        ["run", packet.dir, "--log-mode", "studio", "--diff", "full"],
        { env: fixture.env },
      );
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.equal(
        await Deno.readTextFile(join(packet.workspace, "COPY.md")),
        "final\n",
      );
      const notes = join(packet.workspace, "NOTES.md");
      assert.ok(
        result.stdout.includes(
          `(current state of ${notes}, not this call's change)`,
        ),
        result.stdout,
      );
      assert.match(result.stdout, /\+ final/);
      const [status] = await controlJson(["status", packet.dir], fixture.env);
      assert.equal(status!.status, "completed");
      assert.equal(status!.provider, "codex");
      assert.equal(status!.input_tokens, 1800);
      assert.equal(status!.output_tokens, 100);
      assert.equal(status!.tool_count, 3);
      const events = await controlJson(["events", packet.dir], fixture.env);
      const verified = dataOf(ofType(events, "verification_finished")[0]);
      assert.equal(verified.passed, true);
      const started = dataOf(ofType(events, "run_started")[0]);
      assert.equal(started.provider, "codex");
      assert.match(String(started.provider_session_id), /^[0-9a-f-]{36}$/);
    });
  },
});

Deno.test({
  name:
    "a steer mid-turn interrupts codex and resumes the same thread with the steer after the earlier turns",
  ignore,
  async fn(): Promise<void> {
    const steerText = "Write the word steered into NOTES.md";
    await withCodex([
      {
        text: "Starting the notes.",
        tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
      },
      { text: "A long think.", delay_ms: 60_000 },
      {
        text: "Following the steer.",
        tools: [{
          kind: "edit",
          path: "NOTES.md",
          old: "draft",
          new: "steered",
        }],
      },
      { text: "Done." },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { contains: [{ path: "NOTES.md", text: "steered" }] },
      });
      const run = startRun(packet.dir, [], { env: fixture.env });
      await run.until((e) => e.type === "tool_call_completed");
      const server = fixture.server!;
      await waitFor(
        "the slow turn",
        () => Promise.resolve(server.turns().length >= 2),
      );
      const steer = await runCli(
        ["control", "steer", packet.dir, steerText],
        { env: fixture.env },
      );
      assert.equal(steer.code, 0, steer.stderr);
      const { code, events, stderr } = await run.finish();
      assert.equal(code, 0, stderr);
      const sessions = ofType(events, "run_started").map((e) =>
        dataOf(e).provider_session_id
      );
      assert.equal(sessions.length, 2, "a resumed session announces itself");
      assert.equal(sessions[0], sessions[1]);
      const turns = server.turns();
      assert.equal(turns.length, 4);
      const resumed = JSON.stringify((turns[2]!.body as Json).input);
      assert.ok(resumed.includes(steerText), "the steer reached codex");
      assert.ok(resumed.includes("Starting the notes."), "earlier turns kept");
      assert.ok(resumed.includes("custom_tool_call_output"));
      assert.ok(
        resumed.indexOf("Starting the notes.") < resumed.indexOf(steerText),
      );
      const record = JSON.parse(
        (await Deno.readTextFile(
          join(packet.stateRoot, "interventions", "01.jsonl"),
        )).trim(),
      );
      assert.equal(record.delivery, "interrupt_and_resume");
      assert.equal(
        await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
        "steered\n",
      );
      assert.equal(ofType(events, "prompt_failed").length, 0);
      const logs = join(packet.stateRoot, "logs");
      const [runDir] = await Array.fromAsync(Deno.readDir(logs));
      const log = await Deno.readTextFile(
        join(logs, runDir!.name, "01-attempt-1.log"),
      );
      assert.match(log, /SIGINT to the codex CLI/);
      assert.match(log, /codex exited: code 1 \(after our signal\)/);
      assert.ok(log.includes(`resume -- ${sessions[0]} `), log);
    });
  },
});

Deno.test({
  name:
    "a 401 from the server fails the prompt as provider_auth_claim with no retry",
  ignore,
  async fn(): Promise<void> {
    await withCodex([{ status: 401 }, { text: "never reached" }], async (
      fixture,
      dir,
    ) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { files_exist: ["NOTES.md"] },
        recovery: {
          retry: { max_attempts: 3, base_delay_ms: 0, max_delay_ms: 0 },
        },
      });
      const { code, events } = await startRun(packet.dir, [], {
        env: fixture.env,
      }).finish();
      assert.equal(code, 1);
      assert.equal(fixture.server!.turns().length, 1);
      assert.equal(ofType(events, "retry_scheduled").length, 0);
      const error = dataOf(ofType(events, "error_occurred")[0]);
      assert.equal(error.error_code, "provider_auth_claim");
      assert.match(String(error.error_message), /401 Unauthorized/);
      assert.equal(ofType(events, "prompt_failed").length, 1);
    });
  },
});

for (
  const [status, kind] of [[429, "provider_rate_limit"], [
    529,
    "provider_capacity",
  ]] as const
) {
  Deno.test({
    name: `a ${status} is retried per recovery.retry as ${kind}`,
    ignore,
    async fn(): Promise<void> {
      await withCodex([
        { status },
        {
          tools: [{ kind: "write", path: "NOTES.md", content: "ok\n" }],
        },
        { text: "Done." },
      ], async (fixture, dir) => {
        const packet = await makeAgentPacket(dir, fixture, {
          verify: { files_exist: ["NOTES.md"] },
          recovery: {
            retry: { max_attempts: 2, base_delay_ms: 0, max_delay_ms: 0 },
          },
        });
        const { code, events, stderr } = await startRun(packet.dir, [], {
          env: fixture.env,
        }).finish();
        assert.equal(code, 0, stderr);
        const retries = ofType(events, "retry_scheduled").map(dataOf);
        assert.equal(retries.length, 1);
        assert.equal(retries[0]!.failure_class, kind);
        assert.equal(fixture.server!.turns().length, 3);
        assert.equal(ofType(events, "prompt_completed").length, 1);
      });
    },
  });
}

Deno.test({
  name:
    "a dropped stream is resumed in the same codex thread per resume_attempts",
  ignore,
  async fn(): Promise<void> {
    await withCodex([
      {
        text: "Creating the notes.",
        tools: [{ kind: "write", path: "NOTES.md", content: "one\n" }],
      },
      { drop: true },
      {
        tools: [{ kind: "edit", path: "NOTES.md", old: "one", new: "two" }],
      },
      { text: "Done." },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { contains: [{ path: "NOTES.md", text: "two" }] },
        recovery: { resume_attempts: 1, retry: { max_attempts: 1 } },
      });
      const { code, events, stderr } = await startRun(packet.dir, [], {
        env: fixture.env,
      }).finish();
      assert.equal(code, 0, stderr);
      const resumed = ofType(events, "session_resumed").map(dataOf);
      assert.equal(resumed.length, 1);
      assert.equal(resumed[0]!.failure_class, "transport_disconnect");
      const sessions = ofType(events, "run_started").map((e) =>
        dataOf(e).provider_session_id
      );
      assert.equal(sessions.length, 2);
      assert.equal(sessions[0], sessions[1]);
      const after = JSON.stringify(
        (fixture.server!.turns()[2]!.body as Json).input,
      );
      assert.ok(after.includes("Creating the notes."), "same conversation");
      assert.equal(ofType(events, "retry_scheduled").length, 0);
    });
  },
});

Deno.test({
  name:
    "a hung server: codex is killed at timeout_ms and no process of the run is left",
  ignore,
  async fn(): Promise<void> {
    await withCodex([{ hang: true }], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { files_exist: ["NOTES.md"] },
        timeout_ms: 3_000,
        recovery: {
          retry: { max_attempts: 0 },
          resume_attempts: 0,
          repair: { enabled: false },
        },
      });
      const run = startRun(packet.dir, [], { env: fixture.env });
      const watch = watchDescendants(run.child.pid);
      const { code, events } = await run.finish();
      const seen = await watch.stop();
      // A killed group's members are reaped within moments.
      for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(code, 1);
      assert.ok(fixture.server!.turns().length >= 1, "codex asked the server");
      const agentPid = Number(dataOf(ofType(events, "run_started")[0]).pid);
      assert.ok(seen.has(agentPid), `codex (${agentPid}) was never watched`);
      assert.ok(seen.size >= 2, "the wrapper and the native codex");
      assert.deepEqual(watch.alive(), [], "processes left behind");
      assert.equal(ofType(events, "prompt_started").length, 1);
      const failed = dataOf(ofType(events, "prompt_failed")[0]);
      assert.match(String(failed.reason), /transport_timeout/);
    });
  },
});
