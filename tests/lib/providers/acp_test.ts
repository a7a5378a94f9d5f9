/**
 * The ACP lane's pure parts: the mapping of `session/update` to canonical
 * events over lines the real `gemini --acp` (0.61.0) and
 * `claude-code-acp` (0.16.2) wrote (`tests/testdata/agents/acp/`), the
 * permission policy and its answers, the failure a prompt's end means, and
 * the restated text of a steer's prompt.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  AcpUpdates,
  promptErrorFailure,
  stopFailure,
} from "../../../lib/providers/_acp_updates.ts";
import {
  acpAllows,
  acpProvider,
  acpSteerPrompt,
  geminiAcpProvider,
  geminiAllows,
  permissionAnswer,
} from "../../../lib/providers/acp.ts";
import { DEFAULT_AGENT_OPTIONS } from "../../../lib/packet/agent_options.ts";
import type { Session } from "../../../lib/providers/provider.ts";
import { CARRY_ON } from "../../../lib/shared/carry_on.ts";
import type { EventData, ProviderEvent } from "../../../lib/shared/events.ts";

const DATA = fileURLToPath(
  new URL("../../testdata/agents/acp/", import.meta.url),
);

type Json = Record<string, unknown>;

function lines(name: string): Json[] {
  return Deno.readTextFileSync(`${DATA}${name}.jsonl`).split("\n")
    .filter((line) => line !== "").map((line) => JSON.parse(line));
}

/**
 * Replays an agent's lines the way the session does: updates mapped,
 * permission requests answered by `allow` (started, or denied), the
 * prompt's answer (the last response) ending it.
 */
function replay(
  name: string,
  allow: (kind: string) => boolean,
): { events: ProviderEvent[]; updates: AcpUpdates; answers: unknown[] } {
  const updates = new AcpUpdates();
  const events: ProviderEvent[] = [];
  const answers: unknown[] = [];
  const messages = lines(name);
  const last = messages.findLast((m) => "result" in m || "error" in m);
  for (const message of messages) {
    const params = message.params as Json | undefined;
    if (message.method === "session/update") {
      events.push(...updates.update(params));
    } else if (message.method === "session/request_permission") {
      const kind = updates.kindOf(params?.toolCall);
      const allowed = allow(kind);
      events.push(
        ...(allowed
          ? updates.permissionAsked(params?.toolCall)
          : updates.denied(params?.toolCall, `refused ${kind}`)),
      );
      answers.push(
        permissionAnswer(
          params?.options as { kind: string; optionId: string }[],
          allowed,
        ),
      );
    } else if (message === last && "result" in message) {
      events.push(...updates.promptEnded(message.result));
    }
  }
  return { events, updates, answers };
}

function ofType<T extends ProviderEvent["type"]>(
  events: ProviderEvent[],
  type: T,
): EventData<T>[] {
  return events.filter((e) => e.type === type).map((e) =>
    e.data as EventData<T>
  );
}

function update(kind: string, fields: Json = {}): Json {
  return { sessionId: "s1", update: { sessionUpdate: kind, ...fields } };
}

