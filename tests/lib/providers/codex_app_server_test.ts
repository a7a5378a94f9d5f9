/**
 * The codex app-server lane without the model: the notification mapping
 * against lines the real `codex app-server` 0.171.0 wrote (captured against
 * the scripted Responses API server; paths shortened to `/w`), and the
 * session's steer, approval and turn bookkeeping against a scripted
 * stand-in for the races the real CLI cannot be made to hit on demand.
 *
 * @module
 */

import assert from "node:assert/strict";
import { sessionRequest as baseRequest } from "../../_helpers/session_request.ts";
import { join } from "node:path";
import {
  CodexAppItems,
  turnFailure,
} from "../../../lib/providers/_codex_app_items.ts";
import {
  codexApprovalAnswer,
  codexAppServerArgs,
  codexAppServerProvider,
  CodexAppSession,
} from "../../../lib/providers/codex_app_server.ts";
import { codexProfile } from "../../../lib/providers/codex.ts";
import {
  type AgentOptions,
  DEFAULT_AGENT_OPTIONS,
} from "../../../lib/packet/agent_options.ts";
import {
  type SessionRequest,
  type SteerReceipt,
  TurnOverError,
} from "../../../lib/providers/provider.ts";
import { CARRY_ON } from "../../../lib/shared/carry_on.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

type Json = Record<string, unknown>;

// --- the notifications of a real turn -----------------------------------

/**
 * One turn of the real codex app-server: reasoning, a message, an added
 * file, an edit, a failing command with output, a last message and the
 * token usage after each model reply.
 */
