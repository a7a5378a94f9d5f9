/**
 * The OpenAI Responses API dialect of the scripted model server, as Codex
 * (0.171.0) speaks it.
 *
 * Codex first asks for a WebSocket on `/v1/responses`; this dialect refuses
 * it with `426 Upgrade Required`, which makes Codex fall back to HTTPS at
 * once (a 404 costs five reconnects and about 7 s of backoff). The model
 * turn is then `POST /v1/responses`, answered with the SSE events Codex
 * reads: `response.created`, `response.output_item.added/done`,
 * `response.reasoning_summary_text.delta`, `response.output_text.delta` and
 * `response.completed` with usage.
 *
 * Tool calls use whatever tools the request offers: a shell command goes to
 * `exec_command {cmd}` (else `shell_command {command}`, else
 * `shell {command: [argv]}`); a write or an edit becomes an `apply_patch`
 * patch (a freeform `custom_tool_call` or a function call, whichever the
 * request lists; else `apply_patch` through the shell tool, which Codex
 * intercepts). An edit's `old` and `new` are whole lines: `apply_patch`
 * matches lines, not substrings. Models whose catalog entry is
 * `code_mode_only` (Codex's default model, `gpt-6.2-sol`) offer only a
 * JavaScript `exec` tool; the call is then a small script that awaits
 * `tools.exec_command(…)` or `tools.apply_patch(…)`, and Codex reports the
 * nested calls as the same `command_execution` and `file_change` items.
 *
 * @module
 */

import {
  type Dialect,
  type DialectContext,
  holdReply,
  type ModelServer,
  pause,
  type ScriptedReply,
  type ScriptedTool,
  sseStream,
  startModelServer,
} from "./server.ts";
import { isRecord } from "../../../lib/shared/is_record.ts";

type Json = Record<string, unknown>;

/** The names and types of the tools a request offers (namespaces flattened). */
export function offeredTools(body: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (tools: unknown): void => {
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isRecord(tool)) continue;
      if (typeof tool.name === "string" && typeof tool.type === "string") {
        found.set(tool.name, tool.type);
      }
      walk(tool.tools);
    }
  };
  if (isRecord(body)) {
    walk(body.tools);
    if (Array.isArray(body.input)) {
      for (const item of body.input) {
        if (isRecord(item) && item.type === "additional_tools") {
          walk(item.tools);
        }
      }
    }
  }
  return found;
}

function patchLines(prefix: string, text: string): string {
  const lines = text.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines.map((line) => `${prefix}${line}\n`).join("");
}

/** The `apply_patch` text that writes or edits a file. */
export function patchFor(tool: ScriptedTool): string {
  if (tool.kind === "write") {
    return `*** Begin Patch\n*** Add File: ${tool.path}\n${
      patchLines("+", tool.content)
    }*** End Patch\n`;
  }
  if (tool.kind === "edit") {
    return `*** Begin Patch\n*** Update File: ${tool.path}\n@@\n${
      patchLines("-", tool.old)
    }${patchLines("+", tool.new)}*** End Patch\n`;
  }
  throw new Error("a shell command is not a patch");
}

function shellCall(command: string, tools: Map<string, string>): Json {
  if (tools.has("exec_command")) {
    return {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd: command }),
    };
  }
  if (tools.has("shell_command")) {
    return {
      type: "function_call",
      name: "shell_command",
      arguments: JSON.stringify({ command }),
    };
  }
  return {
    type: "function_call",
    name: "shell",
    arguments: JSON.stringify({ command: ["bash", "-lc", command] }),
  };
}

/** Whether the request offers only code mode's JavaScript `exec` tool. */
function codeModeOnly(tools: Map<string, string>): boolean {
  return tools.get("exec") === "custom" && !tools.has("exec_command") &&
    !tools.has("shell_command") && !tools.has("shell") &&
    !tools.has("apply_patch");
}

/** The output item (without ids) that asks Codex to run `tool`. */
export function toolItem(tool: ScriptedTool, tools: Map<string, string>): Json {
  if (codeModeOnly(tools)) {
    const call = tool.kind === "shell"
      ? `tools.exec_command({ cmd: ${JSON.stringify(tool.command)} })`
      : `tools.apply_patch(${JSON.stringify(patchFor(tool))})`;
    return {
      type: "custom_tool_call",
      name: "exec",
      input: `text(await ${call});\n`,
    };
  }
  if (tool.kind === "shell") return shellCall(tool.command, tools);
  const patch = patchFor(tool);
  const applyPatch = tools.get("apply_patch");
  if (applyPatch === "custom") {
    return { type: "custom_tool_call", name: "apply_patch", input: patch };
  }
  if (applyPatch === "function") {
    return {
      type: "function_call",
      name: "apply_patch",
      arguments: JSON.stringify({ input: patch }),
    };
  }
  return shellCall(`apply_patch <<'PATCH'\n${patch}PATCH`, tools);
}

let counter = 0;
function nextId(prefix: string): string {
  counter++;
  return `${prefix}_${Date.now().toString(36)}${counter}`;
}