Deno.test("gemini's ACP turn maps to the stream_json lane's shapes: thinking, streamed text ended by each tool call, tools named by ACP kind, each edit's diff as tool_input.changes, usage from _meta.quota", () => {
  const { events } = replay("gemini_yolo", () => true);
  assert.deepEqual(events.map((e) => e.type), [
    "message_streamed", // thinking
    "message_streamed",
    "message_streamed",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "message_streamed",
    "message_received",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_started",
    "tool_call_completed",
    "message_streamed",
    "message_streamed",
    "message_received",
    "token_usage_updated",
  ]);
  // Gemini's empty thought subject ("****\n") is dropped.
  assert.deepEqual(events[0]!.data, {
    delta: "Let me write.",
    kind: "thinking",
  });
  assert.deepEqual(
    ofType(events, "message_received").map((m) => m.content),
    ["Writing the file.", "Editing.", "All done."],
  );
  const started = ofType(events, "tool_call_started");
  assert.deepEqual(started.map((s) => s.tool_name), [
    "edit",
    "edit",
    "execute",
  ]);
  assert.match(started[0]!.tool_call_id, /^write_file__/);
  assert.deepEqual(started[0]!.tool_input, {
    title: "Writing to hello.txt",
    path: "/work/repo/hello.txt",
  });
  assert.equal(started[2]!.tool_input.command, "cat hello.txt > seen.txt");
  const completed = ofType(events, "tool_call_completed");
  assert.ok(completed.every((c) => c.is_error === false));
  assert.deepEqual(completed[0]!.tool_input, {
    title: "Writing to hello.txt",
    path: "/work/repo/hello.txt",
    changes: [{
      path: "/work/repo/hello.txt",
      old_text: "",
      new_text: "hello\nworld\n",
    }],
  });
  assert.deepEqual((completed[1]!.tool_input as Json).changes, [{
    path: "/work/repo/hello.txt",
    old_text: "hello\nworld\n",
    new_text: "hello\nthere\n",
  }]);
  // The command carried no diff: no tool_input on its completion.
  assert.equal(completed[2]!.tool_input, undefined);
  assert.deepEqual(ofType(events, "token_usage_updated"), [{
    input_tokens: 1000,
    output_tokens: 70,
    total_tokens: 1070,
  }]);
});

Deno.test("claude-code-acp's two announcements of each tool give one tool_call_started that carries the input; the announced diff goes on the completion; outputs are the raw output, code fences dropped", () => {
  const { events, answers } = replay("claude_code_acp_allowed", () => true);
  const started = ofType(events, "tool_call_started");
  assert.deepEqual(started.map((s) => s.tool_name), [
    "edit",
    "read",
    "edit",
    "execute",
  ]);
  assert.equal(
    new Set(started.map((s) => s.tool_call_id)).size,
    started.length,
  );
  assert.deepEqual(started[0]!.tool_input, {
    file_path: "/work/repo/hello.txt",
    content: "hello\nworld\n",
    title: "Write /work/repo/hello.txt",
  });
  assert.equal(started[2]!.tool_input.old_string, "world");
  assert.equal(started[3]!.tool_input.command, "cat hello.txt > seen.txt");
  const completed = ofType(events, "tool_call_completed");
  assert.equal(completed.length, 4);
  const byId = new Map(completed.map((c) => [c.tool_call_id, c]));
  const write = byId.get(started[0]!.tool_call_id)!;
  assert.match(write.tool_output, /^File created successfully/);
  assert.deepEqual((write.tool_input as Json).changes, [{
    path: "/work/repo/hello.txt",
    old_text: "",
    new_text: "hello\nworld\n",
  }]);
  const edit = byId.get(started[2]!.tool_call_id)!;
  assert.deepEqual((edit.tool_input as Json).changes, [{
    path: "/work/repo/hello.txt",
    old_text: "world",
    new_text: "there",
  }]);
  assert.equal(
    byId.get(started[1]!.tool_call_id)!.tool_output,
    "1\thello\n2\tworld\n3\t",
  );
  assert.equal(
    byId.get(started[3]!.tool_call_id)!.tool_output,
    "(Bash completed with no output)",
  );
  // Its empty chunks stream nothing.
  assert.ok(
    ofType(events, "message_streamed").every((m) => m.delta !== ""),
  );
  assert.deepEqual(
    ofType(events, "message_received").map((m) => m.content),
    ["Writing the file.", "Editing.", "All done."],
  );
  // claude-code-acp sends no usage.
  assert.equal(ofType(events, "token_usage_updated").length, 0);
  // Allowed once, not always: the next call asks again.
  assert.deepEqual(answers, [
    { outcome: { outcome: "selected", optionId: "allow" } },
    { outcome: { outcome: "selected", optionId: "allow" } },
    { outcome: { outcome: "selected", optionId: "allow" } },
  ]);
});

