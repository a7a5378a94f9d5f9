import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable } from "../_helpers/agent_cli.ts";
import {
  claudeBin,
  claudeEnv,
  claudeFixture,
} from "../_helpers/agents/claude.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { readJsonl, startRun, waitForSnapshot } from "../_helpers/live_run.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import {
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";
import {
  startAnthropicServer,
  userTexts,
} from "../_helpers/model_server/anthropic.ts";
import type {
  ModelServer,
  ScriptedReply,
} from "../_helpers/model_server/server.ts";
import { claudeProfile } from "../../lib/providers/claude.ts";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../lib/packet/agent_options.ts";
import type { LineResult } from "../../lib/providers/cli_profile.ts";
import type { ProviderEvent } from "../../lib/shared/events.ts";

const ignore = !agentAvailable("claude");
const pause = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
const OPTIONS: AgentOptions = {
  ...DEFAULT_AGENT_OPTIONS,
  permission_mode: "acceptEdits",
  allowed_tools: ["Read", "Edit", "Write", "Bash"],
};

interface Workspace {
  dir: string;
  repo: string;
  env: Record<string, string>;
  server: ModelServer;
  [Symbol.asyncDispose](): Promise<void>;
}

async function workspace(replies: ScriptedReply[]): Promise<Workspace> {
  const dir = await Deno.makeTempDir({ prefix: "claude_cli_" });
  const repo = join(dir, "repo");
  await Deno.mkdir(repo);
  const server = await startAnthropicServer(replies);
  const env: Record<string, string> = {
    ...claudeEnv(dir, server.url),
    TMPDIR: dir,
  };
  await Deno.mkdir(env.HOME!);
  return {
    dir,
    repo,
    env,
    server,
    async [Symbol.asyncDispose](): Promise<void> {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function command(
  ws: Workspace,
  args: string[],
  stdin: "null" | "piped",
): Deno.Command {
  return new Deno.Command(claudeBin()!, {
    args,
    cwd: ws.repo,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...ws.env },
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

function parse(stdout: string): LineResult[] {
  const parser = claudeProfile.parser();
  return stdout.split("\n").filter((l) => l !== "").map((line) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      json = undefined;
    }
    return parser.line(line, json);
  });
}

async function runClaude(
  ws: Workspace,
  prompt: string,
  more: { model?: string; options?: Partial<AgentOptions> } = {},
): Promise<{ code: number; results: LineResult[]; events: ProviderEvent[] }> {
  const invocation = {
    text: prompt,
    cwd: ws.repo,
    model: more.model ?? null,
    options: { ...OPTIONS, ...more.options },
    liveInput: false,
  };
  const out = await command(ws, claudeProfile.startArgs(invocation), "null")
    .output();
  const results = parse(new TextDecoder().decode(out.stdout));
  return { code: out.code, results, events: results.flatMap((r) => r.events) };
}

function failureKind(events: ProviderEvent[]): unknown {
  const failed = events.find((e) => e.type === "run_failed");
  return (failed?.data.provider_error as Record<string, unknown> | undefined)
    ?.kind;
}

Deno.test({
  name:
    "claude runs a scripted conversation: its own Write, Edit and Bash really change the repo",
  ignore,
  async fn(): Promise<void> {
    await using ws = await workspace([
      {
        thinking: "Plan: create, then edit.",
        text: "Creating the notes.",
        tools: [{ kind: "write", path: "notes.txt", content: "alpha\nbeta\n" }],
        usage: { input_tokens: 300, output_tokens: 40 },
      },
      {
        tools: [{ kind: "edit", path: "notes.txt", old: "beta", new: "gamma" }],
      },
      { tools: [{ kind: "shell", command: "cp notes.txt copy.txt" }] },
      { text: "All done." },
    ]);
    const { code, results, events } = await runClaude(ws, "Write the notes");
    assert.equal(code, 0);
    assert.equal(
      await Deno.readTextFile(join(ws.repo, "notes.txt")),
      "alpha\ngamma\n",
    );
    assert.equal(
      await Deno.readTextFile(join(ws.repo, "copy.txt")),
      "alpha\ngamma\n",
    );
    const turns = ws.server.turns();
    assert.equal(turns.length, 4);
    assert.ok(userTexts(turns[0]!.body).includes("Write the notes"));
    // Each later turn carries the tool results of the one before.
    assert.match(JSON.stringify(turns[3]!.body), /tool_result/);
    assert.equal(
      ws.server.requests.filter((r) => r.scripted).length,
      turns.length,
    );
    assert.ok(results.some((r) => r.session_id));
    const started = events.filter((e) => e.type === "tool_call_started")
      .map((e) => e.data.tool_name);
    assert.deepEqual(started, ["Write", "Read", "Edit", "Bash"]);
    assert.equal(
      events.filter((e) => e.type === "tool_call_completed").length,
      4,
    );
    assert.ok(
      events.some((e) =>
        e.type === "message_streamed" && e.data.kind === "thinking"
      ),
    );
    const usage = events.find((e) => e.type === "token_usage_updated")!;
    assert.ok(Number(usage.data.input_tokens) >= 300);
    assert.equal(events.at(-1)!.type, "run_completed");
  },
});

Deno.test({
  name:
    "claude accepts the argv every agent option builds, and the prompt after the variadic --add-dir still arrives",
  ignore,
  async fn(): Promise<void> {
    await using ws = await workspace([{ text: "ok" }]);
    const extra = join(ws.dir, "shared");
    await Deno.mkdir(extra);
    const { code, results } = await runClaude(ws, "Mind the shared dir", {
      model: "sonnet",
      options: {
        max_turns: 3,
        add_dirs: [extra],
        reasoning_effort: "high",
      },
    });
    assert.equal(code, 0);
    assert.match(results.find((r) => r.model)?.model ?? "", /sonnet/);
    const [turn] = ws.server.turns();
    assert.ok(userTexts(turn!.body).includes("Mind the shared dir"));
    const body = turn!.body as Record<string, Record<string, unknown>>;
    assert.equal(body.output_config?.effort, "high");
    assert.match(
      JSON.stringify(body),
      new RegExp(extra.replaceAll("/", "\\/")),
    );
  },
});

Deno.test({
  name:
    "claude API errors end the run at once with their failure class (401, 429, 529, dropped stream)",
  ignore,
  async fn(): Promise<void> {
    const cases: [ScriptedReply[], string][] = [
      [[{ status: 401 }], "provider_auth_claim"],
      [[{ status: 429 }], "provider_rate_limit"],
      [[{ status: 529 }], "provider_capacity"],
      // A dropped stream: the CLI falls back to one non-streaming call.
      [[{ drop: true }, { drop: true }], "transport_disconnect"],
    ];
    for (const [replies, kind] of cases) {
      await using ws = await workspace(replies);
      const { code, events, results } = await runClaude(ws, "Do it");
      assert.equal(code, 1, kind);
      assert.equal(failureKind(events), kind);
      assert.equal(ws.server.script.taken, replies.length, kind);
      assert.equal(
        results.some((r) => r.fatal),
        kind === "provider_auth_claim",
        kind,
      );
    }
  },
});

Deno.test({
  name:
    "claude retrying a 401 on its own is reported fatal on the first retry line",
  ignore,
  async fn(): Promise<void> {
    await using ws = await workspace([
      { status: 401 },
      { status: 401 },
      { status: 401 },
    ]);
    const env = { ...ws.env };
    delete env.CLAUDE_CODE_MAX_RETRIES;
    const child = command({ ...ws, env }, [
      ...claudeProfile.startArgs({
        text: "Do it",
        cwd: ws.repo,
        model: null,
        options: OPTIONS,
        liveInput: false,
      }),
    ], "null").spawn();
    const parser = claudeProfile.parser();
    let fatal: string | null = null;
    const lines = child.stdout.pipeThrough(new TextDecoderStream());
    let buffer = "";
    for await (const chunk of lines) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const line of parts) {
        const result = parser.line(line, JSON.parse(line));
        if (result.fatal) fatal = result.fatal.kind;
      }
      if (fatal !== null) break;
    }
    child.kill("SIGKILL");
    await child.status;
    await child.stderr.cancel();
    assert.equal(fatal, "provider_auth_claim");
    assert.ok(ws.server.script.taken < 3, "it did not wait for the retries");
  },
});

Deno.test({
  name:
    "claude steered on stdin: the interrupt aborts the held turn, the steer runs next in the same conversation, and its frame comes back echoed (--replay-user-messages) as that turn starts",
  ignore,
  async fn(): Promise<void> {
    await using ws = await workspace([
      { text: "Working slowly.", delay_ms: 60_000 },
      { text: "Steered answer." },
    ]);
    const args = claudeProfile.startArgs({
      text: "first prompt",
      cwd: ws.repo,
      model: null,
      options: OPTIONS,
      liveInput: true,
    });
    const child = command(ws, args, "piped").spawn();
    const writer = child.stdin.getWriter();
    const write = async (frames: string[]): Promise<void> => {
      for (const frame of frames) {
        await writer.write(new TextEncoder().encode(frame + "\n"));
      }
    };
    const input = claudeProfile.input!;
    await write(input.prompt("first prompt"));
    const steerFrames = input.steer("steer text");
    // The held turn is in flight once the server has taken it.
    const steering = (async (): Promise<void> => {
      while (ws.server.turns().length === 0) await pause(20);
      await write(steerFrames.frames);
    })();
    const parser = claudeProfile.parser();
    const results: LineResult[] = [];
    let buffer = "";
    let closed = false;
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const line of parts) {
        results.push(parser.line(line, JSON.parse(line)));
      }
      if (!closed && results.filter((r) => r.terminal).length === 2) {
        closed = true;
        await steering;
        await writer.close();
      }
    }
    const status = await child.status;
    await child.stderr.cancel();
    assert.equal(status.code, 0);
    const terminals = results.filter((r) => r.terminal);
    assert.equal(terminals.length, 2);
    assert.equal(failureKind(terminals[0]!.events), "user_cancelled");
    assert.equal(terminals[1]!.events.at(-1)!.type, "run_completed");
    const turns = ws.server.turns();
    assert.equal(turns.length, 2);
    const texts = userTexts(turns[1]!.body);
    assert.ok(texts.some((t) => t.includes("first prompt")), "earlier context");
    assert.ok(texts.some((t) => t.includes("steer text")));
    const ids = new Set(results.map((r) => r.session_id).filter(Boolean));
    assert.equal(ids.size, 1);
    // The echo of the steer's frame comes after the aborted turn's end and
    // before the steered turn's.
    const echo = results.findIndex((r) => r.echoed === steerFrames.echo);
    assert.ok(echo >= 0, "the steer's frame was never echoed");
    assert.ok(echo > results.indexOf(terminals[0]!));
    assert.ok(echo < results.indexOf(terminals[1]!));
  },
});