const CONVERSATION = String.raw`
{"method":"turn/started","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turn":{"id":"01a24620-f594-7d02-a0ce-db8d6198744c","rootTurnId":"01a24620-f594-7d02-a0ce-db8d6198744c","items":[],"itemsView":"notLoaded","status":"inProgress","error":null,"startedAt":1796472895,"completedAt":null,"durationMs":null}}}
{"method":"item/started","params":{"item":{"type":"userMessage","id":"01a24620-f61e-7261-b8dc-b364b2c90e67","clientId":"c-first","content":[{"type":"text","text":"Create NOTES.md","text_elements":[]}],"startedAtMs":1796472895046,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895046}}
{"method":"item/completed","params":{"item":{"type":"userMessage","id":"01a24620-f61e-7261-b8dc-b364b2c90e67","clientId":"c-first","content":[{"type":"text","text":"Create NOTES.md","text_elements":[]}],"startedAtMs":1796472895046,"completedAtMs":1796472895046},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895046}}
{"method":"item/started","params":{"item":{"type":"reasoning","id":"rs_mxadkt5m2","summary":["I should create the file first."],"content":[],"startedAtMs":1796472895104,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895104}}
{"method":"item/reasoning/summaryPartAdded","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","itemId":"rs_mxadkt5m2","summaryIndex":0}}
{"method":"item/reasoning/summaryTextDelta","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","itemId":"rs_mxadkt5m2","delta":"I should create the file first.","summaryIndex":0}}
{"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs_mxadkt5m2","summary":["I should create the file first."],"content":[],"startedAtMs":1796472895104,"completedAtMs":1796472895104},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895104}}
{"method":"item/started","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_mxadkt5m3","text":"Creating the file.","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796472895110,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895110}}
{"method":"item/agentMessage/delta","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","itemId":"msg_mxadkt5m3","delta":"Creating the file."}}
{"method":"item/completed","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_mxadkt5m3","text":"Creating the file.","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796472895110,"completedAtMs":1796472895110},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895110}}
{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_mxadkt5m5","changes":[{"path":"/w/hello.txt","kind":{"type":"add"},"diff":"hello\nworld\n"}],"status":"inProgress","startedAtMs":1796472895118,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895118}}
{"method":"item/completed","params":{"item":{"type":"fileChange","id":"call_mxadkt5m5","changes":[{"path":"/w/hello.txt","kind":{"type":"add"},"diff":"hello\nworld\n"}],"status":"completed","startedAtMs":1796472895118,"completedAtMs":1796472895228},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895228}}
{"method":"thread/tokenUsage/updated","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","tokenUsage":{"total":{"totalTokens":120,"inputTokens":100,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":20,"reasoningOutputTokens":0},"last":{"totalTokens":120,"inputTokens":100,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":20,"reasoningOutputTokens":0},"modelContextWindow":258400}}}
{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_mxadkta08","changes":[{"path":"/w/hello.txt","kind":{"type":"update","move_path":null},"diff":"@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"}],"status":"inProgress","startedAtMs":1796472895285,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895285}}
{"method":"item/completed","params":{"item":{"type":"fileChange","id":"call_mxadkta08","changes":[{"path":"/w/hello.txt","kind":{"type":"update","move_path":null},"diff":"@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"}],"status":"completed","startedAtMs":1796472895285,"completedAtMs":1796472895396},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895396}}
{"method":"thread/tokenUsage/updated","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","tokenUsage":{"total":{"totalTokens":280,"inputTokens":250,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":30,"reasoningOutputTokens":0},"last":{"totalTokens":160,"inputTokens":150,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":10,"reasoningOutputTokens":0},"modelContextWindow":258400}}}
{"method":"item/started","params":{"item":{"type":"commandExecution","id":"call_mxadktjn11","pluginId":null,"scriptPath":null,"command":"/bin/bash -lc 'cat hello.txt; exit 3'","cwd":"/w","processId":"63268","source":"unifiedExecStartup","status":"inProgress","commandActions":[{"type":"unknown","command":"cat hello.txt; exit 3"}],"aggregatedOutput":null,"exitCode":null,"durationMs":null,"startedAtMs":1796472895550,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895550}}
{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_mxadktjn11","pluginId":null,"scriptPath":null,"command":"/bin/bash -lc 'cat hello.txt; exit 3'","cwd":"/w","processId":"63268","source":"unifiedExecStartup","status":"failed","commandActions":[{"type":"unknown","command":"cat hello.txt; exit 3"}],"aggregatedOutput":"hello\nthere\n","exitCode":3,"durationMs":0,"startedAtMs":1796472895550,"completedAtMs":1796472895550},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895550}}
{"method":"thread/tokenUsage/updated","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","tokenUsage":{"total":{"totalTokens":490,"inputTokens":450,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":40,"reasoningOutputTokens":0},"last":{"totalTokens":210,"inputTokens":200,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":10,"reasoningOutputTokens":0},"modelContextWindow":258400}}}
{"method":"item/started","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_mxadktp013","text":"All done.","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796472895631,"completedAtMs":null},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","startedAtMs":1796472895631}}
{"method":"item/agentMessage/delta","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","itemId":"msg_mxadktp013","delta":"All done."}}
{"method":"item/completed","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_mxadktp013","text":"All done.","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796472895631,"completedAtMs":1796472895631},"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","contentTokenCount":null,"completedAtMs":1796472895631}}
{"method":"thread/tokenUsage/updated","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turnId":"01a24620-f594-7d02-a0ce-db8d6198744c","tokenUsage":{"total":{"totalTokens":745,"inputTokens":700,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":45,"reasoningOutputTokens":0},"last":{"totalTokens":255,"inputTokens":250,"cachedInputTokens":0,"cacheWriteInputTokens":0,"outputTokens":5,"reasoningOutputTokens":0},"modelContextWindow":258400}}}
{"method":"turn/completed","params":{"threadId":"01a24620-f536-7271-a1b4-dc85f5b54302","turn":{"id":"01a24620-f594-7d02-a0ce-db8d6198744c","rootTurnId":"01a24620-f594-7d02-a0ce-db8d6198744c","items":[{"type":"agentMessage","moderation":null,"id":"msg_mxadktp013","text":"All done.","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796472895631,"completedAtMs":1796472895631}],"itemsView":"summary","status":"completed","error":null,"startedAt":1796472895,"completedAt":1796472895,"durationMs":598}}}
`;

function lines(text: string): Json[] {
  return text.trim().split("\n").map((line) => JSON.parse(line));
}

function play(items: CodexAppItems, text: string): {
  events: ProviderEvent[];
  steps: ReturnType<CodexAppItems["notification"]>[];
} {
  const steps = lines(text).map((line) =>
    items.notification(String(line.method), line.params)
  );
  return { events: steps.flatMap((step) => step.events), steps };
}

Deno.test("a real app-server turn maps to the exec lane's canonical events: thinking, streamed and whole messages, tools with their output and exit code", () => {
  const { events } = play(new CodexAppItems(), CONVERSATION);
  assert.deepEqual(
    events.filter((e) => e.type !== "token_usage_updated").map((e) =>
      e.type === "message_streamed"
        ? `${e.type}:${e.data.kind}:${e.data.delta}`
        : e.type === "message_received"
        ? `${e.type}:${e.data.content}`
        : `${e.type}:${(e.data as Json).tool_name}`
    ),
    [
      "message_streamed:thinking:I should create the file first.",
      "message_streamed:text:Creating the file.",
      "message_received:Creating the file.",
      "tool_call_started:file_change",
      "tool_call_completed:file_change",
      "tool_call_started:file_change",
      "tool_call_completed:file_change",
      "tool_call_started:command_execution",
      "tool_call_failed:command_execution",
      "message_streamed:text:All done.",
      "message_received:All done.",
    ],
  );
  const command = events.find((e) => e.type === "tool_call_failed")!;
  assert.deepEqual(command.data, {
    tool_call_id: "call_mxadktjn11",
    tool_name: "command_execution",
    tool_output: "hello\nthere\n",
    is_error: true,
    exit_code: 3,
  });
  const started = events.find((e) =>
    e.type === "tool_call_started" && e.data.tool_name === "command_execution"
  )!;
  assert.deepEqual((started.data as Json).tool_input, {
    command: "/bin/bash -lc 'cat hello.txt; exit 3'",
  });
});