Deno.test("a refused permission fails its tool call as approval_denied: gemini's call (never announced) is started from the request; claude-code-acp's later failed update is not a second ending", () => {
  const gemini = replay("gemini_denied", (kind) => geminiAllows(null, kind));
  const failed = ofType(gemini.events, "tool_call_failed");
  assert.deepEqual(
    failed.map((f) => [f.tool_name, f.tool_output.split(":")[0]]),
    [
      ["edit", "approval_denied"],
      ["edit", "File not found"],
      ["execute", "approval_denied"],
    ],
  );
  const started = ofType(gemini.events, "tool_call_started");
  assert.deepEqual(
    started.map((s) => s.tool_call_id),
    failed.map((f) => f.tool_call_id),
  );
  assert.deepEqual(gemini.answers, [
    { outcome: { outcome: "selected", optionId: "cancel" } },
    { outcome: { outcome: "selected", optionId: "cancel" } },
  ]);

  const claude = replay("claude_code_acp_denied", () => false);
  const claudeFailed = ofType(claude.events, "tool_call_failed");
  assert.equal(claudeFailed.length, 1);
  assert.match(claudeFailed[0]!.tool_output, /^approval_denied: refused edit/);
  assert.deepEqual(claude.answers, [
    { outcome: { outcome: "selected", optionId: "reject" } },
  ]);
  assert.equal(
    claude.updates.progress().tools[0]!.status,
    "denied",
  );
});

Deno.test("a plan is a todo_list tool call with its items and a checklist; an ACP usage answer and usage_update's USD cost add up over the attempt's prompts", () => {
  const updates = new AcpUpdates();
  const plan = updates.update(update("plan", {
    entries: [
      { content: "Read the ADR", priority: "high", status: "completed" },
      { content: "Write NOTES.md", priority: "medium", status: "in_progress" },
      { content: "Run the tests", priority: "low", status: "pending" },
    ],
  }));
  assert.deepEqual(plan.map((e) => e.type), [
    "tool_call_started",
    "tool_call_completed",
  ]);
  const [start, end] = plan as [
    Extract<ProviderEvent, { type: "tool_call_started" }>,
    Extract<ProviderEvent, { type: "tool_call_completed" }>,
  ];
  assert.equal(start.data.tool_name, "todo_list");
  assert.deepEqual((start.data.tool_input.items as Json[])[0], {
    text: "Read the ADR",
    completed: true,
    status: "completed",
    priority: "high",
  });
  assert.equal(
    end.data.tool_output,
    "[x] Read the ADR\n[~] Write NOTES.md\n[ ] Run the tests",
  );
  assert.notEqual(
    updates.update(update("plan", { entries: [] }))[0]!.data,
    start.data,
  );

  const first = updates.promptEnded({
    stopReason: "cancelled",
    usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 },
  });
  assert.deepEqual(first.at(-1)!.data, {
    input_tokens: 100,
    output_tokens: 10,
    total_tokens: 110,
  });
  const cost = updates.update(update("usage_update", {
    used: 5000,
    size: 200000,
    cost: { amount: 0.25, currency: "USD" },
  }));
  assert.equal((cost[0]!.data as Json).cost_usd, 0.25);
  assert.deepEqual(
    updates.update(update("usage_update", {
      used: 1,
      size: 2,
      cost: { amount: 9, currency: "EUR" },
    })),
    [],
  );
  const second = updates.promptEnded({
    stopReason: "end_turn",
    _meta: { quota: { token_count: { input_tokens: 50, output_tokens: 5 } } },
  });
  assert.deepEqual(second.at(-1)!.data, {
    input_tokens: 150,
    output_tokens: 15,
    total_tokens: 165,
    cost_usd: 0.25,
  });
  assert.deepEqual(updates.promptEnded({ stopReason: "end_turn" }), []);
});

Deno.test("hostile updates read as absent: no update, no kind, a tool call without an id, a non-text chunk, an unknown kind, a user echo", () => {
  const updates = new AcpUpdates();
  for (
    const params of [
      null,
      "text",
      {},
      { update: null },
      { update: { sessionUpdate: 7 } },
      update("tool_call", { title: "no id" }),
      update("tool_call_update", { toolCallId: 5, status: "completed" }),
      update("agent_message_chunk", { content: { type: "image", data: "" } }),
      update("agent_message_chunk", { content: "text" }),
      update("user_message_chunk", { content: { type: "text", text: "hi" } }),
      update("session_info_update", { title: "x" }),
      update("available_commands_update", { availableCommands: [] }),
    ]
  ) {
    assert.deepEqual(updates.update(params), [], JSON.stringify(params));
  }
  assert.deepEqual(updates.flush(), []);
});