// ---------------------------------------------------------------------------
// The real prompt_runner process with the real CLI and the scripted server.

interface ClaudePacket extends AsyncDisposable {
  packet: TempPacket;
  fixture: AgentFixture;
  env: Record<string, string>;
}

/** A packet whose prompt 01 runs the real claude against `replies`. */
async function claudePacket(
  replies: ScriptedReply[],
  front: string,
  options: { ownRetries?: boolean } = {},
): Promise<ClaudePacket> {
  const packet = await makePacket();
  const fixture = await claudeFixture(packet.root, replies);
  if (options.ownRetries) {
    // Claude Code retries as it would in production (10 times for a 401).
    delete fixture.env.CLAUDE_CODE_MAX_RETRIES;
    fixture.agent.env = {};
  }
  const agent = JSON.stringify(fixture.agent);
  await packet.writePrompt(
    "01_claude.prompt.md",
    promptFile(
      `name: Claude task\nprovider: claude\nagent: ${agent}\n${front}`,
    ),
  );
  return {
    packet,
    fixture,
    env: fixture.env,
    async [Symbol.asyncDispose](): Promise<void> {
      await fixture.close();
      await packet[Symbol.asyncDispose]();
    },
  };
}

async function stateOf(stateRoot: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")));
}

Deno.test({
  name:
    "prompt_runner run with claude: Write, Edit and Bash change the repo, the verifier passes, studio shows the Edit diff, status counts tokens and tools",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket(
      [
        {
          thinking: "Create the notes, then fix them.",
          text: "Writing NOTES.md.",
          tools: [{
            kind: "write",
            path: "NOTES.md",
            content: "# Notes\nstatus: draft\n",
          }],
          usage: { input_tokens: 1200, output_tokens: 80 },
        },
        {
          tools: [{
            kind: "edit",
            path: "NOTES.md",
            old: "draft",
            new: "final",
          }],
          usage: { input_tokens: 1300, output_tokens: 40 },
        },
        {
          tools: [{ kind: "shell", command: "echo built > build.log" }],
          usage: { input_tokens: 1400, output_tokens: 30 },
        },
        {
          text: "Notes written.",
          usage: { input_tokens: 1500, output_tokens: 20 },
        },
      ],
      [
        "timeout_ms: 60000",
        "verify:",
        "  files_exist: [NOTES.md, build.log]",
        "  contains: [{path: NOTES.md, text: 'status: final'}]",
      ].join("\n"),
    );
    const run = await runCli([
      "run",
      cp.packet.dir,
      "--log-mode",
      "studio",
      "--diff",
      "full",
    ], {
      env: cp.env,
    });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(
      await Deno.readTextFile(join(cp.packet.workspace, "NOTES.md")),
      "# Notes\nstatus: final\n",
    );
    assert.equal(
      await Deno.readTextFile(join(cp.packet.workspace, "build.log")),
      "built\n",
    );
    // Studio renders the Edit event's own patch.
    assert.match(
      run.stdout,
      /Edited \S*NOTES\.md {2}\+1 −1\n +- draft\n +\+ final\n/,
    );
    const status = await runCli(
      ["control", "status", cp.packet.dir, "--json"],
      {
        env: cp.env,
      },
    );
    assert.equal(status.code, 0, status.stderr);
    const snapshot = JSON.parse(status.stdout);
    assert.equal(snapshot.status, "completed");
    assert.equal(snapshot.provider, "claude");
    assert.ok(snapshot.input_tokens >= 5400, String(snapshot.input_tokens));
    assert.ok(snapshot.output_tokens >= 170, String(snapshot.output_tokens));
    assert.equal(snapshot.tool_count, 4);
    assert.ok(snapshot.cost_usd > 0, "the CLI's total_cost_usd");
    const turns = cp.fixture.server!.turns();
    assert.equal(turns.length, 4);
    assert.ok(
      userTexts(turns[0]!.body).some((t) => t.includes("Do the task.")),
    );
  },
});

