import assert from "node:assert/strict";
import { claudeProfile } from "../../../lib/providers/claude.ts";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../../lib/packet/agent_options.ts";
import type {
  CliInvocation,
  LineResult,
} from "../../../lib/providers/cli_profile.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";

const TESTDATA = new URL("../../testdata/agents/claude/", import.meta.url);

function invocation(
  overrides: Partial<CliInvocation> = {},
  options: Partial<AgentOptions> = {},
): CliInvocation {
  return {
    text: "Fix the test",
    cwd: "/repo",
    model: null,
    options: { ...DEFAULT_AGENT_OPTIONS, ...options },
    liveInput: false,
    ...overrides,
  };
}

function parseLines(lines: string[]): LineResult[] {
  const parser = claudeProfile.parser();
  return lines.map((text) => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return parser.line(text, json);
  });
}

async function fixture(name: string): Promise<LineResult[]> {
  const text = await Deno.readTextFile(new URL(`${name}.jsonl`, TESTDATA));
  return parseLines(text.split("\n").filter((line) => line !== ""));
}

function events(results: LineResult[]): ProviderEvent[] {
  return results.flatMap((r) => r.events);
}

function failureKinds(results: LineResult[]): unknown[] {
  return events(results).filter((e) => e.type === "run_failed").map((e) =>
    e.data.provider_error?.kind
  );
}

Deno.test("claude startArgs() streams JSON verbosely and ends with -- and the prompt", () => {
  assert.deepEqual(claudeProfile.startArgs(invocation()), [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--",
    "Fix the test",
  ]);
});

Deno.test("claude startArgs() maps every agent option to its flag", () => {
  const args = claudeProfile.startArgs(invocation({ model: "opus" }, {
    permission_mode: "acceptEdits",
    allowed_tools: ["Read", "Edit", "Bash(git *)"],
    max_turns: 7,
    add_dirs: ["/shared", "/other"],
    reasoning_effort: "high",
  }));
  assert.deepEqual(args, [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    "opus",
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    "Read,Edit,Bash(git *)",
    "--max-turns",
    "7",
    "--add-dir",
    "/shared",
    "--add-dir",
    "/other",
    "--effort",
    "high",
    "--",
    "Fix the test",
  ]);
});

Deno.test("claude startArgs() passes what is left of the money budget as --max-budget-usd", () => {
  const args = claudeProfile.startArgs({
    ...invocation({}, {}),
    maxBudgetUsd: 0.0375,
  });
  const at = args.indexOf("--max-budget-usd");
  assert.ok(at > 0, args.join(" "));
  assert.equal(Number(args[at + 1]), 0.0375);
  assert.ok(at < args.indexOf("--"), "before the prompt");
  assert.ok(
    !claudeProfile.startArgs(invocation({}, {})).includes("--max-budget-usd"),
  );
});

Deno.test("claude startArgs() keeps a prompt that looks like a flag after --", () => {
  const args = claudeProfile.startArgs(
    invocation({ text: "--help me" }, { add_dirs: ["/x"] }),
  );
  assert.deepEqual(args.slice(-4), ["--add-dir", "/x", "--", "--help me"]);
});

Deno.test("claude resumeArgs() names the session and ends with the steer", () => {
  const args = claudeProfile.resumeArgs(
    invocation({ text: "Also update the docs" }, { max_turns: 3 }),
    "9ac86da6-0000-4000-8000-000000000001",
  );
  assert.deepEqual(args, [
    "-p",
    "--resume",
    "9ac86da6-0000-4000-8000-000000000001",
    "--output-format",
    "stream-json",
    "--verbose",
    "--max-turns",
    "3",
    "--",
    "Also update the docs",
  ]);
});

Deno.test("claude takes live input only when steering is allowed on the auto lane", () => {
  const auto = DEFAULT_AGENT_OPTIONS;
  const resume: AgentOptions = { ...auto, steer_lane: "resume" };
  assert.equal(claudeProfile.liveInput(auto, 3), true);
  assert.equal(claudeProfile.liveInput(auto, 0), false);
  assert.equal(claudeProfile.liveInput(resume, 3), false);
});

