/**
 * The Gemini CLI adapter: its argv, and its parser over lines the real CLI
 * (0.61.0) printed against the scripted server
 * (`tests/testdata/agents/gemini/`), garbage, and every failure it reports.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../../lib/packet/agent_options.ts";
import type {
  CliExit,
  CliInvocation,
  CliParser,
  LineResult,
} from "../../../lib/providers/cli_profile.ts";
import {
  GEMINI_DEFAULT_MODEL,
  geminiProfile,
} from "../../../lib/providers/gemini.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";

const DATA = fileURLToPath(
  new URL("../../testdata/agents/gemini/", import.meta.url),
);

function invocation(
  text: string,
  options: Partial<AgentOptions> = {},
  model: string | null = null,
): CliInvocation {
  return {
    text,
    cwd: "/work/repo",
    model,
    options: { ...DEFAULT_AGENT_OPTIONS, ...options },
    liveInput: false,
  };
}

/** Everything a parser made of some lines. */
interface Parsed {
  events: ProviderEvent[];
  results: LineResult[];
  session_id?: string;
  model?: string;
  terminals: number;
}

function feed(parser: CliParser, lines: string[]): Parsed {
  const parsed: Parsed = { events: [], results: [], terminals: 0 };
  for (const text of lines) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const result = parser.line(text, json);
    parsed.results.push(result);
    parsed.events.push(...result.events);
    if (result.session_id) parsed.session_id ??= result.session_id;
    if (result.model) parsed.model ??= result.model;
    if (result.terminal) parsed.terminals++;
  }
  return parsed;
}

function fixture(name: string): string[] {
  return Deno.readTextFileSync(`${DATA}${name}`).split("\n").filter((l) =>
    l !== ""
  );
}

function parseFixture(name: string): Parsed & { parser: CliParser } {
  const parser = geminiProfile.parser();
  return { ...feed(parser, fixture(`${name}.jsonl`)), parser };
}

function exit(over: Partial<CliExit>): CliExit {
  return {
    code: 0,
    signal: null,
    stderr: [],
    interrupted: false,
    sawTerminal: false,
    ...over,
  };
}

function failureKind(events: ProviderEvent[]): string | undefined {
  const failed = events.find((e) => e.type === "run_failed");
  const error = failed?.data.provider_error as { kind?: string } | undefined;
  return error?.kind;
}

Deno.test("startArgs() puts the prompt in one --prompt= argument, asks for stream-json, skips the trust check and names the default model", () => {
  const args = geminiProfile.startArgs(invocation("Fix the bug"));
  assert.deepEqual(args, [
    "--prompt=Fix the bug",
    "--output-format",
    "stream-json",
    "--skip-trust",
    "-m",
    GEMINI_DEFAULT_MODEL,
  ]);
  assert.equal(geminiProfile.defaultModel, GEMINI_DEFAULT_MODEL);
  assert.notEqual(GEMINI_DEFAULT_MODEL, "auto");
});

Deno.test("startArgs() keeps a prompt that starts with a dash, or spans lines, in its --prompt= argument", () => {
  for (const text of ["-x do it", "--help", "a\nb=c --flag\n"]) {
    const args = geminiProfile.startArgs(invocation(text));
    assert.equal(args[0], `--prompt=${text}`);
    assert.equal(args.filter((a) => a.includes(text)).length, 1);
  }
});

Deno.test("startArgs() maps the model, approval_mode and add_dirs", () => {
  const args = geminiProfile.startArgs(invocation("go", {
    approval_mode: "yolo",
    add_dirs: ["/shared/lib", "/other"],
  }, "gemini-2.5-flash"));
  assert.deepEqual(args.slice(4), [
    "-m",
    "gemini-2.5-flash",
    "--approval-mode",
    "yolo",
    "--include-directories",
    "/shared/lib",
    "--include-directories",
    "/other",
  ]);
  const plain = geminiProfile.startArgs(invocation("go"));
  assert.ok(!plain.includes("--approval-mode"));
  assert.ok(!plain.includes("--include-directories"));
});

Deno.test("resumeArgs() names the session first, then the same flags with the steer's text", () => {
  const inv = invocation("Use tabs.", { approval_mode: "auto_edit" }, "m1");
  assert.deepEqual(geminiProfile.resumeArgs(inv, "abc-123"), [
    "--resume",
    "abc-123",
    ...geminiProfile.startArgs(inv),
  ]);
});