const NO_DELAY = "retry: {base_delay_ms: 0, max_delay_ms: 0, jitter: false}";

Deno.test({
  name:
    "a Write claude is refused (permission_mode default, not in agent.allowed_tools) fails the prompt as approval_denied and raises attention in the snapshot and status",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket([
      { tools: [{ kind: "write", path: "hi.txt", content: "hi\n" }] },
      { text: "I could not write the file." },
    ], "timeout_ms: 60000");
    // Only reading is allowed: the write needs a person to say yes.
    const agent = {
      ...cp.fixture.agent,
      permission_mode: "default",
      allowed_tools: ["Read"],
    };
    await cp.packet.writePrompt(
      "01_claude.prompt.md",
      promptFile(
        `name: Claude task\nprovider: claude\nagent: ${
          JSON.stringify(agent)
        }\ntimeout_ms: 60000`,
      ),
    );
    const run = await runCli(["run", cp.packet.dir, "--json"], { env: cp.env });
    assert.equal(run.code, 1, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const attention = ofType(events, "attention_needed");
    assert.equal(attention.length, 1, JSON.stringify(attention));
    assert.equal(dataOf(attention[0]).reason, "approval_denied");
    assert.match(
      String(dataOf(attention[0]).detail),
      /denied permission for Write/,
    );
    assert.equal(ofType(events, "prompt_started").length, 1, "never retried");
    const status = await runCli(["status", cp.packet.dir, "--json"], {
      env: cp.env,
    });
    const rollup = JSON.parse(status.stdout);
    assert.equal(rollup.attention.reason, "approval_denied");
    const human = await runCli(["status", cp.packet.dir], { env: cp.env });
    assert.match(human.stdout, /attention +approval denied on 01 attempt 1/);
    await assert.rejects(Deno.stat(join(cp.packet.workspace, "hi.txt")));
  },
});