Deno.test("claude live-input argv reads stream-json from stdin and has no positional prompt", () => {
  const args = claudeProfile.startArgs(
    invocation({ liveInput: true }, { add_dirs: ["/x"] }),
  );
  assert.deepEqual(args.slice(-5), [
    "--add-dir",
    "/x",
    "--input-format",
    "stream-json",
    "--replay-user-messages",
  ]);
  assert.ok(!args.includes("Fix the test"));
  assert.ok(!args.includes("--"));
});

Deno.test("claude input frames: a user frame per prompt; a steer interrupts first, then queues its frame, whose uuid its echo carries", () => {
  const input = claudeProfile.input!;
  const [prompt] = input.prompt("first").map((f) => JSON.parse(f));
  assert.equal(prompt.type, "user");
  assert.deepEqual(prompt.message, {
    role: "user",
    content: [{ type: "text", text: "first" }],
  });
  assert.equal(prompt.parent_tool_use_id, null);
  assert.equal(prompt.session_id, "");
  assert.match(prompt.uuid, /^[0-9a-f-]{36}$/);
  const { frames, echo } = input.steer("change course");
  const steer = frames.map((f) => JSON.parse(f));
  assert.equal(steer.length, 2);
  assert.equal(steer[0].type, "control_request");
  assert.deepEqual(steer[0].request, { subtype: "interrupt" });
  assert.equal(typeof steer[0].request_id, "string");
  assert.equal(steer[1].type, "user");
  assert.equal(steer[1].message.content[0].text, "change course");
  assert.equal(
    steer[1].uuid,
    echo,
    "the echo to wait for is the steer frame's",
  );
  for (
    const frame of [...input.prompt("a\nb"), ...input.steer("c\nd").frames]
  ) {
    assert.ok(!frame.includes("\n"), "one frame per line");
  }
});

Deno.test("claude env() cuts side traffic and never claims a sandbox on the operator's behalf", () => {
  const env = claudeProfile.env!(invocation());
  assert.equal(env.DISABLE_AUTOUPDATER, "1");
  assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1");
  const bypass = claudeProfile.env!(
    invocation({}, { permission_mode: "bypassPermissions" }),
  );
  assert.equal(bypass.IS_SANDBOX, undefined);
});

