import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable, agentBin } from "../_helpers/agent_cli.ts";
import { claudeEnv, claudeFixture } from "../_helpers/agents/claude.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { runCli } from "../_helpers/run_cli.ts";
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
  return new Deno.Command(agentBin("claude")!, {
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
): Promise<{ code: number; results: LineResult[]; events: ProviderEvent[] }> {
  const invocation = {
    text: prompt,
    cwd: ws.repo,
    model: null,
    options: OPTIONS,
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
    "claude steered on stdin: the interrupt aborts the held turn and the steer runs next in the same conversation",
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
    // The held turn is in flight once the server has taken it.
    const steering = (async (): Promise<void> => {
      while (ws.server.turns().length === 0) await pause(20);
      await write(input.steer("steer text"));
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
  files: Record<string, string> = { "README.md": "seed\n" },
): Promise<ClaudePacket> {
  const packet = await makePacket({ files });
  const fixture = await claudeFixture(packet.root, replies);
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
    const turns = cp.fixture.server!.turns();
    assert.equal(turns.length, 4);
    assert.ok(
      userTexts(turns[0]!.body).some((t) => t.includes("Do the task.")),
    );
  },
});