Deno.test("a held (bare) tool announcement starts, with what it has, when another update comes, and a finished call's stray updates are ignored", () => {
  const updates = new AcpUpdates();
  assert.deepEqual(
    updates.update(
      update("tool_call", {
        toolCallId: "t1",
        title: "Terminal",
        kind: "execute",
        status: "pending",
        rawInput: {},
        content: [],
      }),
    ),
    [],
  );
  const next = updates.update(
    update("agent_message_chunk", { content: { type: "text", text: "Hm." } }),
  );
  assert.deepEqual(next.map((e) => e.type), [
    "tool_call_started",
    "message_streamed",
  ]);
  assert.deepEqual(next[0]!.data, {
    tool_call_id: "t1",
    tool_name: "execute",
    tool_input: { title: "Terminal", command: "Terminal" },
  });
  const done = updates.update(update("tool_call_update", {
    toolCallId: "t1",
    status: "failed",
    content: [{
      type: "content",
      content: { type: "text", text: "```\nexit 2\n```" },
    }],
  }));
  assert.deepEqual(done.map((e) => e.type), [
    "message_received",
    "tool_call_failed",
  ]);
  assert.equal((done[1]!.data as Json).tool_output, "exit 2");
  assert.deepEqual(
    updates.update(
      update("tool_call_update", { toolCallId: "t1", status: "completed" }),
    ),
    [],
  );
});

Deno.test("stopFailure() completes end_turn only; refusal, max_tokens, max_turn_requests, a foreign cancel and an unknown reason are failure classes", () => {
  assert.equal(stopFailure("end_turn"), null);
  assert.deepEqual(
    [
      "refusal",
      "max_tokens",
      "max_turn_requests",
      "cancelled",
      "sleepy",
      undefined,
    ].map((reason) => stopFailure(reason)?.kind),
    [
      "guardrail_blocked",
      "provider_runtime_claim",
      "provider_runtime_claim",
      "user_cancelled",
      "protocol_error",
      "protocol_error",
    ],
  );
  assert.match(stopFailure("sleepy")!.message, /"sleepy"/);
});

Deno.test("promptErrorFailure() classes a session/prompt error by ACP's auth code, an HTTP status used as the code (gemini), or claude-code-acp's words under -32603", () => {
  const cases: [number, string, string][] = [
    [-32000, "Authentication required.", "provider_auth_claim"],
    [429, "Rate limit exceeded. Try again later.", "provider_rate_limit"],
    [401, "API key not valid.", "provider_auth_claim"],
    [503, "The model is overloaded.", "provider_capacity"],
    [400, "Bad request", "provider_config_claim"],
    [-32603, "Internal error: API Error: 529 overloaded", "provider_capacity"],
    [-32603, "Internal error: Please run /login", "provider_auth_claim"],
    [-32603, "Internal error: fetch failed", "transport_disconnect"],
    [
      -32603,
      "Internal error: [ede_diagnostic] result_type=user stop_reason=tool_use",
      "provider_runtime_claim",
    ],
  ];
  for (const [code, message, kind] of cases) {
    const failure = promptErrorFailure({ code, message });
    assert.equal(failure.kind, kind, `${code} ${message}`);
    assert.equal(failure.message, message);
  }
});

Deno.test("gemini's approval_mode allows reads, searches and thoughts always, edits from auto_edit, everything in yolo, nothing else in default, plan or none", () => {
  const kinds = ["read", "search", "think", "edit", "delete", "move"];
  const table = [null, "default", "plan", "auto_edit", "yolo"].map((mode) =>
    [...kinds, "execute", "fetch", "other"].filter((kind) =>
      geminiAllows(mode, kind)
    )
  );
  assert.deepEqual(table, [
    ["read", "search", "think"],
    ["read", "search", "think"],
    ["read", "search", "think"],
    kinds,
    [...kinds, "execute", "fetch", "other"],
  ]);
});

