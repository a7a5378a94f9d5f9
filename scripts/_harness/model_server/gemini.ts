/**
 * The Gemini API dialect of the scripted model server, for the Gemini CLI
 * (`GOOGLE_GEMINI_BASE_URL`). Model turns are
 * `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, answered as
 * SSE chunks of `GenerateContentResponse`. The CLI's non-streaming side
 * calls (`:generateContent`: next-speaker check, routing classifier, loop
 * check, summaries) and `:countTokens` are answered without consuming a
 * scripted reply.
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

/** The Google RPC status name for an HTTP status, as the real API sends it. */
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  529: "UNAVAILABLE",
};

const DEFAULT_MESSAGES: Record<number, string> = {
  401: "API key not valid. Please pass a valid API key.",
  429: "Resource has been exhausted (e.g. check quota).",
  503: "The model is overloaded. Please try again later.",
  529: "The model is overloaded. Please try again later.",
};

/** A Gemini `functionCall` part for a scripted tool call. */
export function functionCall(
  tool: ScriptedTool,
): { name: string; args: Record<string, unknown> } {
  switch (tool.kind) {
    case "write":
      return {
        name: "write_file",
        args: { file_path: tool.path, content: tool.content },
      };
    case "edit":
      return {
        name: "replace",
        args: {
          file_path: tool.path,
          old_string: tool.old,
          new_string: tool.new,
          instruction: `Replace "${tool.old}" with "${tool.new}".`,
        },
      };
    case "shell":
      return {
        name: "run_shell_command",
        args: { command: tool.command, description: "Scripted command." },
      };
  }
}

function errorResponse(status: number, message?: string): Response {
  const body = {
    error: {
      code: status,
      message: message ?? DEFAULT_MESSAGES[status] ??
        `Scripted error ${status}.`,
      status: STATUS_NAMES[status] ?? "UNKNOWN",
    },
  };
  return Response.json(body, { status });
}

function chunk(
  model: string,
  parts: Record<string, unknown>[],
  finish: boolean,
  usage?: { input_tokens: number; output_tokens: number },
): string {
  const response: Record<string, unknown> = {
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finish ? { finishReason: "STOP" } : {}),
    }],
    modelVersion: model,
  };
  if (finish) {
    const input = usage?.input_tokens ?? 0;
    const output = usage?.output_tokens ?? 0;
    response.usageMetadata = {
      promptTokenCount: input,
      candidatesTokenCount: output,
      totalTokenCount: input + output,
    };
  }
  return `data: ${JSON.stringify(response)}\r\n\r\n`;
}

/** Splits text into a few pieces so the CLI sees several deltas. */
function pieces(text: string): string[] {
  const words = text.split(/(?<= )/);
  const size = Math.max(1, Math.ceil(words.length / 3));
  const result: string[] = [];
  for (let i = 0; i < words.length; i += size) {
    result.push(words.slice(i, i + size).join(""));
  }
  return result;
}

function sse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    },
  });
}

/** Answers one model turn from the script. */
function modelTurn(
  reply: ScriptedReply,
  ctx: DialectContext,
  model: string,
): Response {
  if ("status" in reply) return errorResponse(reply.status, reply.message);
  if ("hang" in reply) {
    // Headers go out, then nothing until the server closes.
    return sse(sseStream(ctx.signal, async (_send, end) => {
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) return resolve();
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      end();
    }));
  }
  if ("drop" in reply) {
    return sse(sseStream(ctx.signal, async (send, _end, fail) => {
      send(chunk(model, [{ text: "Starting" }], false));
      await pause(50, ctx.signal);
      fail();
    }));
  }
  return sse(sseStream(ctx.signal, async (send, end) => {
    await holdReply(reply, ctx.signal);
    if (ctx.signal.aborted) return end();
    if (reply.thinking) {
      send(chunk(model, [{ thought: true, text: reply.thinking }], false));
    }
    const texts = reply.text ? pieces(reply.text) : [];
    const calls = (reply.tools ?? []).map((tool) => ({
      functionCall: functionCall(tool),
    }));
    texts.forEach((text, i) => {
      const last = i === texts.length - 1 && calls.length === 0;
      send(chunk(model, [{ text }], last, reply.usage));
    });
    if (calls.length > 0) send(chunk(model, calls, true, reply.usage));
    if (texts.length === 0 && calls.length === 0) {
      send(chunk(model, [{ text: "" }], true, reply.usage));
    }
    end();
  }));
}

/** Values for the keys the CLI's JSON side calls ask for. */
const SIDE_CALL_VALUES: Record<string, unknown> = {
  next_speaker: "user",
  model_choice: "pro",
  complexity_score: 50,
  unproductive_state_confidence: 0,
};

/** A JSON value that fits a (Gemini-style) schema, "nothing to do" in spirit. */
function fitSchema(schema: unknown, key: string): unknown {
  if (key in SIDE_CALL_VALUES) return SIDE_CALL_VALUES[key];
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (String(s.type ?? "").toLowerCase()) {
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        Object.entries(props).map(([k, v]) => [k, fitSchema(v, k)]),
      );
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    default:
      return "Scripted side call.";
  }
}

/**
 * Answers a non-streaming side call (the routing classifier with the `auto`
 * model, the next-speaker and loop checks, summaries): a JSON-mode call gets
 * an object fitting its schema, saying "nothing to do" (the user speaks
 * next, no loop); any other call a short text.
 */
function sideCall(body: unknown, model: string): Response {
  const config = (body as { generationConfig?: Record<string, unknown> })
    ?.generationConfig;
  const schema = config?.responseJsonSchema ?? config?.responseSchema;
  const text = schema !== undefined
    ? JSON.stringify(fitSchema(schema, ""))
    : config?.responseMimeType === "application/json"
    ? JSON.stringify(SIDE_CALL_VALUES)
    : "Scripted summary.";
  return Response.json({
    candidates: [{
      content: { role: "model", parts: [{ text }] },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: {
      promptTokenCount: 0,
      candidatesTokenCount: 0,
      totalTokenCount: 0,
    },
    modelVersion: model,
  });
}

const MODEL_PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):([A-Za-z]+)$/;

/** The Gemini API dialect. */
export const geminiDialect: Dialect = {
  name: "gemini",
  handle(request: Request, ctx: DialectContext): Response {
    const url = new URL(request.url);
    const match = MODEL_PATH.exec(url.pathname);
    if (request.method !== "POST" || !match) {
      return errorResponse(404, `No scripted answer for ${url.pathname}.`);
    }
    const [, model = "", method = ""] = match;
    switch (method) {
      case "streamGenerateContent": {
        const reply = ctx.script.take();
        ctx.took(reply);
        return modelTurn(reply, ctx, model);
      }
      case "generateContent":
        return sideCall(ctx.body, model);
      case "countTokens":
        return Response.json({ totalTokens: 1 });
      default:
        return errorResponse(404, `No scripted answer for ${method}.`);
    }
  },
};

/** Starts a scripted model server speaking the Gemini API. */
export function startGeminiServer(
  replies: ScriptedReply[],
  options: { fallback?: ScriptedReply } = {},
): Promise<ModelServer> {
  return startModelServer(geminiDialect, replies, options);
}
