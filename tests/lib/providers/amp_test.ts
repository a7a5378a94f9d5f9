/**
 * Tests for the Amp adapter: its argv (checked against the real `amp`
 * argument parser), its stream parser over the documented shapes, hostile
 * lines, and the failure classes of Amp's own error texts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ampProfile } from "../../../lib/providers/amp.ts";
import { AmpParser } from "../../../lib/providers/_amp_parser.ts";
import type {
  CliExit,
  CliInvocation,
  LineResult,
} from "../../../lib/providers/cli_profile.ts";
import { DEFAULT_AGENT_OPTIONS } from "../../../lib/packet/agent_options.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";
import { agentAvailable, agentBin } from "../../_helpers/agent_cli.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { makeFakeCli } from "../../_helpers/fake_cli/mod.ts";
import { watchDescendants } from "../../_helpers/fake_cli/proc_tree.ts";

const TESTDATA = join(
  import.meta.dirname!,
  "..",
  "..",
  "testdata",
  "agents",
  "amp",
);
const THREAD = "T-5f2d7c1e-8a4b-4c3d-9e10-0123456789ab";

function invocation(
  text: string,
  extra: Partial<CliInvocation> = {},
): CliInvocation {
  return {
    text,
    cwd: "/tmp",
    model: null,
    options: DEFAULT_AGENT_OPTIONS,
    liveInput: false,
    ...extra,
  };
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Feeds lines to a fresh parser; returns every result. */
function feed(lines: string[], parser = new AmpParser()): LineResult[] {
  return lines.map((line) => parser.line(line, parseJson(line)));
}

async function fixture(name: string): Promise<string[]> {
  return (await Deno.readTextFile(join(TESTDATA, name)))
    .split("\n")
    .filter((line) => line && !line.startsWith("#"));
}

function events(results: LineResult[]): ProviderEvent[] {
  return results.flatMap((result) => result.events);
}

function exitInfo(stderr: string[], extra: Partial<CliExit> = {}): CliExit {
  return {
    code: 1,
    signal: null,
    stderr,
    interrupted: false,
    sawTerminal: false,
    ...extra,
  };
}

// --- argv ---------------------------------------------------------------

Deno.test("ampProfile starts with the prompt bound to --execute= and stream JSON with thinking", () => {
  assert.deepEqual(ampProfile.startArgs(invocation("Fix the bug")), [
    "--execute=Fix the bug",
    "--stream-json",
    "--stream-json-thinking",
  ]);
});

Deno.test("ampProfile maps allow_all to --dangerously-allow-all and the model to -m", () => {
  const args = ampProfile.startArgs(invocation("Go", {
    model: "high",
    options: { ...DEFAULT_AGENT_OPTIONS, permission_mode: "allow_all" },
  }));
  assert.deepEqual(args, [
    "--execute=Go",
    "--stream-json",
    "--stream-json-thinking",
    "--dangerously-allow-all",
    "-m",
    "high",
  ]);
  const plain = ampProfile.startArgs(invocation("Go", {
    options: { ...DEFAULT_AGENT_OPTIONS, permission_mode: "default" },
  }));
  assert.ok(!plain.includes("--dangerously-allow-all"));
});

Deno.test("ampProfile passes no -m when the runner fills in its default model", () => {
  const args = ampProfile.startArgs(
    invocation("Go", { model: ampProfile.defaultModel }),
  );
  assert.ok(!args.includes("-m"), args.join(" "));
});

Deno.test("ampProfile resumes with threads continue, the thread id and the steer", () => {
  assert.deepEqual(
    ampProfile.resumeArgs(invocation("Use tabs instead"), THREAD),
    [
      "threads",
      "continue",
      THREAD,
      "--execute=Use tabs instead",
      "--stream-json",
      "--stream-json-thinking",
    ],
  );
});

Deno.test("ampProfile never takes live input", () => {
  assert.equal(ampProfile.liveInput(DEFAULT_AGENT_OPTIONS, 3), false);
  assert.equal(ampProfile.input, undefined);
  assert.equal(ampProfile.name, "amp");
  assert.equal(ampProfile.binName, "amp");
});

// --- argv against the real parser -----------------------------------------