Deno.test("agent.permissions allows exactly the kinds it names allow; by default read, search and think; a kind it does not name is denied", () => {
  assert.deepEqual(
    ["read", "search", "think", "edit", "execute", "other", "bogus"].filter(
      (kind) => acpAllows(null, kind),
    ),
    ["read", "search", "think"],
  );
  const permissions = { edit: "allow", execute: "deny" } as const;
  assert.equal(acpAllows(permissions, "edit"), true);
  assert.equal(acpAllows(permissions, "execute"), false);
  assert.equal(acpAllows(permissions, "read"), false);
});

Deno.test("permissionAnswer() picks allow_once over allow_always and reject_once over reject_always, and answers cancelled when nothing fits", () => {
  const all = [
    { kind: "allow_always", optionId: "a-always" },
    { kind: "allow_once", optionId: "a-once" },
    { kind: "reject_always", optionId: "r-always" },
    { kind: "reject_once", optionId: "r-once" },
  ];
  assert.deepEqual(permissionAnswer(all, true).outcome, {
    outcome: "selected",
    optionId: "a-once",
  });
  assert.deepEqual(permissionAnswer(all, false).outcome, {
    outcome: "selected",
    optionId: "r-once",
  });
  assert.deepEqual(permissionAnswer([all[0]!, all[2]!], true).outcome, {
    outcome: "selected",
    optionId: "a-always",
  });
  assert.deepEqual(permissionAnswer([all[0]!, all[2]!], false).outcome, {
    outcome: "selected",
    optionId: "r-always",
  });
  assert.deepEqual(permissionAnswer([all[1]!], false).outcome, {
    outcome: "cancelled",
  });
  assert.deepEqual(permissionAnswer([], true).outcome, {
    outcome: "cancelled",
  });
});

Deno.test("a steer's prompt restates the task, what the session saw done before the cancel (from gemini's real lines) with paths relative to the repo, the earlier steers, the new one, then the carry-on instruction", () => {
  const updates = new AcpUpdates();
  for (const message of lines("gemini_steer")) {
    if (message.method === "session/update") updates.update(message.params);
    if ((message.result as Json | undefined)?.stopReason === "cancelled") {
      updates.promptEnded(message.result);
      break;
    }
  }
  const progress = updates.progress();
  assert.deepEqual(progress, {
    tools: [{
      kind: "edit",
      title: "Writing to a.txt",
      paths: ["/work/repo/a.txt"],
      status: "completed",
    }],
    last_message: "Writing a.",
  });
  const text = acpSteerPrompt(
    "Write a.txt.\n",
    progress,
    ["Use tabs.", "Also write b.txt, please."],
    { cwd: "/work/repo" },
  );
  assert.equal(
    text,
    [
      "You were working on the task below when the operator stopped your last turn to correct it. What that turn already did to the files is still there.",
      "",
      "<task>",
      "Write a.txt.",
      "</task>",
      "",
      "What was done so far:",
      "- edit a.txt: Writing to a.txt (completed)",
      '- Your last message: "Writing a."',
      "",
      "Earlier steers from the operator, still in force:",
      "- Use tabs.",
      "",
      "The operator's steer:",
      "Also write b.txt, please.",
    ].join("\n") + CARRY_ON,
  );
});

Deno.test("a steer's prompt before anything was done says only the task and the steer, and lists only the latest tool calls of a long turn", () => {
  const bare = acpSteerPrompt("Do it.", { tools: [], last_message: null }, [
    "Faster.",
  ], { cwd: "/r" });
  assert.doesNotMatch(bare, /What was done so far/);
  assert.doesNotMatch(bare, /Earlier steers/);
  assert.match(
    bare,
    /<task>\nDo it\.\n<\/task>\n\nThe operator's steer:\nFaster\./,
  );
  const many = acpSteerPrompt(
    "Do it.",
    {
      tools: Array.from({ length: 40 }, (_, i) => ({
        kind: "read",
        title: `Read f${i}`,
        paths: [`/r/f${i}`],
        status: "completed",
      })),
      last_message: "x".repeat(2000),
    },
    ["Stop."],
    { cwd: "/r" },
  );
  assert.match(many, /- \(10 earlier tool calls\)\n- read f10: Read f10/);
  assert.match(many, /- read f39: Read f39 \(completed\)/);
  assert.match(many, /"x{600}…"/);
});