Deno.test("a fileChange carries codex's own patch as tool_input.changes, on its start and on its completion", () => {
  const { events } = play(new CodexAppItems(), CONVERSATION);
  const edit = events.filter((e) =>
    (e.data as Json).tool_call_id === "call_mxadkta08"
  );
  const changes = [{
    path: "/w/hello.txt",
    kind: "update",
    diff: "@@ -1,2 +1,2 @@\n hello\n-world\n+there\n",
  }];
  assert.deepEqual(edit.map((e) => e.type), [
    "tool_call_started",
    "tool_call_completed",
  ]);
  assert.deepEqual((edit[0]!.data as Json).tool_input, { changes });
  assert.deepEqual((edit[1]!.data as Json).tool_input, { changes });
  assert.equal((edit[1]!.data as Json).tool_output, "update /w/hello.txt");
});

Deno.test("token usage is the running total of this process's turns, as the exec lane reports it", () => {
  const { events } = play(new CodexAppItems(), CONVERSATION);
  const usage = events.filter((e) => e.type === "token_usage_updated");
  assert.equal(usage.length, 4);
  assert.deepEqual(usage.at(-1)!.data, {
    input_tokens: 700,
    output_tokens: 45,
    total_tokens: 745,
  });
});

Deno.test("a resumed thread's first usage (its history, under an earlier turn) is the baseline, not this session's usage", () => {
  const items = new CodexAppItems();
  // Measured: thread/resume is followed by the history's totals.
  const history = items.notification("thread/tokenUsage/updated", {
    threadId: "th",
    turnId: "old-turn",
    tokenUsage: {
      total: { inputTokens: 210, outputTokens: 15, totalTokens: 225 },
      last: { inputTokens: 110, outputTokens: 5, totalTokens: 115 },
    },
  });
  assert.deepEqual(history.events, []);
  items.ownTurn("new-turn");
  const own = items.notification("thread/tokenUsage/updated", {
    threadId: "th",
    turnId: "new-turn",
    tokenUsage: {
      total: { inputTokens: 510, outputTokens: 22, totalTokens: 532 },
      last: { inputTokens: 300, outputTokens: 7, totalTokens: 307 },
    },
  });
  assert.deepEqual(own.events[0]!.data, {
    input_tokens: 300,
    output_tokens: 7,
    total_tokens: 307,
  });
});

Deno.test("userMessage items, turn/started and turn/completed are handed to the session, not turned into events", () => {
  const { steps } = play(new CodexAppItems(), CONVERSATION);
  assert.deepEqual(
    steps.flatMap((s) => s.userMessage ? [s.userMessage] : []),
    [{ clientId: "c-first", text: "Create NOTES.md" }],
  );
  assert.deepEqual(steps.flatMap((s) => s.turnStarted ?? []), [
    "01a24620-f594-7d02-a0ce-db8d6198744c",
  ]);
  assert.deepEqual(steps.flatMap((s) => s.turnEnded ?? []), [{
    turnId: "01a24620-f594-7d02-a0ce-db8d6198744c",
    end: { status: "completed" },
  }]);
});

Deno.test("a steer's echo is a userMessage item carrying the clientUserMessageId it was sent with", () => {
  // Measured: the echo of `turn/steer {clientUserMessageId: "c-steer"}`.
  const step = new CodexAppItems().notification("item/started", {
    item: {
      type: "userMessage",
      id: "01a24611-e896-7d52-849b-a95e9c9f0c5c",
      clientId: "c-steer",
      content: [{
        type: "text",
        text: "Write steered into NOTES.md",
        text_elements: [],
      }],
      startedAtMs: 1796471908504,
      completedAtMs: null,
    },
    threadId: "01a24611-e0b9-7fe2-822f-2b8c439d7120",
    turnId: "01a24611-e151-7273-aa8a-0fde0419773e",
    startedAtMs: 1796471908504,
  });
  assert.deepEqual(step.userMessage, {
    clientId: "c-steer",
    text: "Write steered into NOTES.md",
  });
  assert.deepEqual(step.events, []);
});