function ofType(
  events: Record<string, unknown>[],
  type: string,
): Record<string, unknown>[] {
  return events.filter((e) => e.type === type);
}

function dataOf(
  event: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return (event?.data ?? {}) as Record<string, unknown>;
}

Deno.test({
  name:
    "prompt_runner steer reaches claude's live session on stdin: the held turn is preempted and the steer runs with the earlier context",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket([
      {
        tools: [{ kind: "write", path: "first.txt", content: "one\n" }],
      },
      { text: "Thinking for a long time.", delay_ms: 60_000 },
      { text: "Steered: done." },
    ], "timeout_ms: 60000\nverify: {files_exist: [first.txt]}");
    const run = startRun(cp.packet.dir, [], { env: cp.env });
    const server = cp.fixture.server!;
    await waitFor(
      "the slow turn",
      () => Promise.resolve(server.turns().length >= 2),
    );
    // Mid-turn, the snapshot already counts the first turn's tokens and tool.
    const live = await waitForSnapshot(
      cp.packet.stateRoot,
      "live tokens",
      (s) => Number(s.input_tokens) > 0 && Number(s.tool_count) === 1,
    );
    assert.equal(live.status, "running");
    const steer = await runCli([
      "control",
      "steer",
      cp.packet.dir,
      "use tabs, not spaces",
      "--prompt",
      "1",
    ], { env: cp.env });
    assert.equal(steer.code, 0, steer.stderr);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    const turns = server.turns();
    assert.equal(turns.length, 3);
    const texts = userTexts(turns[2]!.body);
    assert.ok(texts.some((t) => t.includes("Do the task.")), "earlier prompt");
    assert.ok(texts.some((t) => t.includes("use tabs, not spaces")));
    assert.match(JSON.stringify(turns[2]!.body), /first\.txt/, "earlier tool");
    const [record] = await readJsonl(
      join(cp.packet.stateRoot, "interventions", "01.jsonl"),
    );
    assert.equal(record?.delivery, "send_input");
    assert.equal(record?.mechanism, "stdin_echo", "claude echoed the frame");
    assert.equal(record?.text, "use tabs, not spaces");
    const started = ofType(done.events, "run_started");
    assert.equal(started.length, 1, "one process, no resume");
    assert.equal(ofType(done.events, "run_failed").length, 0);
    assert.equal(ofType(done.events, "run_completed").length, 1);
    assert.ok(
      ofType(done.events, "message_received").some((e) =>
        dataOf(e).content === "Steered: done."
      ),
    );
    assert.equal(ofType(done.events, "prompt_completed").length, 1);
  },
});

