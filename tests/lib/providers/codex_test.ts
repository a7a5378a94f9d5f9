/**
 * The Codex adapter: its argv (option mapping, the resume traps) and its
 * parser over stdout that codex 0.171.0 really printed
 * (`tests/testdata/agents/codex/`, captured against the scripted server).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { codexProfile, tomlValue } from "../../../lib/providers/codex.ts";
import { classifyCodexError } from "../../../lib/providers/_codex_parser.ts";
import { classifyFailure } from "../../../lib/providers/failure.ts";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../../lib/packet/agent_options.ts";
import type {
  CliExit,
  CliInvocation,
  CliParser,
} from "../../../lib/providers/cli_profile.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";

const DATA = join(
  import.meta.dirname!,
  "..",
  "..",
  "testdata",
  "agents",
  "codex",
);

function invocation(
  text: string,
  options: Partial<AgentOptions> = {},
  model: string | null = "gpt-5.5",
): CliInvocation {
  return {
    text,
    cwd: "/repo",
    model,
    options: { ...DEFAULT_AGENT_OPTIONS, ...options },
    liveInput: false,
  };
}

interface Parsed {
  events: ProviderEvent[];
  sessions: string[];
  terminal: number[];
  parser: CliParser;
}

function parse(lines: string[], parser = codexProfile.parser()): Parsed {
  const out: Parsed = { events: [], sessions: [], terminal: [], parser };
  lines.forEach((line, index) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      json = undefined;
    }
    const result = parser.line(line, json);
    out.events.push(...result.events);
    if (result.session_id !== undefined) out.sessions.push(result.session_id);
    if (result.terminal) out.terminal.push(index);
  });
  return out;
}

async function fixture(name: string): Promise<string[]> {
  const text = await Deno.readTextFile(join(DATA, `${name}.jsonl`));
  return text.split("\n").filter((line) => line.trim() !== "");
}

function exit(overrides: Partial<CliExit> = {}): CliExit {
  return {
    code: 1,
    signal: null,
    stderr: [],
    interrupted: false,
    sawTerminal: false,
    ...overrides,
  };
}

function ofType(events: ProviderEvent[], type: string): ProviderEvent[] {
  return events.filter((event) => event.type === type);
}

Deno.test("startArgs() runs exec --json with the safe unattended defaults and the prompt after --", () => {
  assert.deepEqual(codexProfile.startArgs(invocation("Fix the test")), [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "-m",
    "gpt-5.5",
    "-s",
    "workspace-write",
    "-C",
    "/repo",
    "-c",
    'approval_policy="never"',
    "--",
    "Fix the test",
  ]);
});

Deno.test("startArgs() maps sandbox, approval policy, reasoning effort, add_dirs and config pairs", () => {
  const args = codexProfile.startArgs(invocation("go", {
    sandbox: "read-only",
    approval_policy: "on-request",
    reasoning_effort: "high",
    add_dirs: ["/shared", "/more"],
    config: {
      openai_base_url: "http://127.0.0.1:9/v1",
      "model_providers.x.request_max_retries": 0,
      hide_agent_reasoning: false,
      note: 'say "hi"\n',
    },
  }, null));
  assert.equal(args.includes("-m"), false, "no model means Codex's own");
  assert.deepEqual(args.slice(args.indexOf("-s"), args.indexOf("-s") + 2), [
    "-s",
    "read-only",
  ]);
  assert.deepEqual(
    args.filter((_, i) => args[i - 1] === "--add-dir"),
    ["/shared", "/more"],
  );
  assert.deepEqual(args.filter((_, i) => args[i - 1] === "-c"), [
    'model_reasoning_effort="high"',
    'approval_policy="on-request"',
    'openai_base_url="http://127.0.0.1:9/v1"',
    "model_providers.x.request_max_retries=0",
    "hide_agent_reasoning=false",
    'note="say \\"hi\\"\\n"',
  ]);
  assert.deepEqual(args.slice(-2), ["--", "go"]);
});

Deno.test("startArgs() lets a config pair replace the approval policy instead of passing it twice", () => {
  const args = codexProfile.startArgs(
    invocation("go", { config: { approval_policy: "untrusted" } }),
  );
  assert.deepEqual(
    args.filter((arg) => arg.startsWith("approval_policy=")),
    ['approval_policy="untrusted"'],
  );
});

Deno.test("resumeArgs() puts every exec flag before resume, then the thread id and text after --", () => {
  const args = codexProfile.resumeArgs(
    invocation("-steer: use tabs", {
      add_dirs: ["/shared"],
      config: { openai_base_url: "http://x/v1" },
    }),
    "01a22d00-c2e3-72e1-8321-a672c8a6311e",
  );
  const at = args.indexOf("resume");
  assert.ok(at > 0);
  assert.deepEqual(args.slice(at), [
    "resume",
    "--",
    "01a22d00-c2e3-72e1-8321-a672c8a6311e",
    "-steer: use tabs",
  ]);
  const before = args.slice(0, at);
  for (const flag of ["-s", "-C", "--add-dir", "-m", "--json"]) {
    assert.ok(before.includes(flag), `${flag} before resume`);
  }
  assert.deepEqual(before.slice(0, 3), [
    "exec",
    "--json",
    "--skip-git-repo-check",
  ]);
});

Deno.test("codex never takes live input: a steer interrupts and resumes", () => {
  assert.equal(codexProfile.liveInput(DEFAULT_AGENT_OPTIONS, 3), false);
  assert.equal(
    codexProfile.liveInput({ ...DEFAULT_AGENT_OPTIONS, steer_lane: "auto" }, 9),
    false,
  );
  assert.equal(codexProfile.input, undefined);
});

Deno.test("tomlValue() quotes strings as TOML basic strings and leaves numbers and booleans bare", () => {
  assert.equal(tomlValue("never"), '"never"');
  assert.equal(tomlValue('a"b\\c\u0001'), '"a\\"b\\\\c\\u0001"');
  assert.equal(tomlValue(3), "3");
  assert.equal(tomlValue(true), "true");
  assert.equal(tomlValue(Number.NaN), '"NaN"');
});

Deno.test("parser reads a real conversation: session id, thinking, messages, tool calls, usage, terminal", async () => {
  const lines = await fixture("conversation");
  const { events, sessions, terminal } = parse(lines);
  assert.deepEqual(sessions, ["01a22d00-3bb5-7bd0-9691-762f5078db1c"]);
  assert.deepEqual(terminal, [lines.length - 1]);
  assert.deepEqual(
    ofType(events, "message_streamed").map((e) => e.data),
    [
      { delta: "I should create the file first.", kind: "thinking" },
      { delta: "Creating the file.", kind: "text" },
      { delta: "All done.", kind: "text" },
    ],
  );
  assert.deepEqual(
    ofType(events, "message_received").map((e) => e.data.content),
    ["Creating the file.", "All done."],
  );
  const started = ofType(events, "tool_call_started");
  assert.deepEqual(started.map((e) => [e.data.tool_name, e.data.tool_input]), [
    ["file_change", { changes: [{ path: "<cwd>/hello.txt", kind: "add" }] }],
    ["file_change", { changes: [{ path: "<cwd>/hello.txt", kind: "update" }] }],
    ["command_execution", { command: "/bin/bash -lc 'cat hello.txt'" }],
    ["command_execution", { command: "/bin/bash -lc 'cat missing.txt'" }],
  ]);
  const ended = events.filter((e) =>
    e.type === "tool_call_completed" || e.type === "tool_call_failed"
  );
  assert.deepEqual(
    ended.map((e) => e.data.tool_call_id),
    started.map((e) => e.data.tool_call_id),
  );
  assert.equal(new Set(started.map((e) => e.data.tool_call_id)).size, 4);
  assert.deepEqual(ended.map((e) => [e.type, e.data.is_error]), [
    ["tool_call_completed", false],
    ["tool_call_completed", false],
    ["tool_call_completed", false],
    ["tool_call_failed", true],
  ]);
  assert.equal(ended[2]!.data.tool_output, "hello\nthere\n");
  assert.equal(
    ended[3]!.data.tool_output,
    "cat: missing.txt: No such file or directory\n",
  );
  assert.deepEqual(ofType(events, "token_usage_updated").map((e) => e.data), [
    { input_tokens: 920, output_tokens: 55, total_tokens: 975 },
  ]);
  assert.deepEqual(events.at(-1), {
    type: "run_completed",
    data: { stop_reason: "end_turn" },
  });
  assert.equal(ofType(events, "error_occurred").length, 0);
});

Deno.test("parser: an interrupted process has no terminal line and its exit 1 is no failure; the resumed one keeps the thread id", async () => {
  const first = parse(await fixture("interrupted"));
  assert.deepEqual(first.terminal, []);
  assert.equal(
    first.parser.exit(exit({ code: 1, interrupted: true })),
    null,
  );
  const second = parse(await fixture("resumed"));
  assert.deepEqual(second.sessions, first.sessions);
  assert.equal(second.terminal.length, 1);
  assert.deepEqual(
    ofType(second.events, "message_received").map((e) => e.data.content),
    ["Resumed and done."],
  );
});

Deno.test("parser: tool call ids stay unique across processes although Codex restarts item ids", () => {
  const line = JSON.stringify({
    type: "item.started",
    item: { id: "item_0", type: "command_execution", command: "ls" },
  });
  const a = parse([line]).events[0]!.data.tool_call_id;
  const b = parse([line]).events[0]!.data.tool_call_id;
  assert.equal(typeof a, "string");
  assert.notEqual(a, b);
  assert.ok(String(a).endsWith("item_0"));
});

const FAILURES: [string, string, RegExp][] = [
  ["auth_401", "provider_auth_claim", /401 Unauthorized/],
  ["rate_limit_429", "provider_rate_limit", /429 Too Many Requests/],
  ["rate_limit_429_no_retries", "provider_rate_limit", /429/],
  ["overloaded_529", "provider_capacity", /529/],
  ["unavailable_503", "provider_capacity", /at capacity/],
  ["server_error_500", "provider_capacity", /high demand/],
  ["dropped_stream", "transport_disconnect", /stream disconnected/],
];

for (const [name, kind, words] of FAILURES) {
  Deno.test(`parser classifies the real ${name} turn.failed as ${kind}, and its reconnect errors emit nothing`, async () => {
    const lines = await fixture(name);
    const { events, terminal } = parse(lines);
    assert.deepEqual(terminal, [lines.length - 1]);
    assert.deepEqual(events.map((e) => e.type), [
      "error_occurred",
      "run_failed",
    ]);
    const data = events[0]!.data;
    assert.equal(data.error_code, kind);
    assert.match(String(data.error_message), words);
    assert.deepEqual(data.provider_error, {
      provider: "codex",
      kind,
      message: data.error_message,
    });
    const envelope = classifyFailure(data.provider_error);
    assert.equal(envelope.failure_class, kind);
  });
}

Deno.test("parser: a stream Codex reconnected by itself ends as a success with no error event", async () => {
  const { events } = parse(await fixture("dropped_stream_retried"));
  assert.equal(ofType(events, "error_occurred").length, 0);
  assert.equal(events.at(-1)!.type, "run_completed");
});

Deno.test("parser: error items (warnings) emit nothing; turn.failed without a message falls back to the last error", () => {
  const { events } = parse([
    '{"type":"thread.started","thread_id":"t-1"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `x` not found."}}',
    '{"type":"error","message":"unexpected status 429 Too Many Requests: slow down"}',
    '{"type":"turn.failed","error":{}}',
  ]);
  assert.deepEqual(events.map((e) => e.type), ["error_occurred", "run_failed"]);
  assert.equal(events[0]!.data.error_code, "provider_rate_limit");
  assert.match(String(events[0]!.data.error_message), /slow down/);
  const bare = parse(['{"type":"turn.failed"}']).events;
  assert.equal(bare[0]!.data.error_message, "turn failed");
});

Deno.test("parser turns mcp_tool_call, web_search and todo_list items into tool calls", () => {
  const { events } = parse([
    '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[{"type":"text","text":"found"}]},"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"get","arguments":{},"error":{"message":"boom"},"status":"failed"}}',
    '{"type":"item.completed","item":{"id":"item_3","type":"web_search","query":"deno serve"}}',
    '{"type":"item.started","item":{"id":"item_4","type":"todo_list","items":[{"text":"a","completed":false}]}}',
    '{"type":"item.updated","item":{"id":"item_4","type":"todo_list","items":[{"text":"a","completed":true}]}}',
    '{"type":"item.completed","item":{"id":"item_4","type":"todo_list","items":[{"text":"a","completed":true}]}}',
  ]);
  assert.deepEqual(events.map((e) => [e.type, e.data.tool_name]), [
    ["tool_call_started", "mcp__docs__search"],
    ["tool_call_completed", "mcp__docs__search"],
    ["tool_call_started", "mcp__docs__get"],
    ["tool_call_failed", "mcp__docs__get"],
    ["tool_call_started", "web_search"],
    ["tool_call_completed", "web_search"],
    ["tool_call_started", "todo_list"],
    ["tool_call_completed", "todo_list"],
  ]);
  assert.deepEqual(events[0]!.data.tool_input, { q: "x" });
  assert.equal(events[1]!.data.tool_output, "found");
  assert.equal(events[3]!.data.tool_output, "boom");
  assert.deepEqual(events[4]!.data.tool_input, { query: "deno serve" });
});

Deno.test("parser survives hostile lines: not JSON, wrong types, unknown events, huge lines", () => {
  const huge = JSON.stringify({
    type: "item.completed",
    item: { id: "item_9", type: "agent_message", text: "x".repeat(2_000_000) },
  });
  const { events, sessions, terminal } = parse([
    "Reading additional input from stdin...",
    "",
    "[]",
    "42",
    "null",
    '"turn.completed"',
    '{"type":42}',
    '{"type":"thread.started","thread_id":7}',
    '{"type":"thread.started"}',
    '{"type":"item.completed","item":"nope"}',
    '{"type":"item.completed","item":{"id":5,"type":"command_execution","command":["a"],"exit_code":"1","aggregated_output":{}}}',
    '{"type":"item.started","item":{"type":"file_change","changes":"a.txt"}}',
    '{"type":"item.completed","item":{"type":"reasoning","text":null}}',
    '{"type":"item.completed","item":{"type":"hologram","text":"x"}}',
    '{"type":"brand.new.event","payload":{}}',
    '{"type":"error","message":{"nested":true}}',
    huge,
    '{"type":"turn.completed","usage":{"input_tokens":"12","output_tokens":-4}}',
  ]);
  assert.deepEqual(sessions, []);
  assert.deepEqual(terminal, [17]);
  const started = ofType(events, "tool_call_started");
  assert.deepEqual(started.map((e) => e.data.tool_input), [
    { command: "" },
    { changes: [] },
  ]);
  assert.equal(ofType(events, "message_received").length, 1);
  assert.deepEqual(ofType(events, "token_usage_updated")[0]!.data, {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
  });
});

Deno.test("exit(): nothing after a terminal line or a signal of ours; a refused resume or bad argv is a config claim", () => {
  const parser = codexProfile.parser();
  assert.equal(parser.exit(exit({ code: 0, sawTerminal: true })), null);
  assert.equal(parser.exit(exit({ code: 1, interrupted: true })), null);
  assert.equal(
    parser.exit(exit({ code: 1 })),
    null,
    "the core says transport_disconnect",
  );
  assert.deepEqual(
    parser.exit(exit({
      stderr: [
        "Error: thread/resume: thread/resume failed: no rollout found for thread id 01a (code -32600)",
      ],
    })),
    {
      kind: "provider_config_claim",
      message:
        "Error: thread/resume: thread/resume failed: no rollout found for thread id 01a (code -32600)",
    },
  );
  assert.equal(
    parser.exit(
      exit({ code: 2, stderr: ["error: unexpected argument '-s' found"] }),
    )
      ?.kind,
    "provider_config_claim",
  );
});

Deno.test("exit() without a terminal line names the last auth, rate or capacity error Codex reported", () => {
  const { parser } = parse([
    '{"type":"error","message":"Reconnecting... 2/5 (unexpected status 401 Unauthorized: {}, url: ws://127.0.0.1:4290/v1/responses)"}',
  ]);
  assert.equal(parser.exit(exit({ code: 1 }))?.kind, "provider_auth_claim");
  const network = parse([
    '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}',
  ]);
  assert.equal(
    network.parser.exit(exit({ code: null, signal: "SIGKILL" })),
    null,
  );
});

Deno.test("classifyCodexError() reads the status Codex names before any words, and never a port", () => {
  assert.equal(
    classifyCodexError(
      "unexpected status 429 Too Many Requests: Rate limit for api key sk-x, url: http://127.0.0.1:401/v1",
    ),
    "provider_rate_limit",
  );
  assert.equal(
    classifyCodexError(
      "stream disconnected, url: http://127.0.0.1:4013/v1/responses",
    ),
    "transport_disconnect",
  );
  assert.equal(
    classifyCodexError("unexpected status 400 Bad Request: unknown model"),
    "provider_config_claim",
  );
  assert.equal(
    classifyCodexError("The server is overloaded"),
    "provider_capacity",
  );
  assert.equal(classifyCodexError("something odd"), "provider_runtime_claim");
});