Deno.test("the acp provider is named acp with model default; a session without agent.bin or $PROMPT_RUNNER_ACP_BIN fails to start naming agent.bin", async () => {
  assert.equal(acpProvider.name, "acp");
  assert.equal(acpProvider.defaultModel, "default");
  assert.equal(geminiAcpProvider.name, "gemini");
  const saved = Deno.env.get("PROMPT_RUNNER_ACP_BIN");
  Deno.env.delete("PROMPT_RUNNER_ACP_BIN");
  try {
    await assert.rejects(
      acpProvider.start({
        prompt_id: "01",
        attempt: 1,
        ordinal: 1,
        mode: "run",
        text: "hi",
        cwd: Deno.cwd(),
        repos: {},
        model: null,
        agent: DEFAULT_AGENT_OPTIONS,
        max_steers: 3,
        tmpdir: null,
        signal: new AbortController().signal,
      }),
      /agent\.bin/,
    );
  } finally {
    if (saved !== undefined) Deno.env.set("PROMPT_RUNNER_ACP_BIN", saved);
  }
});

// --- The session, against a fake ACP agent: only for what the real agents
// cannot be made to do (the steering extension, no loadSession, a cancel
// that is not ours, a steer's prompt refused at once).

/** The fake agent: JSON-RPC on stdio, its behaviour from `$FAKE_ACP`. */
const FAKE_AGENT = `
const config = JSON.parse(Deno.env.get("FAKE_ACP") ?? "{}");
const encoder = new TextEncoder();
const write = (m) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(m) + "\\n"));
const log = (m) => Deno.writeTextFileSync(config.log, JSON.stringify(m) + "\\n", { append: true });
const chunk = (text) => write({ jsonrpc: "2.0", method: "session/update", params: {
  sessionId: "fake-1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
let prompts = 0;
let release = null;
async function prompt(m) {
  const how = config.prompts[prompts++] ?? "end";
  if (how === "error") return write({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "Internal error: no more prompts" } });
  if (how === "cancelled") return write({ jsonrpc: "2.0", id: m.id, result: { stopReason: "cancelled" } });
  if (how === "hold") {
    chunk("working");
    const outcome = await new Promise((resolve) => release = resolve);
    if (outcome === "cancel") return write({ jsonrpc: "2.0", id: m.id, result: { stopReason: "cancelled" } });
    chunk("injected");
  }
  chunk("done: " + m.params.prompt[0].text.slice(0, 30));
  write({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
}
let buffer = "";
for await (const bytes of Deno.stdin.readable) {
  buffer += new TextDecoder().decode(bytes);
  let at;
  while ((at = buffer.indexOf("\\n")) >= 0) {
    const m = JSON.parse(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
    log(m);
    if (m.method === "initialize") {
      write({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1,
        agentCapabilities: { loadSession: config.load === true },
        agentInfo: { name: "fake-acp", version: "1.0" },
        ...(config.steering ? { _meta: { steering: { supported: true } } } : {}) } });
    } else if (m.method === "session/new") {
      write(config.newError
        ? { jsonrpc: "2.0", id: m.id, error: config.newError }
        : { jsonrpc: "2.0", id: m.id, result: { sessionId: "fake-1" } });
    } else if (m.method === "session/load" && config.loadError) {
      write({ jsonrpc: "2.0", id: m.id, error: config.loadError });
    } else if (m.method === "session/load") {
      // As gemini: the answer first, the history after it.
      write({ jsonrpc: "2.0", id: m.id, result: {} });
      for (const text of ["old ", "history"]) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        chunk(text);
      }
    } else if (m.method === "session/prompt") {
      prompt(m);
    } else if (m.method === "session/cancel") {
      release?.("cancel");
    } else if (m.method === "_session/steering") {
      write({ jsonrpc: "2.0", id: m.id, result: { outcome: "injected" } });
      release?.("inject");
    }
  }
}
`;