Deno.test("a failed turn is classified by the status codex names, then its error kind, then its words", () => {
  // The turns codex failed against the scripted server's 401, 429 and a
  // dropped stream.
  assert.equal(
    turnFailure({
      message:
        "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:35279/v1/responses",
      codexErrorInfo: { httpConnectionFailed: { httpStatusCode: 401 } },
      additionalDetails: null,
    }).kind,
    "provider_auth_claim",
  );
  assert.equal(
    turnFailure({
      message: "exceeded retry limit, last status: 429 Too Many Requests",
      codexErrorInfo: {
        responseTooManyFailedAttempts: { httpStatusCode: 429 },
      },
    }).kind,
    "provider_rate_limit",
  );
  assert.equal(
    turnFailure({
      message:
        "stream disconnected before completion: Transport error: network error: error decoding response body",
      codexErrorInfo: "other",
    }).kind,
    "transport_disconnect",
  );
  assert.equal(
    turnFailure({ message: "busy", codexErrorInfo: "serverOverloaded" }).kind,
    "provider_capacity",
  );
  const step = new CodexAppItems().notification("turn/completed", {
    threadId: "th",
    turn: {
      id: "t1",
      items: [],
      status: "failed",
      error: { message: "boom", additionalDetails: "more" },
    },
  });
  assert.deepEqual(step.turnEnded, {
    turnId: "t1",
    end: {
      status: "failed",
      failure: { kind: "provider_runtime_claim", message: "boom: more" },
    },
  });
});

Deno.test("an error codex will retry is a transcript note, not the end of the turn", () => {
  const step = new CodexAppItems().notification("error", {
    error: { message: "Reconnecting... 2/5", codexErrorInfo: "other" },
    willRetry: true,
    threadId: "th",
    turnId: "t1",
  });
  assert.deepEqual(step.events, []);
  assert.equal(step.turnEnded, undefined);
  assert.match(step.note ?? "", /codex will retry: Reconnecting\.\.\. 2\/5/);
});

Deno.test("mcpToolCall, webSearch and plan updates map to mcp__server__tool, web_search and todo_list calls", () => {
  const items = new CodexAppItems();
  const events = [
    ...items.notification("item/started", {
      item: {
        type: "mcpToolCall",
        id: "m1",
        server: "docs",
        tool: "lookup",
        arguments: { q: "x" },
        status: "inProgress",
      },
    }).events,
    ...items.notification("item/completed", {
      item: {
        type: "mcpToolCall",
        id: "m1",
        server: "docs",
        tool: "lookup",
        arguments: { q: "x" },
        status: "completed",
        result: { content: [{ type: "text", text: "found" }] },
      },
    }).events,
    ...items.notification("item/completed", {
      item: { type: "webSearch", id: "s1", query: "deno" },
    }).events,
    ...items.notification("turn/plan/updated", {
      threadId: "th",
      turnId: "t1",
      plan: [
        { step: "Read", status: "completed" },
        { step: "Write", status: "inProgress" },
      ],
    }).events,
  ];
  assert.deepEqual(
    events.map((e) => `${e.type}:${(e.data as Json).tool_name}`),
    [
      "tool_call_started:mcp__docs__lookup",
      "tool_call_completed:mcp__docs__lookup",
      "tool_call_started:web_search",
      "tool_call_completed:web_search",
      "tool_call_started:todo_list",
      "tool_call_completed:todo_list",
    ],
  );
  assert.equal((events[1]!.data as Json).tool_output, "found");
  assert.deepEqual((events[2]!.data as Json).tool_input, { query: "deno" });
  assert.equal((events[5]!.data as Json).tool_output, "[x] Read\n[~] Write");
});

Deno.test("a refused approval fails its call at once as approval_denied; the call's later completion adds nothing", () => {
  const items = new CodexAppItems();
  items.notification("item/started", {
    item: {
      type: "fileChange",
      id: "call_1",
      changes: [{ path: "/w/made.txt", kind: { type: "add" }, diff: "x\n" }],
      status: "inProgress",
    },
  });
  const denied = items.denied("call_1", {
    reason: "no person to ask",
    tool: { name: "file_change", input: {} },
  });
  assert.deepEqual(denied, [{
    type: "tool_call_failed",
    data: {
      tool_call_id: "call_1",
      tool_name: "file_change",
      tool_output: "approval_denied: no person to ask",
      is_error: true,
      error_code: "approval_denied",
    },
  }]);
  const later = items.notification("item/completed", {
    item: {
      type: "fileChange",
      id: "call_1",
      changes: [{ path: "/w/made.txt", kind: { type: "add" }, diff: "x\n" }],
      status: "declined",
    },
  });
  assert.deepEqual(later.events, []);
  // A request for a call codex never announced starts it first.
  assert.deepEqual(
    items.denied("perm_1", {
      reason: "no",
      tool: { name: "permissions", input: {} },
    }).map((e) => e.type),
    ["tool_call_started", "tool_call_failed"],
  );
});