function event(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function errorBody(status: number, message: string | undefined): string {
  const [type, code, text] = status === 401
    ? ["invalid_request_error", "invalid_api_key", "Incorrect API key provided"]
    : status === 429
    ? ["rate_limit_exceeded", "rate_limit_exceeded", "Rate limit reached"]
    : status === 529 || status === 503
    ? ["server_error", "server_is_overloaded", "The server is overloaded"]
    : ["server_error", null, `Scripted error ${status}`];
  return JSON.stringify({
    error: { message: message ?? text, type, param: null, code },
  });
}

type Turn = Exclude<
  ScriptedReply,
  { status: number } | { hang: true } | {
    drop: true;
  }
>;

/** The SSE events of one scripted model turn. */
export function turnEvents(reply: Turn, tools: Map<string, string>): string[] {
  const responseId = nextId("resp");
  const out: string[] = [
    event("response.created", {
      response: { id: responseId, object: "response", status: "in_progress" },
    }),
  ];
  let index = 0;
  const emit = (item: Json, deltas: () => string[]): void => {
    const output_index = index++;
    out.push(event("response.output_item.added", { output_index, item }));
    out.push(...deltas());
    out.push(event("response.output_item.done", { output_index, item }));
  };
  if (reply.thinking !== undefined) {
    const id = nextId("rs");
    const text = reply.thinking;
    emit({
      type: "reasoning",
      id,
      summary: [{ type: "summary_text", text }],
      encrypted_content: null,
    }, () => [
      event("response.reasoning_summary_part.added", {
        item_id: id,
        output_index: index - 1,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      }),
      event("response.reasoning_summary_text.delta", {
        item_id: id,
        output_index: index - 1,
        summary_index: 0,
        delta: text,
      }),
      event("response.reasoning_summary_text.done", {
        item_id: id,
        output_index: index - 1,
        summary_index: 0,
        text,
      }),
    ]);
  }
  if (reply.text !== undefined) {
    const id = nextId("msg");
    const text = reply.text;
    emit({
      type: "message",
      id,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    }, () => [
      event("response.output_text.delta", {
        item_id: id,
        output_index: index - 1,
        content_index: 0,
        delta: text,
      }),
    ]);
  }
  for (const tool of reply.tools ?? []) {
    const item = {
      ...toolItem(tool, tools),
      id: nextId("fc"),
      call_id: nextId("call"),
      status: "completed",
    };
    emit(item, () => []);
  }
  const input = reply.usage?.input_tokens ?? 0;
  const output = reply.usage?.output_tokens ?? 0;
  out.push(event("response.completed", {
    response: {
      id: responseId,
      object: "response",
      status: "completed",
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + output,
      },
    },
  }));
  return out;
}

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
};

async function answerTurn(ctx: DialectContext): Promise<Response> {
  const reply = ctx.script.take();
  ctx.took(reply);
  if ("status" in reply) {
    return new Response(errorBody(reply.status, reply.message), {
      status: reply.status,
      headers: { "content-type": "application/json" },
    });
  }
  if ("hang" in reply) {
    const body = sseStream(ctx.signal, async (_send, end) => {
      await pause(2_147_483_647, ctx.signal);
      end();
    });
    return new Response(body, { headers: SSE_HEADERS });
  }
  const tools = offeredTools(ctx.body);
  if ("drop" in reply) {
    const events = turnEvents({ text: "This answer is cut off" }, tools);
    const body = sseStream(ctx.signal, async (send, _end, fail) => {
      send(events[0]!);
      send(events[1]!);
      await pause(50, ctx.signal);
      fail();
    });
    return new Response(body, { headers: SSE_HEADERS });
  }
  await holdReply(reply, ctx.signal);
  const events = turnEvents(reply, tools);
  const body = sseStream(ctx.signal, (send, end) => {
    for (const chunk of events) send(chunk);
    end();
    return Promise.resolve();
  });
  return new Response(body, { headers: SSE_HEADERS });
}

/** The OpenAI Responses API dialect (Codex). */
export const openaiDialect: Dialect = {
  name: "openai",
  handle(request: Request, ctx: DialectContext): Promise<Response> | Response {
    const path = new URL(request.url).pathname.replace(/\/+$/, "");
    if (request.method === "POST" && path.endsWith("/responses")) {
      return answerTurn(ctx);
    }
    if (request.method === "GET" && path.endsWith("/models")) {
      return Response.json({ object: "list", data: [], models: [] });
    }
    return Response.json(
      {
        error: {
          message: `No scripted answer for ${path}`,
          type: "invalid_request_error",
        },
      },
      { status: 404 },
    );
  },
  upgrade(): Response {
    return new Response("WebSockets are not scripted: use HTTPS", {
      status: 426,
    });
  },
};

/** Starts a scripted server speaking the Responses API on 127.0.0.1. */
export function startOpenAiServer(
  replies: ScriptedReply[],
  options: { fallback?: ScriptedReply } = {},
): Promise<ModelServer> {
  return startModelServer(openaiDialect, replies, options);
}