interface FakeRun {
  events: ProviderEvent[];
  received: Json[];
  notes: string[];
}

async function withFakeAgent(
  config: {
    prompts: string[];
    load?: boolean;
    steering?: boolean;
    newError?: Json;
    loadError?: Json;
  },
  drive: (
    session: Session,
    events: ProviderEvent[],
  ) => Promise<void>,
  options: { resume?: string } = {},
): Promise<FakeRun> {
  const dir = await Deno.makeTempDir({ prefix: "fake_acp_" });
  try {
    const script = `${dir}/fake_acp.js`;
    const log = `${dir}/received.jsonl`;
    await Deno.writeTextFile(script, FAKE_AGENT);
    await Deno.writeTextFile(log, "");
    const bin = `${dir}/fake-acp`;
    await Deno.writeTextFile(
      bin,
      `#!/bin/sh\nexec '${Deno.execPath()}' run --quiet --no-config --allow-read --allow-write --allow-env '${script}' "$@"\n`,
    );
    await Deno.chmod(bin, 0o755);
    const notes: string[] = [];
    const request = {
      prompt_id: "01",
      attempt: 1,
      ordinal: 1,
      mode: "run" as const,
      text: "Write a.txt.",
      cwd: dir,
      repos: {},
      model: null,
      agent: {
        ...DEFAULT_AGENT_OPTIONS,
        bin,
        env: { FAKE_ACP: JSON.stringify({ ...config, log }) },
      },
      max_steers: 3,
      tmpdir: null,
      signal: new AbortController().signal,
      note: (text: string) => notes.push(text),
    };
    const session = options.resume === undefined
      ? await acpProvider.start(request)
      : await acpProvider.resume(
        { provider: "acp", session_id: options.resume, model: "default" },
        { ...request, cause: "failure" },
      );
    const events: ProviderEvent[] = [];
    try {
      const reading = (async () => {
        for await (const event of session.events) events.push(event);
      })();
      await drive(session, events);
      await reading;
    } finally {
      await session.close();
    }
    const received = (await Deno.readTextFile(log)).split("\n")
      .filter((line) => line !== "").map((line) => JSON.parse(line));
    return { events, received, notes };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function streamed(events: ProviderEvent[]): string[] {
  return ofType(events, "message_streamed").map((m) => m.delta);
}

Deno.test("an agent that advertises _session/steering gets the steer injected into its running prompt: no cancel, no second prompt, acknowledged as acp_steering", async () => {
  let mechanism = "";
  const run = await withFakeAgent(
    { prompts: ["hold"], steering: true },
    async (session, events) => {
      await until("the turn", () => streamed(events).includes("working"));
      const delivery = await session.send("Use tabs.");
      mechanism = (await delivery.acknowledged).mechanism;
    },
  );
  assert.equal(mechanism, "acp_steering");
  const methods = run.received.map((m) => m.method);
  assert.equal(methods.filter((m) => m === "session/prompt").length, 1);
  assert.ok(!methods.includes("session/cancel"));
  const steering = run.received.find((m) => m.method === "_session/steering")!;
  const text = ((steering.params as Json).prompt as Json[])[0]!.text as string;
  assert.equal(text, `Use tabs.${CARRY_ON}`);
  assert.deepEqual(streamed(run.events), [
    "working",
    "injected",
    "done: Write a.txt.",
  ]);
  assert.equal(run.events.at(-1)!.type, "run_completed");
});

Deno.test("two steers in quick succession: one restated prompt carries both, and both are acknowledged when the agent takes it", async () => {
  const mechanisms: string[] = [];
  const run = await withFakeAgent(
    { prompts: ["hold", "end"] },
    async (session, events) => {
      await until("the turn", () => streamed(events).includes("working"));
      const first = await session.send("Use tabs.");
      const second = await session.send("Also write b.txt.");
      for (const delivery of [first, second]) {
        mechanisms.push((await delivery.acknowledged).mechanism);
      }
    },
  );
  assert.deepEqual(mechanisms, ["acp_prompt", "acp_prompt"]);
  const prompts = run.received.filter((m) => m.method === "session/prompt");
  assert.equal(prompts.length, 2);
  const restated = ((prompts[1]!.params as Json).prompt as Json[])[0]!
    .text as string;
  assert.match(
    restated,
    /<task>\nWrite a\.txt\.\n<\/task>[\s\S]*Earlier steers from the operator, still in force:\n- Use tabs\.\n\nThe operator's steer:\nAlso write b\.txt\./,
  );
  assert.equal(
    run.received.filter((m) => m.method === "session/cancel").length,
    2,
  );
  assert.equal(run.events.at(-1)!.type, "run_completed");
});

Deno.test("a steer whose prompt the agent refuses at once is refused with the agent's words, and the turn fails", async () => {
  let refusal = "";
  const run = await withFakeAgent(
    { prompts: ["hold", "error"] },
    async (session, events) => {
      await until("the turn", () => streamed(events).includes("working"));
      const delivery = await session.send("Use tabs.");
      await delivery.acknowledged.catch((error) => refusal = error.message);
    },
  );
  assert.match(refusal, /Internal error: no more prompts/);
  const failed = ofType(run.events, "run_failed");
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.error_code, "provider_runtime_claim");
});

Deno.test("a prompt the agent ends as cancelled without our cancel fails as user_cancelled", async () => {
  const run = await withFakeAgent({ prompts: ["cancelled"] }, async () => {});
  assert.deepEqual(
    ofType(run.events, "run_failed").map((f) => f.error_code),
    ["user_cancelled"],
  );
});

Deno.test("an agent that refuses session/new fails the attempt by its error's class, its details kept", async () => {
  const run = await withFakeAgent({
    prompts: [],
    newError: {
      code: -32000,
      message: "Authentication required.",
      data: { hint: "set GEMINI_API_KEY" },
    },
  }, async () => {});
  const failed = ofType(run.events, "run_failed");
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.error_code, "provider_auth_claim");
  assert.equal(
    failed[0]!.error_message,
    'the acp agent could not start its session: Authentication required. ({"hint":"set GEMINI_API_KEY"})',
  );
});