// --- argv and answers ------------------------------------------------------

function options(partial: Partial<AgentOptions>): AgentOptions {
  return { ...DEFAULT_AGENT_OPTIONS, ...partial };
}

Deno.test("codex app-server's argv sets the model, sandbox, reasoning effort, approval policy and add_dirs as -c settings; agent.config replaces any of them", () => {
  assert.deepEqual(
    codexAppServerArgs({
      model: "gpt-5.5",
      agent: options({
        sandbox: "read-only",
        reasoning_effort: "high",
        add_dirs: ["/data"],
        config: { approval_policy: "on-request", openai_base_url: "http://x" },
      }),
    }),
    [
      "app-server",
      "-c",
      'model="gpt-5.5"',
      "-c",
      'sandbox_mode="read-only"',
      "-c",
      'model_reasoning_effort="high"',
      "-c",
      'approval_policy="on-request"',
      "-c",
      'openai_base_url="http://x"',
      "-c",
      'sandbox_workspace_write.writable_roots=["/data"]',
    ],
  );
  assert.deepEqual(
    codexAppServerArgs({ model: null, agent: DEFAULT_AGENT_OPTIONS }),
    [
      "app-server",
      "-c",
      'sandbox_mode="workspace-write"',
      "-c",
      'approval_policy="never"',
    ],
  );
});

Deno.test("the exec lane's argv is unchanged by the settings it now shares with the app-server lane", () => {
  assert.deepEqual(
    codexProfile.startArgs({
      text: "hi",
      cwd: "/w",
      model: "m",
      options: options({
        reasoning_effort: "low",
        config: { approval_policy: "on-request", x: 1 },
      }),
      liveInput: false,
    }),
    [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-m",
      "m",
      "-s",
      "workspace-write",
      "-C",
      "/w",
      "-c",
      'model_reasoning_effort="low"',
      "-c",
      'approval_policy="on-request"',
      "-c",
      "x=1",
      "--",
      "hi",
    ],
  );
});

Deno.test("every approval codex can ask is refused in its own schema's words; other requests are declined or unknown", () => {
  assert.deepEqual(
    codexApprovalAnswer("item/commandExecution/requestApproval")?.result,
    { decision: "decline" },
  );
  assert.deepEqual(
    codexApprovalAnswer("item/fileChange/requestApproval")?.result,
    { decision: "decline" },
  );
  assert.deepEqual(
    codexApprovalAnswer("item/permissions/requestApproval")?.result,
    { permissions: {}, scope: "turn" },
  );
  assert.deepEqual(codexApprovalAnswer("execCommandApproval")?.result, {
    decision: { denied: { rejection: "refused by the packet's policy" } },
  });
  assert.deepEqual(codexApprovalAnswer("applyPatchApproval")?.result, {
    decision: { denied: { rejection: "refused by the packet's policy" } },
  });
  assert.deepEqual(codexApprovalAnswer("mcpServer/elicitation/request"), {
    approval: false,
    result: { action: "decline" },
  });
  assert.equal(codexApprovalAnswer("attestation/generate"), null);
});

Deno.test("codex's provider refuses to resume a session that never named its thread, and to start with a CODEX_HOME that does not exist", async () => {
  await withTempDir(async (dir) => {
    const request = sessionRequest(dir, []);
    await assert.rejects(
      codexAppServerProvider.resume(
        { provider: "codex", session_id: "", model: "m" },
        { ...request, cause: "failure" },
      ),
      /never reported its thread id/,
    );
    const missing = join(dir, "nowhere");
    await assert.rejects(
      codexAppServerProvider.start({
        ...request,
        agent: options({ bin: "/bin/true", env: { CODEX_HOME: missing } }),
      }),
      (error: Error) =>
        error.message.includes(`CODEX_HOME points to "${missing}"`),
    );
  });
});

// --- the session against a scripted stand-in -----------------------------

/**
 * A stand-in for `codex app-server`: the handshake, threads and turns, and
 * per scenario what the real CLI does only in a race (a steer that meets a
 * turn just ended) or at a policy's request (approvals). It logs every
 * message it receives to `$FAKE_LOG`.
 */