Deno.test({
  name:
    "claude's 401 fails the prompt as provider_auth_claim at the first retry line, with one attempt",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket(
      Array.from({ length: 12 }, () => ({ status: 401 })),
      // DESIGN §3: auth is never retried unless class_attempts allows it.
      `timeout_ms: 120000\nrecovery: {${NO_DELAY}}`,
      { ownRetries: true },
    );
    const run = await runCli(["run", cp.packet.dir, "--json"], { env: cp.env });
    assert.equal(run.code, 1, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const failed = ofType(events, "run_failed");
    assert.equal(failed.length, 1);
    const providerError = dataOf(failed[0]).provider_error as Record<
      string,
      unknown
    >;
    assert.equal(providerError.kind, "provider_auth_claim");
    // The first system/api_retry line ended it, not the last of ten.
    assert.match(String(providerError.message), /would retry 10 times/);
    assert.equal(ofType(events, "retry_scheduled").length, 0);
    assert.equal(ofType(events, "prompt_started").length, 1);
    assert.equal(ofType(events, "prompt_failed").length, 1);
    // Claude Code would have retried 10 times; the first retry line ended it.
    assert.ok(cp.fixture.server!.turns().length <= 2);
    const state = await stateOf(cp.packet.stateRoot);
    assert.match(JSON.stringify(state), /provider_auth_claim/);
  },
});