Deno.test("claude parser reads a whole captured run: session, model, thinking, text, tools, usage", async () => {
  const results = await fixture("success");
  const session = results.find((r) => r.session_id)?.session_id;
  assert.match(session ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(results[0]!.model, "claude-opus-5-5");
  const usage = events(results).filter((e) => e.type === "token_usage_updated");
  // Running input totals as each model message starts, then the result's.
  assert.deepEqual(usage.map((e) => e.data.input_tokens), [
    300,
    400,
    500,
    600,
    600,
  ]);
  const outputs = usage.map((e) => Number(e.data.output_tokens));
  assert.deepEqual(outputs, [...outputs].sort((a, b) => a - b));
  const all = events(results).filter((e) =>
    e !== usage[0] && e !== usage[1] && e !== usage[2] && e !== usage[3]
  );
  assert.deepEqual(all.map((e) => e.type), [
    "message_streamed",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_started",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_completed",
    "tool_call_started",
    "tool_call_completed",
    "message_streamed",
    "message_received",
    "token_usage_updated",
    "run_completed",
  ]);
  assert.deepEqual(all[0]!.data, {
    delta: "I should create the file first.",
    kind: "thinking",
  });
  assert.deepEqual(all[1]!.data, { delta: "Creating the file.", kind: "text" });
  assert.deepEqual(all[2]!.data, {
    content: "Creating the file.",
    role: "assistant",
  });
  const write = all[3]!.data;
  assert.equal(write.tool_name, "Write");
  assert.deepEqual(write.tool_input, {
    file_path: "<tmp>/ws/hello.txt",
    content: "hello\nworld\n",
  });
  const edit = all.find((e) =>
    e.type === "tool_call_started" && e.data.tool_name === "Edit"
  )!;
  assert.deepEqual(edit.data.tool_input, {
    replace_all: false,
    file_path: "<tmp>/ws/hello.txt",
    old_string: "world",
    new_string: "there",
  });
  const bash = all.filter((e) => e.type === "tool_call_completed").at(-1)!;
  assert.deepEqual(bash.data, {
    tool_call_id: all[9]!.data.tool_call_id,
    tool_name: "Bash",
    tool_output: "hello\nthere",
    is_error: false,
  });
  const completedIds = all.filter((e) => e.type === "tool_call_completed")
    .map((e) => e.data.tool_call_id);
  const startedIds = all.filter((e) => e.type === "tool_call_started")
    .map((e) => e.data.tool_call_id);
  assert.deepEqual(new Set(completedIds), new Set(startedIds));
  assert.deepEqual(all.at(-2)!.data, {
    input_tokens: 600,
    output_tokens: 100,
    total_tokens: 700,
    cost_usd: 0.0044,
  });
  assert.deepEqual(all.at(-1)!.data, { stop_reason: "end_turn" });
  assert.deepEqual(
    results.map((r) => r.terminal === true).lastIndexOf(true),
    results.length - 1,
  );
  assert.equal(results.filter((r) => r.terminal).length, 1);
});

Deno.test("claude parser reports a failed tool with the CLI's error text", async () => {
  const all = events(await fixture("tool_error"));
  const failed = all.find((e) => e.type === "tool_call_failed")!;
  assert.equal(failed.data.tool_name, "Bash");
  assert.equal(failed.data.is_error, true);
  assert.match(String(failed.data.tool_output), /No such file or directory/);
  assert.equal(all.at(-1)!.type, "run_completed");
});

Deno.test("claude parser fails a run whose tools were denied with approval_denied", async () => {
  const results = await fixture("permission_denied");
  assert.deepEqual(failureKinds(results), ["approval_denied"]);
  const failed = events(results).find((e) => e.type === "run_failed")!;
  assert.match(String(failed.data.error_message), /Write/);
});

Deno.test("claude parser: the first authentication retry is fatal at once", async () => {
  const results = await fixture("auth_401_retrying");
  const fatal = results.filter((r) => r.fatal);
  assert.equal(fatal.length, 1, "one fatal, not one per retry");
  assert.equal(results.indexOf(fatal[0]!), 1, "on the first api_retry line");
  assert.equal(fatal[0]!.fatal!.kind, "provider_auth_claim");
  assert.match(fatal[0]!.fatal!.message, /401/);
});

Deno.test("claude parser classifies every captured API error", async () => {
  const cases: [string, string][] = [
    ["auth_401", "provider_auth_claim"],
    ["not_logged_in", "provider_auth_claim"],
    ["rate_limit_429", "provider_rate_limit"],
    ["overloaded_529", "provider_capacity"],
    ["server_error_500", "provider_runtime_claim"],
    ["bad_request_400", "provider_config_claim"],
    ["not_found_404", "provider_config_claim"],
    ["dropped", "transport_disconnect"],
    ["max_turns", "provider_config_claim"],
    ["unknown_session", "provider_config_claim"],
  ];
  for (const [name, kind] of cases) {
    const results = await fixture(name);
    assert.deepEqual(failureKinds(results), [kind], name);
    assert.ok(results.at(-1)!.terminal, `${name} ends with a terminal line`);
    const failed = events(results).find((e) => e.type === "run_failed")!;
    assert.notEqual(String(failed.data.error_message), "", name);
  }
  const auth = await fixture("auth_401");
  assert.equal(auth.filter((r) => r.fatal).length, 1);
  assert.equal(auth.find((r) => r.fatal)!.fatal!.kind, "provider_auth_claim");
});

Deno.test("claude parser reads limits from a result's subtype and terminal_reason", () => {
  const cases: [string, string][] = [
    [
      // Its --max-budget-usd ceiling is the runner's budget, passed on.
      '{"subtype":"error_max_budget_usd","is_error":true}',
      "budget_exhausted",
    ],
    [
      '{"subtype":"success","is_error":true,"terminal_reason":"prompt_too_long","result":"Prompt is too long"}',
      "provider_config_claim",
    ],
    [
      '{"subtype":"success","is_error":true,"terminal_reason":"model_error"}',
      "provider_runtime_claim",
    ],
    [
      '{"subtype":"error_during_execution","is_error":true,"api_error_status":529}',
      "provider_capacity",
    ],
    [
      '{"subtype":"success","is_error":false,"terminal_reason":"aborted_tools"}',
      "user_cancelled",
    ],
  ];
  for (const [fields, kind] of cases) {
    const line = `{"type":"result",${fields.slice(1)}`;
    assert.deepEqual(failureKinds(parseLines([line])), [kind], fields);
  }
});

Deno.test("claude parser marks an interrupted turn as cancelled, not as a provider failure", async () => {
  const results = await fixture("interrupted");
  assert.deepEqual(failureKinds(results), ["user_cancelled"]);
});

Deno.test("claude parser reads a steered stdin session: session id at init, two turns, running totals", async () => {
  for (const name of ["steer_stdin", "steer_stdin_2.1.197"]) {
    const results = await fixture(name);
    const ids = new Set(results.map((r) => r.session_id).filter(Boolean));
    assert.equal(ids.size, 1, name);
    const first = results.find((r) => r.session_id);
    assert.ok(first?.model, `${name}: the id comes with init's model`);
    const terminals = results.filter((r) => r.terminal);
    assert.equal(terminals.length, 2, name);
    assert.deepEqual(failureKinds([terminals[0]!]), ["user_cancelled"]);
    assert.equal(terminals[1]!.events.at(-1)!.type, "run_completed");
    const usage = events(results).filter((e) =>
      e.type === "token_usage_updated"
    );
    assert.ok(
      Number(usage[1]!.data.input_tokens) >=
        Number(usage[0]!.data.input_tokens),
      `${name}: totals never go down`,
    );
    const text = events(results).filter((e) => e.type === "message_received");
    assert.deepEqual(text.map((e) => e.data.content), ["Steered answer."]);
  }
});

Deno.test("claude parser ignores garbage, unknown types and wrong field types", () => {
  const lines = [
    "not json at all",
    "",
    "[1,2,3]",
    "null",
    '"a string"',
    '{"type":"mystery_event","session_id":"s-1"}',
    '{"type":"assistant","message":"not an object"}',
    '{"type":"assistant","message":{"content":"nope"}}',
    '{"type":"assistant","message":{"content":[null,1,{"type":"text","text":42},{"type":"tool_use","name":7,"input":"x"}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":5,"content":{"x":1}}]}}',
    '{"type":"system","subtype":"api_retry","error":"unknown","error_status":null}',
    '{"type":"result","usage":"none","modelUsage":[],"total_cost_usd":"free"}',
    `{"type":"assistant","message":{"content":[{"type":"text","text":"${
      "x".repeat(2_000_000)
    }"}]}}`,
  ];
  const results = parseLines(lines);
  assert.equal(results[5]!.session_id, "s-1");
  assert.deepEqual(results.slice(0, 8).flatMap((r) => r.events), []);
  assert.ok(results.every((r) => r.fatal === undefined));
  const tool = results[8]!.events.find((e) => e.type === "tool_call_started")!;
  assert.equal(tool.data.tool_name, "unknown");
  assert.deepEqual(tool.data.tool_input, {});
  assert.equal(results[9]!.events[0]!.type, "tool_call_completed");
  assert.deepEqual(results[10]!.events, []);
  assert.equal(results[11]!.terminal, true);
  assert.deepEqual(results[11]!.events[0]!.data, {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
  });
  assert.equal(results[12]!.events.length, 2);
});

Deno.test("claude exit() names a refused argv from stderr and leaves the rest to the core", () => {
  const parser = claudeProfile.parser();
  const base = {
    code: 1,
    signal: null,
    interrupted: false,
    sawTerminal: false,
  };
  assert.deepEqual(
    parser.exit({
      ...base,
      stderr: [
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
      ],
    })?.kind,
    "provider_config_claim",
  );
  assert.equal(
    parser.exit({ ...base, stderr: ["error: unknown option '--nope'"] })?.kind,
    "provider_config_claim",
  );
  assert.equal(parser.exit({ ...base, stderr: ["segfault"] }), null);
  assert.equal(parser.exit({ ...base, code: 0, stderr: [] }), null);
  assert.equal(
    parser.exit({
      ...base,
      sawTerminal: true,
      stderr: ["error: unknown option"],
    }),
    null,
  );
});

Deno.test("parser: the session id comes with system/init (and its model), not from the command_lifecycle lines before it", () => {
  const parser = claudeProfile.parser();
  const lifecycle = parser.line("", {
    type: "command_lifecycle",
    command_uuid: "u1",
    state: "started",
    session_id: "sess-1",
  });
  assert.equal(lifecycle.session_id, undefined);
  const init = parser.line("", {
    type: "system",
    subtype: "init",
    session_id: "sess-1",
    model: "claude-opus-5-5",
  });
  assert.equal(init.session_id, "sess-1");
  assert.equal(init.model, "claude-opus-5-5");
});