const STAND_IN = String.raw`
const scenario = Deno.env.get("FAKE_SCENARIO");
const log = Deno.env.get("FAKE_LOG");
const encoder = new TextEncoder();
const out = (m) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(m) + "\n"));
const note = (method, params) => out({ method, params });
let turns = 0;
let current = null;
let serverId = 100;
const answers = [];
function item(kind, item) { note("item/" + kind, { threadId: "th-1", turnId: current, item }); }
function say(text) {
  const id = "msg-" + Math.random();
  note("item/agentMessage/delta", { threadId: "th-1", turnId: current, itemId: id, delta: text });
  item("completed", { type: "agentMessage", id, text });
}
function complete(status, error = null) {
  note("turn/completed", { threadId: "th-1", turn: { id: current, items: [], status, error } });
}
function echo(params) {
  item("started", { type: "userMessage", id: "u-" + Math.random(), clientId: params.clientUserMessageId ?? null,
    content: params.input.map((i) => ({ type: "text", text: i.text, text_elements: [] })) });
}
function ask(method, params) { out({ method, id: serverId++, params }); }
async function handle(m) {
  if (log) Deno.writeTextFileSync(log, JSON.stringify(m) + "\n", { append: true });
  if (m.method === undefined) {
    answers.push(m);
    if (scenario === "approvals" && answers.length === 3) {
      item("completed", { type: "commandExecution", id: "cmd-1", command: "touch x", status: "declined", exitCode: null, aggregatedOutput: null });
      say("Done.");
      complete("completed");
    }
    return;
  }
  const reply = (result) => out({ id: m.id, result });
  switch (m.method) {
    case "initialize": return reply({ userAgent: "stand-in" });
    case "thread/start": return reply({ thread: { id: "th-1", model: "stand-in-model" } });
    case "thread/resume":
      reply({ thread: { id: m.params.threadId } });
      note("thread/tokenUsage/updated", { threadId: m.params.threadId, turnId: "old",
        tokenUsage: { total: { inputTokens: 1000, outputTokens: 100 }, last: { inputTokens: 10, outputTokens: 1 } } });
      return;
    case "turn/start": {
      current = "t-" + (++turns);
      if (scenario === "named_late") {
        // The whole turn before the answer that names it.
        note("turn/started", { threadId: "th-1", turn: { id: current, items: [], status: "inProgress" } });
        say("Quick.");
        complete("completed");
        return reply({ turn: { id: current, items: [], status: "inProgress" } });
      }
      reply({ turn: { id: current, items: [], status: "inProgress" } });
      note("turn/started", { threadId: "th-1", turn: { id: current, items: [], status: "inProgress" } });
      echo(m.params);
      if (turns > 1) { say("Following the steer."); return complete("completed"); }
      if (scenario === "complete" || scenario === "resume") {
        say("Hi.");
        note("thread/tokenUsage/updated", { threadId: "th-1", turnId: current,
          tokenUsage: { total: { inputTokens: 1010, outputTokens: 102 }, last: { inputTokens: 10, outputTokens: 2 } } });
        return complete("completed");
      }
      if (scenario === "failed") {
        note("error", { threadId: "th-1", turnId: current, willRetry: true, error: { message: "Reconnecting... 1/5" } });
        const error = { message: "unexpected status 401 Unauthorized: Incorrect API key provided", codexErrorInfo: { httpConnectionFailed: { httpStatusCode: 401 } } };
        note("error", { threadId: "th-1", turnId: current, willRetry: false, error });
        return complete("failed", error);
      }
      if (scenario === "approvals") {
        item("started", { type: "commandExecution", id: "cmd-1", command: "touch x", status: "inProgress" });
        ask("item/commandExecution/requestApproval", { threadId: "th-1", turnId: current, itemId: "cmd-1", command: "touch x" });
        ask("item/permissions/requestApproval", { threadId: "th-1", turnId: current, itemId: "perm-1", permissions: { network: { enabled: true } } });
        ask("account/chatgptAuthTokens/refresh", {});
        return;
      }
      say("Working.");
      return;
    }
    case "turn/steer":
      if (scenario === "steer_echo") {
        reply({ turnId: current });
        echo(m.params);
        say("Following the steer.");
        return complete("completed");
      }
      if (scenario === "steer_late") {
        complete("completed");
        return out({ id: m.id, error: { code: -32600, message: "no active turn to steer" } });
      }
      if (scenario === "steer_lost") {
        reply({ turnId: current });
        return complete("completed");
      }
      return reply({ turnId: current });
    case "turn/interrupt":
      reply({});
      return complete("interrupted");
    default:
      return out({ id: m.id, error: { code: -32601, message: "unknown " + m.method } });
  }
}
let buffer = "";
const decoder = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let at;
  while ((at = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (line.trim()) await handle(JSON.parse(line));
  }
}
`;

