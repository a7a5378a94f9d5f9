/**
 * The Anthropic Messages API dialect of the scripted model server, spoken to
 * Claude Code (`ANTHROPIC_BASE_URL`).
 *
 * A conversation turn is a `POST /v1/messages` that offers tools; it takes
 * the next scripted reply. A streamed turn is answered as server-sent events
 * (`message_start`, one `content_block_start/delta/stop` run per thinking,
 * text and tool_use block, `message_delta` with the stop reason and usage,
 * `message_stop`). A turn with `stream: false` (Claude Code's fallback after
 * a dropped stream) gets the same blocks as one JSON message. Every other
 * request (`HEAD /api/hello`, `count_tokens`, a side query without tools)
 * gets a plain answer and never takes a scripted reply.
 *
 * Scripted tools become Claude Code's own: `write` → `Write`, `edit` →
 * `Read` then `Edit` (Claude Code refuses to edit a file it has not read in
 * the session), `shell` → `Bash`. Relative paths are made absolute against
 * the working directory the CLI states in its request.
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

/** A scripted model turn (not an error, hang or drop). */
type ModelTurn = Extract<ScriptedReply, { thinking?: string }>;

/** A content block of an answer, as the Messages API spells it. */
type Block =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
  };

const DEFAULT_MODEL = "claude-scripted-1";
const DEFAULT_USAGE = { input_tokens: 100, output_tokens: 20 };
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
};
const JSON_HEADERS = { "content-type": "application/json" };

let counter = 0;