for (
  const [status, failureClass] of [[429, "provider_rate_limit"], [
    529,
    "provider_capacity",
  ]] as const
) {
  Deno.test({
    name:
      `claude's ${status} is retried per recovery.retry as ${failureClass}; the second attempt succeeds`,
    ignore,
    async fn(): Promise<void> {
      await using cp = await claudePacket(
        [
          { status },
          { tools: [{ kind: "write", path: "done.txt", content: "ok\n" }] },
          { text: "Done." },
        ],
        `timeout_ms: 60000\nrecovery: {${
          NO_DELAY.replace("retry: {", "retry: {max_attempts: 1, ")
        }}\nverify: {files_exist: [done.txt]}`,
      );
      const run = await runCli(["run", cp.packet.dir, "--json"], {
        env: cp.env,
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
      const retries = ofType(events, "retry_scheduled");
      assert.equal(retries.length, 1);
      assert.equal(dataOf(retries[0]).failure_class, failureClass);
      const attempts = ofType(events, "prompt_started").map((e) =>
        dataOf(e).attempt
      );
      assert.deepEqual(attempts, [1, 2]);
      assert.equal(ofType(events, "prompt_completed").length, 1);
      assert.equal(
        await Deno.readTextFile(join(cp.packet.workspace, "done.txt")),
        "ok\n",
      );
    },
  });
}

Deno.test({
  name:
    "a dropped claude stream is resumed in the same session per recovery.resume_attempts",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket(
      [
        { tools: [{ kind: "write", path: "part1.txt", content: "1\n" }] },
        // The stream drops, and so does the CLI's non-streaming fallback.
        { drop: true },
        { drop: true },
        { tools: [{ kind: "write", path: "part2.txt", content: "2\n" }] },
        { text: "Finished after the resume." },
      ],
      `timeout_ms: 60000\nrecovery: {resume_attempts: 1, ${
        NO_DELAY.replace("retry: {", "retry: {max_attempts: 0, ")
      }}\nverify: {files_exist: [part1.txt, part2.txt]}`,
    );
    const run = await runCli(["run", cp.packet.dir, "--json"], { env: cp.env });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const resumed = ofType(events, "session_resumed");
    assert.equal(resumed.length, 1);
    assert.equal(dataOf(resumed[0]).failure_class, "transport_disconnect");
    const sessions = ofType(events, "run_started").map((e) =>
      dataOf(e).session_id
    );
    assert.equal(sessions.length, 2);
    assert.match(String(sessions[0]), /^[0-9a-f-]{36}$/);
    assert.equal(sessions[1], sessions[0]);
    assert.equal(ofType(events, "prompt_started").length, 1, "no retry");
    const after = cp.fixture.server!.turns()[3]!;
    assert.match(JSON.stringify(after.body), /part1\.txt/, "context kept");
  },
});

/**
 * Runs prompt 01 until its `timeout_ms`, watching every descendant of the
 * runner process meanwhile; asserts the attempt failed on the timeout and
 * that none of those processes outlived the run. Returns the pids seen.
 */
async function assertKilledAtTimeout(cp: ClaudePacket): Promise<Set<number>> {
  const run = startRun(cp.packet.dir, [], { env: cp.env });
  const watch = watchDescendants(run.child.pid);
  const result = await run.finish();
  const seen = await watch.stop();
  // A killed group's members are reaped within moments.
  for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(result.code, 1, result.stderr);
  const failed = ofType(result.events, "prompt_failed");
  assert.equal(failed.length, 1);
  assert.match(JSON.stringify(failed[0]), /transport_timeout/);
  assert.equal(ofType(result.events, "prompt_started").length, 1);
  const claudePid = dataOf(ofType(result.events, "run_started")[0]).pid;
  assert.ok(seen.has(Number(claudePid)), "the claude process was watched");
  assert.deepEqual(watch.alive(), [], "no process of the run is left");
  return seen;
}

Deno.test({
  name:
    "a hung model server: the claude attempt is killed at timeout_ms and no process of the run is left",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket(
      [{ hang: true }],
      `timeout_ms: 5000\nrecovery: {resume_attempts: 0, repair: {enabled: false}, ${
        NO_DELAY.replace("retry: {", "retry: {max_attempts: 0, ")
      }}`,
    );
    await assertKilledAtTimeout(cp);
    assert.equal(cp.fixture.server!.turns().length, 1);
  },
});