Deno.test("the profile takes no live input, trusts the workspace through its environment too, and runs the CLI as one process", () => {
  assert.equal(geminiProfile.liveInput(DEFAULT_AGENT_OPTIONS, 3), false);
  assert.equal(
    geminiProfile.liveInput(
      { ...DEFAULT_AGENT_OPTIONS, steer_lane: "auto" },
      9,
    ),
    false,
  );
  assert.equal(geminiProfile.input, undefined);
  assert.deepEqual(geminiProfile.env?.(invocation("x")), {
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    GEMINI_CLI_NO_RELAUNCH: "true",
  });
  assert.equal(geminiProfile.name, "gemini");
  assert.equal(geminiProfile.binName, "gemini");
});

Deno.test("the parser reads a tool-using run: session, deltas, messages, tool calls with their inputs and outputs, usage, completion", () => {
  const { events, session_id, model, terminals, results } = parseFixture(
    "tools",
  );
  assert.match(session_id ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(model, "gemini-2.5-pro");
  assert.equal(terminals, 1);
  assert.equal(results.at(-1)?.terminal, true);
  const types = events.map((e) => e.type);
  assert.deepEqual(types, [
    "message_streamed",
    "message_streamed",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "message_streamed",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_started",
    "tool_call_completed",
    "message_streamed",
    "message_streamed",
    "message_streamed",
    "message_received",
    "token_usage_updated",
    "run_completed",
  ]);
  const received = events.filter((e) => e.type === "message_received").map((
    e,
  ) => e.data.content);
  assert.deepEqual(received, [
    "Creating the file.",
    "Editing it.",
    "All done here.",
  ]);
  assert.ok(
    events.filter((e) => e.type === "message_streamed").every((e) =>
      e.data.kind === "text" && typeof e.data.delta === "string"
    ),
  );
  const started = events.filter((e) => e.type === "tool_call_started");
  assert.deepEqual(started.map((e) => e.data.tool_name), [
    "write_file",
    "replace",
    "run_shell_command",
  ]);
  assert.deepEqual(started[0]?.data.tool_input, {
    file_path: "hello.txt",
    content: "hello\nworld\n",
  });
  assert.deepEqual(started[1]?.data.tool_input, {
    file_path: "hello.txt",
    old_string: "world",
    new_string: "there",
    instruction: 'Replace "world" with "there".',
  });
  assert.equal(
    (started[2]?.data.tool_input as { command?: string }).command,
    "cat hello.txt",
  );
  const completed = events.filter((e) => e.type === "tool_call_completed");
  completed.forEach((e, i) => {
    assert.equal(e.data.tool_call_id, started[i]?.data.tool_call_id);
    assert.equal(e.data.tool_name, started[i]?.data.tool_name);
    assert.equal(e.data.is_error, false);
  });
  assert.equal(completed[0]?.data.tool_output, "");
  assert.equal(completed[2]?.data.tool_output, "hello\nthere");
  const usage = events.find((e) => e.type === "token_usage_updated");
  assert.deepEqual(usage?.data, {
    input_tokens: 1000,
    output_tokens: 70,
    total_tokens: 1070,
  });
  assert.deepEqual(events.at(-1), {
    type: "run_completed",
    data: { stop_reason: "end_turn" },
  });
});

Deno.test("the parser reports tools a headless CLI refused (not registered outside yolo) as failed calls, and the turn as completed", () => {
  const { events } = parseFixture("tools_refused");
  const failed = events.filter((e) => e.type === "tool_call_failed");
  assert.equal(failed.length, 3);
  for (const event of failed) {
    assert.equal(event.data.is_error, true);
    assert.match(String(event.data.tool_output), /not found/);
  }
  assert.equal(failed[0]?.data.tool_name, "write_file");
  assert.equal(events.at(-1)?.type, "run_completed");
});

Deno.test("exit() after a successful result, or after our own signal, is not a failure", () => {
  const { parser } = parseFixture("tools");
  assert.equal(parser.exit(exit({ sawTerminal: true })), null);
  const interrupted = parseFixture("interrupted");
  assert.equal(interrupted.terminals, 0);
  assert.equal(interrupted.events.length, 0);
  assert.match(interrupted.session_id ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(
    interrupted.parser.exit(exit({ code: 0, interrupted: true })),
    null,
  );
});

Deno.test("the parser reads a resumed session: the same init shape, the steer's answer, usage", () => {
  const { events, session_id, terminals } = parseFixture("resumed");
  assert.match(session_id ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(terminals, 1);
  assert.deepEqual(
    events.filter((e) => e.type === "message_received").map((e) =>
      e.data.content
    ),
    ["Steer received."],
  );
  assert.equal(events.at(-1)?.type, "run_completed");
});

for (
  const [name, kind, text] of [
    ["auth_401", "provider_auth_claim", /UNAUTHENTICATED/],
    ["rate_limit_429", "provider_rate_limit", /Resource has been exhausted/],
    ["capacity_503", "provider_capacity", /overloaded/],
    ["capacity_529", "provider_capacity", /529/],
    ["dropped", "transport_disconnect", /terminated/],
    ["max_session_turns", "provider_runtime_claim", /max session turns/],
  ] as const
) {
  Deno.test(`a result with status error from ${name}.jsonl is a ${kind} failure, and exit() adds none`, () => {
    const { events, parser, terminals } = parseFixture(name);
    assert.equal(terminals, 1);
    assert.equal(failureKind(events), kind);
    const occurred = events.filter((e) => e.type === "error_occurred");
    assert.equal(occurred.length, 1);
    assert.match(String(occurred[0]?.data.error_message), text);
    assert.equal(events.at(-1)?.type, "run_failed");
    assert.equal(events.some((e) => e.type === "run_completed"), false);
    const code = { auth_401: 145, rate_limit_429: 173 }[name as string] ?? 1;
    assert.equal(parser.exit(exit({ code, sawTerminal: true })), null);
  });
}

Deno.test("a dropped stream's streamed text is delivered as a message before the failure", () => {
  const { events } = parseFixture("dropped");
  const received = events.find((e) => e.type === "message_received");
  assert.equal(received?.data.content, "Starting");
  const index = events.indexOf(received!);
  assert.ok(index < events.findIndex((e) => e.type === "error_occurred"));
});

function stderrOf(name: string): string[] {
  return fixture(`${name}.stderr.txt`);
}

Deno.test("exit 41 (no auth) is provider_auth_claim with the CLI's words", () => {
  const failure = geminiProfile.parser().exit(
    exit({ code: 41, stderr: stderrOf("no_auth") }),
  );
  assert.equal(failure?.kind, "provider_auth_claim");
  assert.match(failure?.message ?? "", /Please set an Auth method/);
});

Deno.test("exit 41 from a base URL without a chosen auth type (the gateway auth type, refused headless) is provider_auth_claim", () => {
  const failure = geminiProfile.parser().exit(
    exit({ code: 41, stderr: stderrOf("gateway_auth") }),
  );
  assert.equal(failure?.kind, "provider_auth_claim");
  assert.match(failure?.message ?? "", /Invalid auth method selected/);
});

Deno.test("exit 42 (a session --resume cannot find) is provider_config_claim", () => {
  const failure = geminiProfile.parser().exit(
    exit({ code: 42, stderr: stderrOf("bad_resume") }),
  );
  assert.equal(failure?.kind, "provider_config_claim");
  assert.match(failure?.message ?? "", /Error resuming session/);
});

Deno.test("exit 55 (untrusted folder) is provider_config_claim, its message without terminal colours", () => {
  const failure = geminiProfile.parser().exit(
    exit({ code: 55, stderr: stderrOf("untrusted") }),
  );
  assert.equal(failure?.kind, "provider_config_claim");
  assert.match(failure?.message ?? "", /not running in a trusted directory/);
  assert.equal(failure?.message.includes("\x1b"), false);
});

Deno.test("exit codes 52, 53, 54 and 130 map to config, runtime, runtime and cancelled", () => {
  const expected: [number, string][] = [
    [52, "provider_config_claim"],
    [53, "provider_runtime_claim"],
    [54, "provider_runtime_claim"],
    [130, "user_cancelled"],
  ];
  for (const [code, kind] of expected) {
    assert.equal(
      geminiProfile.parser().exit(exit({ code, stderr: ["boom"] }))?.kind,
      kind,
      `exit ${code}`,
    );
  }
});

Deno.test("an API error exit without a result line is classified from stderr", () => {
  const auth = geminiProfile.parser().exit(
    exit({ code: 145, stderr: stderrOf("auth_401") }),
  );
  assert.equal(auth?.kind, "provider_auth_claim");
  const rate = geminiProfile.parser().exit(
    exit({ code: 173, stderr: stderrOf("rate_limit_429") }),
  );
  assert.equal(rate?.kind, "provider_rate_limit");
  const dropped = geminiProfile.parser().exit(
    exit({ code: 1, stderr: stderrOf("dropped") }),
  );
  assert.equal(dropped?.kind, "transport_disconnect");
});

Deno.test("an exit without a result and nothing to say is left to the core", () => {
  const parser = geminiProfile.parser();
  feed(parser, fixture("interrupted.jsonl"));
  assert.equal(parser.exit(exit({ code: 0 })), null);
  assert.equal(
    parser.exit(
      exit({ code: 1, stderr: ["Warning: 256-color support not detected."] }),
    ),
    null,
  );
  assert.equal(parser.exit(exit({ code: null, signal: "SIGKILL" })), null);
});

Deno.test("an error event is a warning: no events, the run goes on, and an exit without a result quotes it", () => {
  const parser = geminiProfile.parser();
  const { events } = feed(parser, [
    '{"type":"init","session_id":"s1","model":"m"}',
    '{"type":"message","role":"assistant","content":"Hi","delta":true}',
    '{"type":"error","timestamp":"t","severity":"warning","message":"Loop detected, stopping execution"}',
  ]);
  assert.deepEqual(events.map((e) => e.type), [
    "message_streamed",
    "message_received",
  ]);
  assert.equal(events.some((e) => e.type === "error_occurred"), false);
  const failure = parser.exit(exit({ code: 53, stderr: [] }));
  assert.equal(failure?.kind, "provider_runtime_claim");
  assert.match(failure?.message ?? "", /Loop detected/);
});

Deno.test("a whole assistant message (no delta) is a message_received of its own", () => {
  const { events } = feed(geminiProfile.parser(), [
    '{"type":"message","role":"assistant","content":"Part","delta":true}',
    '{"type":"message","role":"assistant","content":"Whole answer."}',
    '{"type":"result","status":"success","stats":{}}',
  ]);
  assert.deepEqual(events.map((e) => [e.type, e.data.content ?? null]), [
    ["message_streamed", null],
    ["message_received", "Whole answer."],
    ["run_completed", null],
  ]);
});

Deno.test("garbage lines give no events and never throw", () => {
  const parser = geminiProfile.parser();
  const huge = JSON.stringify({
    type: "message",
    role: "assistant",
    content: "x".repeat(3_000_000),
    delta: true,
  });
  const { events, session_id, terminals } = feed(parser, [
    "not json at all",
    "",
    "[1,2,3]",
    "null",
    "42",
    '"init"',
    "{}",
    '{"type":7}',
    '{"type":"mystery","session_id":"nope"}',
    '{"type":"init","session_id":12,"model":["m"]}',
    '{"type":"message","role":"user","content":"echo"}',
    '{"type":"message","role":"assistant","content":{"no":"text"},"delta":true}',
    '{"type":"tool_use","tool_id":5,"tool_name":null,"parameters":"rm -rf /"}',
    '{"type":"tool_result","tool_id":[],"status":"success","output":{"a":1}}',
    '{"type":"error","message":{"deep":true}}',
    '{"type":"result","status":"success","stats":{"input_tokens":"many","output_tokens":-5}}',
    huge,
    '{"type":"result","status":"error","error":"just a string"}',
  ]);
  assert.equal(session_id, undefined);
  assert.equal(terminals, 2);
  const started = events.find((e) => e.type === "tool_call_started");
  assert.deepEqual(started?.data, {
    tool_call_id: "",
    tool_name: "unknown",
    tool_input: {},
  });
  const completed = events.find((e) => e.type === "tool_call_completed");
  assert.equal(completed?.data.tool_output, "");
  assert.equal(events.some((e) => e.type === "token_usage_updated"), false);
  const received = events.filter((e) => e.type === "message_received");
  assert.ok(
    received.every((e) => String(e.data.content).length <= 1_000_000),
  );
  assert.equal(failureKind(events), "provider_runtime_claim");
});