function sessionRequest(dir: string, notes: string[]): SessionRequest {
  return baseRequest(dir, notes, "Create NOTES.md");
}

interface StandIn {
  session: CodexAppSession;
  /** What the stand-in received, in order. */
  received(): Promise<Json[]>;
  notes: string[];
}

async function standIn(
  dir: string,
  scenario: string,
  options: { resumeId?: string; agent?: Partial<AgentOptions> } = {},
): Promise<StandIn> {
  const script = join(dir, "stand_in.js");
  const log = join(dir, "received.jsonl");
  await Deno.writeTextFile(script, STAND_IN);
  const notes: string[] = [];
  const session = new CodexAppSession({
    name: "codex",
    bin: Deno.execPath(),
    args: ["run", "--quiet", "--allow-env", "--allow-write", script],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      FAKE_SCENARIO: scenario,
      FAKE_LOG: log,
    },
    request: {
      ...sessionRequest(dir, notes),
      agent: { ...DEFAULT_AGENT_OPTIONS, ...options.agent },
    },
    resumeId: options.resumeId ?? null,
    model: "default",
    version: "stand-in",
    graceMs: 2000,
  });
  return {
    session,
    notes,
    received: async () =>
      (await Deno.readTextFile(log)).trim().split("\n").map((l) =>
        JSON.parse(l)
      ),
  };
}

/** Reads the events; calls `onEvent` between them (where the runner steers). */
async function drain(
  session: CodexAppSession,
  onEvent: (event: ProviderEvent) => Promise<void> | void = () => {},
): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of session.events) {
    events.push(event);
    await onEvent(event);
  }
  return events;
}

/** Reads the events, steering with `text` at the first whole message. */
async function steerAtFirstMessage(
  session: CodexAppSession,
  text: string,
): Promise<{ events: ProviderEvent[]; delivery: SteerReceipt }> {
  let delivery: SteerReceipt | undefined;
  const events = await drain(session, async (event) => {
    if (event.type === "message_received" && delivery === undefined) {
      delivery = await session.send(text);
    }
  });
  assert.ok(delivery !== undefined, "no message to steer at");
  return { events, delivery };
}

function sent(received: Json[], method: string): Json[] {
  return received.filter((m) => m.method === method).map((m) =>
    m.params as Json
  );
}

Deno.test("the session starts a thread and a turn, names the thread and model, and ends with the turn", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "complete");
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_streamed",
      "message_received",
      "token_usage_updated",
      "run_completed",
    ]);
    assert.equal(events[0]!.data.provider_session_id, "th-1");
    assert.equal(session.meta.model, "stand-in-model");
    const got = await received();
    assert.deepEqual(got.map((m) => m.method), [
      "initialize",
      "initialized",
      "thread/start",
      "turn/start",
    ]);
    assert.deepEqual(sent(got, "thread/start")[0], { cwd: dir });
    const turn = sent(got, "turn/start")[0]!;
    assert.deepEqual(turn.input, [{ type: "text", text: "Create NOTES.md" }]);
  });
});

Deno.test("a turn that ends before codex answers the turn/start naming it still ends the stream", async () => {
  await withTempDir(async (dir) => {
    const { session } = await standIn(dir, "named_late");
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_streamed",
      "message_received",
      "run_completed",
    ]);
  });
});

Deno.test("a resume is thread/resume on the same thread; the history's usage is not counted again", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "resume", {
      resumeId: "th-old",
    });
    const events = await drain(session);
    await session.close();
    assert.equal(events[0]!.data.provider_session_id, "th-old");
    const usage = events.filter((e) => e.type === "token_usage_updated");
    assert.deepEqual(usage.map((e) => e.data), [{
      input_tokens: 10,
      output_tokens: 2,
      total_tokens: 12,
    }]);
    const got = await received();
    assert.deepEqual(sent(got, "thread/resume"), [{
      threadId: "th-old",
      cwd: dir,
      excludeTurns: true,
    }]);
    assert.equal(sent(got, "thread/start").length, 0);
  });
});

Deno.test("a steer into the turn in flight is turn/steer with the turn's id and is delivered at its echo (turn_steer)", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "steer_echo");
    const { events, delivery } = await steerAtFirstMessage(
      session,
      "Use tabs.",
    );
    await session.close();
    assert.equal((await delivery.acknowledged).mechanism, "turn_steer");
    const steer = sent(await received(), "turn/steer")[0]!;
    assert.equal(steer.expectedTurnId, "t-1");
    assert.equal(steer.threadId, "th-1");
    assert.deepEqual(steer.input, [{
      type: "text",
      text: `Use tabs.${CARRY_ON}`,
    }]);
    assert.equal(typeof steer.clientUserMessageId, "string");
    assert.equal(events.filter((e) => e.type === "run_completed").length, 1);
  });
});