function nextId(prefix: string): string {
  counter++;
  return `${prefix}_scripted_${counter}_${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * The working directory Claude Code states in its request ("Primary working
 * directory: …", in a system-role message or the system prompt), if any.
 */
export function requestCwd(body: unknown): string | null {
  const match = /Primary working directory: ([^\s"\\]+)/.exec(
    JSON.stringify(body ?? null),
  );
  return match?.[1] ?? null;
}

/** Whether a request is one of the conversation's model turns. */
export function isTurn(method: string, path: string, body: unknown): boolean {
  if (method !== "POST" || path !== "/v1/messages") return false;
  return isRecord(body) && Array.isArray(body.tools) && body.tools.length > 0;
}

/** The text of every user message in a turn's request, in order. */
export function userTexts(body: unknown): string[] {
  if (!isRecord(body) || !Array.isArray(body.messages)) return [];
  const texts: string[] = [];
  for (const message of body.messages) {
    if (!isRecord(message) || message.role !== "user") continue;
    if (typeof message.content === "string") texts.push(message.content);
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (isRecord(block) && typeof block.text === "string") {
        texts.push(block.text);
      }
    }
  }
  return texts;
}

function absolute(path: string, cwd: string | null): string {
  if (path.startsWith("/") || cwd === null) return path;
  return `${cwd.replace(/\/$/, "")}/${path}`;
}

function toolBlocks(tool: ScriptedTool, cwd: string | null): Block[] {
  const use = (name: string, input: Record<string, unknown>): Block => ({
    type: "tool_use",
    id: nextId("toolu"),
    name,
    input,
  });
  switch (tool.kind) {
    case "write":
      return [use("Write", {
        file_path: absolute(tool.path, cwd),
        content: tool.content,
      })];
    case "edit": {
      const filePath = absolute(tool.path, cwd);
      return [
        use("Read", { file_path: filePath }),
        use("Edit", {
          file_path: filePath,
          old_string: tool.old,
          new_string: tool.new,
          replace_all: false,
        }),
      ];
    }
    case "shell":
      return [use("Bash", {
        command: tool.command,
        description: "Scripted command",
      })];
  }
}

/** The content blocks of one scripted model turn. */
export function replyBlocks(reply: ModelTurn, cwd: string | null): Block[] {
  const tools = reply.tools ?? [];
  const blocks: Block[] = [];
  if (reply.thinking !== undefined) {
    blocks.push({
      type: "thinking",
      thinking: reply.thinking,
      signature: "sig_scripted",
    });
  }
  const text = reply.text ?? (tools.length === 0 ? "Done." : undefined);
  if (text !== undefined) blocks.push({ type: "text", text });
  for (const tool of tools) blocks.push(...toolBlocks(tool, cwd));
  return blocks;
}

function stopReason(blocks: Block[]): string {
  return blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
}

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Splits text into a few deltas, as a model streams it. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

function blockDeltas(block: Block): {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
} {
  switch (block.type) {
    case "thinking":
      return {
        start: { type: "thinking", thinking: "", signature: "" },
        deltas: [
          ...pieces(block.thinking, 24).map((thinking) => ({
            type: "thinking_delta",
            thinking,
          })),
          { type: "signature_delta", signature: block.signature },
        ],
      };
    case "text":
      return {
        start: { type: "text", text: "" },
        deltas: pieces(block.text, 24).map((text) => ({
          type: "text_delta",
          text,
        })),
      };
    case "tool_use":
      return {
        start: { ...block, input: {} },
        deltas: pieces(JSON.stringify(block.input), 40).map((partial) => ({
          type: "input_json_delta",
          partial_json: partial,
        })),
      };
  }
}

/** The server-sent events of one answer. */
export function streamEvents(
  blocks: Block[],
  model: string,
  usage: { input_tokens: number; output_tokens: number },
): string[] {
  const events = [sse("message_start", {
    message: {
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  })];
  blocks.forEach((block, index) => {
    const { start, deltas } = blockDeltas(block);
    events.push(sse("content_block_start", { index, content_block: start }));
    for (const delta of deltas) {
      events.push(sse("content_block_delta", { index, delta }));
    }
    events.push(sse("content_block_stop", { index }));
  });
  events.push(sse("message_delta", {
    delta: { stop_reason: stopReason(blocks), stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  }));
  events.push(sse("message_stop", {}));
  return events;
}

/** One answer as a whole JSON message (a `stream: false` call). */
export function wholeMessage(
  blocks: Block[],
  model: string,
  usage: { input_tokens: number; output_tokens: number },
): Record<string, unknown> {
  return {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model,
    content: blocks,
    stop_reason: stopReason(blocks),
    stop_sequence: null,
    usage: {
      ...usage,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

/** The API's error type for an HTTP status. */
export function errorType(status: number): string {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
  };
  return types[status] ?? "api_error";
}

function errorResponse(status: number, message?: string): Response {
  const type = errorType(status);
  return Response.json({
    type: "error",
    error: { type, message: message ?? `scripted ${status} ${type}` },
    request_id: `req_scripted_${status}`,
  }, { status, headers: status === 429 ? { "retry-after": "0" } : {} });
}

function modelOf(body: unknown): string {
  return isRecord(body) && typeof body.model === "string"
    ? body.model
    : DEFAULT_MODEL;
}

function sideAnswer(method: string, path: string, body: unknown): Response {
  if (path === "/v1/messages/count_tokens") {
    return Response.json({ input_tokens: 10 });
  }
  if (method !== "POST" || path !== "/v1/messages") return Response.json({});
  const blocks: Block[] = [{ type: "text", text: "ok" }];
  const usage = { input_tokens: 10, output_tokens: 1 };
  if (isRecord(body) && body.stream === true) {
    const events = streamEvents(blocks, modelOf(body), usage);
    return new Response(events.join(""), { headers: SSE_HEADERS });
  }
  return Response.json(wholeMessage(blocks, modelOf(body), usage));
}

function answerTurn(reply: ScriptedReply, ctx: DialectContext): Response {
  if ("status" in reply) return errorResponse(reply.status, reply.message);
  const streaming = isRecord(ctx.body) && ctx.body.stream === true;
  const headers = streaming ? SSE_HEADERS : JSON_HEADERS;
  if ("hang" in reply) {
    const body = sseStream(ctx.signal, () => new Promise<void>(() => {}));
    return new Response(body, { headers });
  }
  const model = modelOf(ctx.body);
  const turn: ModelTurn = "drop" in reply
    ? { text: "This answer is cut off halfway through." }
    : reply;
  const blocks = replyBlocks(turn, requestCwd(ctx.body));
  const usage = turn.usage ?? DEFAULT_USAGE;
  const chunks = streaming
    ? streamEvents(blocks, model, usage)
    : [JSON.stringify(wholeMessage(blocks, model, usage))];
  const body = sseStream(ctx.signal, async (send, end, fail) => {
    if ("drop" in reply) {
      // Half the answer, then a cut connection.
      if (streaming) chunks.slice(0, 3).forEach(send);
      else send(chunks[0]!.slice(0, 40));
      await pause(50, ctx.signal);
      return fail();
    }
    if (streaming) send(chunks[0]!);
    await holdReply(turn, ctx.signal);
    chunks.slice(streaming ? 1 : 0).forEach(send);
    end();
  });
  return new Response(body, { headers });
}

/** The Anthropic Messages API, as Claude Code calls it. */
export const anthropicDialect: Dialect = {
  name: "anthropic",
  handle(request: Request, ctx: DialectContext): Response {
    const path = new URL(request.url).pathname;
    if (!isTurn(request.method, path, ctx.body)) {
      return sideAnswer(request.method, path, ctx.body);
    }
    const reply = ctx.script.take();
    ctx.took(reply);
    return answerTurn(reply, ctx);
  },
};

/** Starts a scripted server speaking the Anthropic Messages API. */
export function startAnthropicServer(
  replies: ScriptedReply[],
  options: { fallback?: ScriptedReply } = {},
): Promise<ModelServer> {
  return startModelServer(anthropicDialect, replies, options);
}