Deno.test("a resume loads the session when the agent offers loadSession (the history it replays after its answer is not this turn's), fails with the agent's words when the load fails, and fails naming loadSession when it is not offered", async () => {
  const loaded = await withFakeAgent(
    { prompts: ["end"], load: true },
    async () => {},
    { resume: "fake-1" },
  );
  const load = loaded.received.find((m) => m.method === "session/load")!;
  assert.equal((load.params as Json).sessionId, "fake-1");
  assert.ok(!loaded.received.some((m) => m.method === "session/new"));
  assert.deepEqual(streamed(loaded.events), ["done: Write a.txt."]);
  assert.equal(
    ofType(loaded.events, "run_started")[0]!.provider_session_id,
    "fake-1",
  );
  assert.equal(loaded.events.at(-1)!.type, "run_completed");

  // gemini 0.61.0 answers so for a session it made over ACP.
  const lost = await withFakeAgent(
    {
      prompts: ["end"],
      load: true,
      loadError: {
        code: -32603,
        message: "Internal error",
        data: { details: "No previous sessions found for this project." },
      },
    },
    async () => {},
    { resume: "fake-1" },
  );
  assert.deepEqual(
    ofType(lost.events, "run_failed").map((f) => f.error_message),
    [
      'the agent could not load session "fake-1": Internal error ({"details":"No previous sessions found for this project."})',
    ],
  );
  assert.equal(
    ofType(lost.events, "run_failed")[0]!.error_code,
    "provider_config_claim",
  );

  const refused = await withFakeAgent(
    { prompts: ["end"] },
    async () => {},
    { resume: "fake-1" },
  );
  const failed = ofType(refused.events, "run_failed");
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.error_code, "provider_config_claim");
  assert.match(failed[0]!.error_message, /the agent cannot load a session/);
  assert.ok(!refused.received.some((m) => m.method === "session/prompt"));
});