Deno.test({
  name:
    "a hung Bash tool: at timeout_ms the claude attempt and the tool's own process are gone",
  ignore,
  async fn(): Promise<void> {
    const sleeper = "import os, time; " +
      "open('tool.pid', 'w').write(str(os.getpid())); time.sleep(600)";
    await using cp = await claudePacket(
      [{ tools: [{ kind: "shell", command: `python3 -c "${sleeper}"` }] }],
      `timeout_ms: 6000\nrecovery: {resume_attempts: 0, repair: {enabled: false}, ${
        NO_DELAY.replace("retry: {", "retry: {max_attempts: 0, ")
      }}`,
    );
    const seen = await assertKilledAtTimeout(cp);
    const toolPid = Number(
      await Deno.readTextFile(join(cp.packet.workspace, "tool.pid")),
    );
    assert.ok(seen.has(toolPid), "the tool's process was watched");
  },
});

Deno.test({
  name:
    "steer_lane resume: a steer interrupts claude and resumes the same session with the steer",
  ignore,
  async fn(): Promise<void> {
    await using cp = await claudePacket([
      { tools: [{ kind: "write", path: "first.txt", content: "one\n" }] },
      { text: "Thinking for a long time.", delay_ms: 60_000 },
      { text: "Resumed with the steer." },
    ], "timeout_ms: 60000\nverify: {files_exist: [first.txt]}");
    const manifestAgent = /agent: (.*)\n/;
    const prompt = join(cp.packet.dir, "prompts", "01_claude.prompt.md");
    const text = await Deno.readTextFile(prompt);
    const agent = JSON.parse(manifestAgent.exec(text)![1]!);
    await Deno.writeTextFile(
      prompt,
      text.replace(
        manifestAgent,
        `agent: ${JSON.stringify({ ...agent, steer_lane: "resume" })}\n`,
      ),
    );
    const run = startRun(cp.packet.dir, [], { env: cp.env });
    const server = cp.fixture.server!;
    await waitFor(
      "the slow turn",
      () => Promise.resolve(server.turns().length >= 2),
    );
    const steer = await runCli([
      "control",
      "steer",
      cp.packet.dir,
      "use tabs, not spaces",
      "--prompt",
      "1",
    ], { env: cp.env });
    assert.equal(steer.code, 0, steer.stderr);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    const [record] = await readJsonl(
      join(cp.packet.stateRoot, "interventions", "01.jsonl"),
    );
    assert.equal(record?.delivery, "interrupt_and_resume");
    const sessions = ofType(done.events, "run_started").map((e) =>
      dataOf(e).session_id
    );
    assert.equal(sessions.length, 2);
    assert.equal(sessions[1], sessions[0]);
    const turns = server.turns();
    assert.equal(turns.length, 3);
    const texts = userTexts(turns[2]!.body);
    assert.ok(texts.some((t) => t.includes("Do the task.")), "earlier prompt");
    assert.ok(texts.some((t) => t.includes("use tabs, not spaces")));
    assert.equal(ofType(done.events, "run_failed").length, 0);
    assert.equal(ofType(done.events, "prompt_completed").length, 1);
  },
});