/** A 127.0.0.1 port nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function runRealAmp(
  dir: string,
  args: string[],
  key: boolean,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = join(dir, "home");
  await Deno.mkdir(home, { recursive: true });
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    AMP_URL: `http://127.0.0.1:${closedPort()}`,
    NO_COLOR: "1",
  };
  if (key) env.AMP_API_KEY = "dummy-not-a-key";
  const output = await new Deno.Command(agentBin("amp")!, {
    args,
    cwd: dir,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

const REAL_ARGV: [string, string[]][] = [
  ["start", ampProfile.startArgs(invocation("Say hi"))],
  [
    "start with a prompt that starts with a dash",
    ampProfile.startArgs(invocation("- item one\n- item two")),
  ],
  [
    "start with every option",
    ampProfile.startArgs(invocation("Say hi", {
      model: "high",
      options: { ...DEFAULT_AGENT_OPTIONS, permission_mode: "allow_all" },
    })),
  ],
  ["resume", ampProfile.resumeArgs(invocation("Carry on"), THREAD)],
  [
    "resume with every option",
    ampProfile.resumeArgs(
      invocation("--carry on", {
        model: "low",
        options: { ...DEFAULT_AGENT_OPTIONS, permission_mode: "allow_all" },
      }),
      THREAD,
    ),
  ],
];

for (const [what, args] of REAL_ARGV) {
  Deno.test({
    name:
      `the real amp parser accepts the ${what} argv and fails only on the connection`,
    ignore: !agentAvailable("amp"),
    async fn(): Promise<void> {
      await withTempDir(async (dir) => {
        const result = await runRealAmp(dir, args, true);
        assert.equal(result.code, 1, result.stderr);
        assert.doesNotMatch(result.stderr, /unknown option|requires --execute/);
        assert.match(
          result.stderr,
          /Couldn't connect to the Amp server|Cannot reach Amp servers/,
        );
        const failure = new AmpParser().exit(
          exitInfo(result.stderr.split("\n").filter((l) => l)),
        );
        assert.equal(failure?.kind, "transport_disconnect");
      });
    },
  });
}

Deno.test({
  name:
    "the real amp parser reads -x '- item' as an unknown option (why the adapter uses --execute=)",
  ignore: !agentAvailable("amp"),
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const result = await runRealAmp(dir, [
        "-x",
        "- item",
        "--stream-json",
      ], true);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /unknown option '- item'/);
      const failure = new AmpParser().exit(exitInfo(result.stderr.split("\n")));
      assert.equal(failure?.kind, "provider_config_claim");
    });
  },
});

Deno.test({
  name:
    "the real amp without a key starts the login flow, which the parser makes a fatal provider_auth_claim",
  ignore: !agentAvailable("amp"),
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const home = join(dir, "home");
      await Deno.mkdir(home);
      // setsid: its own process group, so everything it started can be killed.
      const child = new Deno.Command("setsid", {
        args: [agentBin("amp")!, ...ampProfile.startArgs(invocation("hi"))],
        cwd: dir,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          HOME: home,
          AMP_URL: `http://127.0.0.1:${closedPort()}`,
        },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const watch = watchDescendants(child.pid);
      const parser = new AmpParser();
      let fatal: LineResult["fatal"];
      let exited = false;
      child.status.then(() => exited = true);
      const reader = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let buffer = "";
      while (fatal === undefined) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let newline: number;
        while (fatal === undefined && (newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          fatal = parser.line(line, parseJson(line)).fatal;
        }
      }
      assert.deepEqual(fatal, {
        kind: "provider_auth_claim",
        message: "No API key found. Starting login flow...",
      });
      // It waits for a code that never comes: still running when we kill it.
      assert.equal(exited, false);
      Deno.kill(-child.pid, "SIGKILL");
      await reader.cancel();
      await child.stderr.cancel();
      const status = await child.status;
      assert.equal(status.signal, "SIGKILL");
      await watch.stop();
      assert.deepEqual(watch.alive(), []);
    });
  },
});

// --- the parser over the documented shapes --------------------------------

Deno.test("AmpParser turns a documented session into canonical events", async () => {
  const results = feed(await fixture("session_tools.jsonl"));
  assert.equal(results[0]!.session_id, THREAD);
  assert.equal(results.at(-1)!.terminal, true);
  assert.equal(results.at(-1)!.session_id, THREAD);
  assert.equal(results.filter((r) => r.terminal).length, 1);
  const all = events(results);
  assert.deepEqual(all.map((e) => e.type), [
    "message_streamed",
    "token_usage_updated",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_started",
    "token_usage_updated",
    "tool_call_completed",
    "tool_call_started",
    "token_usage_updated",
    "tool_call_failed",
    "message_streamed",
    "message_received",
    "token_usage_updated",
    "run_completed",
  ]);
  assert.deepEqual(all[0]!.data, {
    delta: "I should create the file first.",
    kind: "thinking",
  });
  assert.deepEqual(all[2]!.data, { delta: "Creating the file.", kind: "text" });
  assert.deepEqual(all[3]!.data, {
    content: "Creating the file.",
    role: "assistant",
  });
  assert.deepEqual(all[4]!.data, {
    tool_call_id: "toolu_01",
    tool_name: "Write",
    tool_input: {
      file_path: "/work/app/hello.txt",
      content: "hello\nworld\n",
    },
  });
  assert.deepEqual(all[8]!.data, {
    tool_call_id: "toolu_02",
    tool_name: "Edit",
    tool_output: "The file /work/app/hello.txt has been updated.",
    is_error: false,
  });
  assert.deepEqual(all[11]!.data, {
    tool_call_id: "toolu_03",
    tool_name: "Bash",
    tool_output: "cat: nope.txt: No such file or directory",
    is_error: true,
  });
  // Cumulative; msg_01's usage (repeated on three lines) counts once, cache reads as input.
  const usage = all.filter((e) => e.type === "token_usage_updated")
    .map((e) => e.data);
  assert.deepEqual(usage, [
    { input_tokens: 500, output_tokens: 20, total_tokens: 520 },
    { input_tokens: 1100, output_tokens: 50, total_tokens: 1150 },
    { input_tokens: 1800, output_tokens: 60, total_tokens: 1860 },
    { input_tokens: 2600, output_tokens: 75, total_tokens: 2675 },
  ]);
  assert.deepEqual(all.at(-1)!.data, {
    stop_reason: "end_turn",
    num_turns: 4,
    duration_ms: 5120,
  });
});

Deno.test("AmpParser reports an error result with its error text and the class the text names", async () => {
  const results = feed(await fixture("result_error.jsonl"));
  assert.equal(results.at(-1)!.terminal, true);
  const last = events(results).slice(-2);
  assert.deepEqual(last.map((e) => e.type), ["error_occurred", "run_failed"]);
  const message = "429 Too Many Requests: rate limit exceeded, retry later";
  assert.deepEqual(last[1]!.data, {
    error_code: "provider_rate_limit",
    error_message: message,
    provider_error: { provider: "amp", kind: "provider_rate_limit", message },
  });
});

Deno.test("AmpParser fails an error_max_turns result that carries no text, naming the subtype", async () => {
  const all = events(feed(await fixture("max_turns.jsonl")));
  assert.equal(all.at(-1)!.type, "run_failed");
  assert.match(String(all.at(-1)!.data.error_message), /error_max_turns/);
});

Deno.test("AmpParser makes the login flow's first line fatal and ignores other text lines", async () => {
  const lines = (await Deno.readTextFile(join(TESTDATA, "login_flow.txt")))
    .split("\n");
  const results = feed(lines);
  assert.equal(results[0]!.fatal?.kind, "provider_auth_claim");
  assert.match(results[0]!.fatal!.message, /^No API key found/);
  assert.ok(results.slice(1).every((r) => !r.fatal && !r.events.length));
  assert.deepEqual(
    feed(["Some progress text", "", "Tip: No API key found means…"])
      .map((r) => r.fatal),
    [undefined, undefined, undefined],
  );
});

Deno.test("AmpParser never takes a thread id that argv would read as a flag", () => {
  const parser = new AmpParser();
  for (const id of ["--help", "-x", "T-1 2", "", 42]) {
    const line = JSON.stringify({
      type: "system",
      subtype: "init",
      session_id: id,
    });
    assert.equal(parser.line(line, JSON.parse(line)).session_id, undefined);
  }
});

Deno.test("AmpParser survives the garbage fake's every line and still reads its session", async () => {
  await withTempDir(async (dir) => {
    const fake = await makeFakeCli(dir, "garbage_lines");
    const output = await new Deno.Command(fake.bin, {
      cwd: dir,
      stdin: "null",
      stdout: "piped",
    }).output();
    assert.equal(output.code, 0);
    const lines = new TextDecoder().decode(output.stdout).split("\n");
    assert.ok(lines.some((line) => line.length === 2 * 1024 * 1024));
    const results = feed(lines);
    assert.equal(
      results[0]!.session_id,
      "T-00000000-0000-4000-8000-000000000001",
    );
    assert.ok(results.every((r) => !r.fatal));
    assert.equal(results.filter((r) => r.terminal).length, 1);
    const all = events(results);
    assert.deepEqual(all.map((e) => e.type), [
      "tool_call_started",
      "token_usage_updated",
      "tool_call_completed",
      "message_streamed",
      "message_received",
      "token_usage_updated",
      "run_completed",
    ]);
    assert.deepEqual(all[0]!.data.tool_input, {
      command: "echo ok > garbage_ok.txt",
    });
    assert.deepEqual(all[5]!.data, {
      input_tokens: 30,
      output_tokens: 12,
      total_tokens: 42,
    });
  });
});

Deno.test("AmpParser skips wrongly typed fields without inventing events", () => {
  const lines = [
    '{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"a":1}}]}}',
    '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":7,"input":[1]}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":{"weird":true},"is_error":"no"}]}}',
    '{"type":"assistant","message":{"id":"m","content":[],"usage":{"input_tokens":NaN}}}',
    '{"type":"assistant","message":{"id":"m","content":[],"usage":{"input_tokens":1e400,"output_tokens":3}}}',
  ];
  const all = events(feed(lines));
  assert.deepEqual(all.map((e) => e.type), [
    "tool_call_started",
    "tool_call_completed",
    "token_usage_updated",
  ]);
  assert.deepEqual(all[0]!.data, {
    tool_call_id: "t1",
    tool_name: "unknown",
    tool_input: {},
  });
  assert.deepEqual(all[1]!.data, {
    tool_call_id: "t9",
    tool_name: "unknown",
    tool_output: '{"weird":true}',
    is_error: false,
  });
  assert.deepEqual(all[2]!.data, {
    input_tokens: 0,
    output_tokens: 3,
    total_tokens: 3,
  });
});

// --- exit: Amp's own error texts -------------------------------------------

Deno.test("AmpParser.exit classifies Amp's stderr texts", async () => {
  const read = async (name: string): Promise<string[]> =>
    (await Deno.readTextFile(join(TESTDATA, name))).split("\n");
  const parser = new AmpParser();
  assert.deepEqual(parser.exit(exitInfo(await read("stderr_401.txt"))), {
    kind: "provider_auth_claim",
    message:
      "Error: Invalid or missing API key. Run 'amp login' to authenticate.",
  });
  assert.equal(
    parser.exit(exitInfo(await read("stderr_no_server.txt")))?.kind,
    "transport_disconnect",
  );
  assert.deepEqual(
    parser.exit(exitInfo(await read("stderr_continue_offline.txt"))),
    {
      kind: "transport_disconnect",
      message: "Error: Cannot reach Amp servers. Are you offline?",
    },
  );
});

Deno.test("AmpParser.exit leaves the rest to the core: unknown text, a terminal line, our own signal", () => {
  const parser = new AmpParser();
  assert.equal(parser.exit(exitInfo(["panic: something else"])), null);
  assert.equal(
    parser.exit(
      exitInfo(["Error: Cannot reach Amp servers."], { sawTerminal: true }),
    ),
    null,
  );
  assert.equal(
    parser.exit(
      exitInfo(["Error: Cannot reach Amp servers."], {
        interrupted: true,
        code: null,
        signal: "SIGINT",
      }),
    ),
    null,
  );
});