Deno.test("a steer that meets a turn just ended (turn/steer refused) starts a new turn on the same thread in the same process, and the stream stays open until it completes", async () => {
  await withTempDir(async (dir) => {
    const { session, received, notes } = await standIn(dir, "steer_late");
    const { events, delivery } = await steerAtFirstMessage(
      session,
      "Use tabs.",
    );
    const pid = session.pid;
    await session.close();
    assert.equal((await delivery.acknowledged).mechanism, "turn_start");
    const got = await received();
    const starts = sent(got, "turn/start");
    assert.equal(starts.length, 2);
    assert.equal(starts[1]!.threadId, "th-1");
    assert.deepEqual(starts[1]!.input, [{
      type: "text",
      text: `Use tabs.${CARRY_ON}`,
    }]);
    assert.deepEqual(
      events.filter((e) => e.type === "message_received").map((e) =>
        e.data.content
      ),
      ["Working.", "Following the steer."],
    );
    assert.equal(events.at(-1)!.type, "run_completed");
    assert.equal(events.filter((e) => e.type === "run_started").length, 1);
    assert.equal(events[0]!.data.pid, pid);
    assert.ok(
      notes.some((n) =>
        /refused turn\/steer \(no active turn to steer\)/.test(n)
      ),
      notes.join("\n"),
    );
  });
});

Deno.test("a steer codex accepted but never echoed before its turn ended goes out again as a new turn (turn_start)", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "steer_lost");
    const { events, delivery } = await steerAtFirstMessage(
      session,
      "Use tabs.",
    );
    await session.close();
    assert.equal((await delivery.acknowledged).mechanism, "turn_start");
    const starts = sent(await received(), "turn/start");
    assert.equal(starts.length, 2);
    assert.deepEqual(starts[1]!.input, [{
      type: "text",
      text: `Use tabs.${CARRY_ON}`,
    }]);
    assert.equal(events.at(-1)!.type, "run_completed");
  });
});

Deno.test("a steer once the stream ended meets TurnOverError", async () => {
  await withTempDir(async (dir) => {
    const { session } = await standIn(dir, "complete");
    await drain(session);
    await assert.rejects(() => session.send("late"), TurnOverError);
    await session.close();
  });
});

Deno.test("approval requests are answered at once and refused; the calls fail as approval_denied, and so does the turn though codex ended it well", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "approvals", {
      agent: { approval_policy: "on-request" },
    });
    const events = await drain(session);
    await session.close();
    const answers = (await received()).filter((m) => m.method === undefined);
    assert.deepEqual(answers.map((m) => m.result ?? m.error), [
      { decision: "decline" },
      { permissions: {}, scope: "turn" },
      {
        code: -32601,
        message:
          "Method not found: account/chatgptAuthTokens/refresh (prompt_runner answers approvals only)",
      },
    ]);
    const failed = events.filter((e) => e.type === "tool_call_failed");
    assert.deepEqual(
      failed.map((e) => [e.data.tool_call_id, e.data.tool_name]),
      [["cmd-1", "command_execution"], ["perm-1", "permissions"]],
    );
    for (const e of failed) {
      assert.match(String(e.data.tool_output), /^approval_denied: /);
      assert.match(String(e.data.tool_output), /"on-request"/);
    }
    assert.equal(events.filter((e) => e.type === "run_completed").length, 0);
    const error = events.find((e) => e.type === "error_occurred")!;
    assert.equal(error.data.error_code, "approval_denied");
    assert.match(
      String(error.data.error_message),
      /the command "touch x"; more permissions/,
    );
    assert.equal(events.at(-1)!.type, "run_failed");
  });
});

Deno.test("a failed turn ends the session with its failure class; a retrying error before it is only a note", async () => {
  await withTempDir(async (dir) => {
    const { session, notes } = await standIn(dir, "failed");
    const events = await drain(session);
    await session.close();
    const errors = events.filter((e) => e.type === "error_occurred");
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.data.error_code, "provider_auth_claim");
    assert.ok(notes.some((n) => /codex will retry: Reconnecting/.test(n)));
  });
});

Deno.test("an interrupt is turn/interrupt with the turn's id; the interrupted turn ends the stream with no failure", async () => {
  await withTempDir(async (dir) => {
    const { session, received } = await standIn(dir, "hang");
    const events = await drain(session, (event) => {
      if (event.type === "message_received") session.interrupt();
    });
    await session.close();
    assert.deepEqual(sent(await received(), "turn/interrupt"), [{
      threadId: "th-1",
      turnId: "t-1",
    }]);
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_streamed",
      "message_received",
    ]);
  });
});
