/**
 * A scripted model server for tests: the real agent CLIs (Claude Code,
 * Codex, Gemini CLI) are pointed at it with their base-URL settings and a
 * dummy key, and it answers their model requests from a script. It listens
 * on 127.0.0.1 only, refuses bodies over 8 MiB, and ends every open stream
 * when closed.
 *
 * A dialect (`anthropic.ts`, `openai.ts`, `gemini.ts`) turns a scripted
 * reply into its API's wire format; this file holds what they share: the
 * script, the cursor over it, the request record and the server's life.
 *
 * @module
 */

import { errorText } from "../../../lib/shared/errors.ts";

/** A tool call the model asks for; the CLI really executes it. */
export type ScriptedTool =
  | { kind: "write"; path: string; content: string }
  | { kind: "edit"; path: string; old: string; new: string }
  | { kind: "shell"; command: string };

/** One answer to one model request. */
export type ScriptedReply =
  | {
    /** Thinking text, sent first. */
    thinking?: string;
    /** Assistant text. */
    text?: string;
    /** Tool calls, after the text; the CLI runs them and asks again. */
    tools?: ScriptedTool[];
    /** Token usage reported for this request. */
    usage?: { input_tokens: number; output_tokens: number };
    /** Waits this long before answering (a long turn to steer into). */
    delay_ms?: number;
    /**
     * Holds the answer until this settles (a reply the test releases once it
     * has steered into the turn); the server's close ends the wait too.
     */
    until?: Promise<unknown>;
  }
  /** An HTTP error: 401, 429, 529, 500… with an API-shaped body. */
  | { status: number; message?: string }
  /** Accepts the request and never answers (until the server closes). */
  | { hang: true }
  /** Starts the streamed answer, then cuts the connection mid-stream. */
  | { drop: true };

/** A request the server received. */
export interface RecordedRequest {
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The HTTP method. */
  method: string;
  /** The URL's path and query. */
  path: string;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  /** Whether it was a model turn that consumed a scripted reply. */
  scripted: boolean;
  /** The reply it consumed, when `scripted`. */
  reply?: ScriptedReply;
}

/** The script's cursor: model turns take replies in order. */
export class Script {
  readonly #replies: ScriptedReply[];
  readonly #fallback: ScriptedReply;
  #next = 0;

  constructor(replies: ScriptedReply[], fallback?: ScriptedReply) {
    this.#replies = [...replies];
    this.#fallback = fallback ?? { text: "Done." };
  }

  /** The next reply; once the script is used up, the fallback (a plain "Done."). */
  take(): ScriptedReply {
    const reply = this.#replies[this.#next];
    if (reply === undefined) return this.#fallback;
    this.#next++;
    return reply;
  }

  /** How many replies were taken. */
  get taken(): number {
    return this.#next;
  }

  /** Appends replies (a test that scripts the next turn once it sees this one). */
  push(...replies: ScriptedReply[]): void {
    this.#replies.push(...replies);
  }
}

/** What a dialect is given for each request. */
export interface DialectContext {
  /** The script. */
  script: Script;
  /** The request's parsed body (or raw text). */
  body: unknown;
  /** Marks this request as a model turn that took `reply`. */
  took(reply: ScriptedReply): void;
  /** Aborted when the server closes: a hanging or slow answer ends then. */
  signal: AbortSignal;
}

/** A wire dialect: answers one request. */
export interface Dialect {
  /** The dialect's name, for messages. */
  readonly name: string;
  /** Answers a request (every path the CLI calls, model turns and the rest). */
  handle(request: Request, ctx: DialectContext): Promise<Response> | Response;
  /** Answers a WebSocket upgrade, when the dialect speaks one (Codex). */
  upgrade?(request: Request, ctx: DialectContext): Response | null;
}

/** A running scripted model server. */
export interface ModelServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The script (a test may push more replies while the CLI runs). */
  readonly script: Script;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** The model turns only (requests that took a scripted reply). */
  turns(): RecordedRequest[];
  /** Stops listening and ends every open answer. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** A stream body that can be ended from outside (hang, drop, close). */
export function sseStream(
  signal: AbortSignal,
  produce: (
    send: (chunk: string) => void,
    end: () => void,
    fail: () => void,
  ) => Promise<void>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller): void {
      const end = () => {
        if (done) return;
        done = true;
        try {
          controller.close();
        } catch { /* already closed */ }
      };
      const fail = () => {
        if (done) return;
        done = true;
        controller.error(new Error("dropped by the scripted server"));
      };
      const send = (chunk: string) => {
        if (!done) controller.enqueue(encoder.encode(chunk));
      };
      signal.addEventListener("abort", fail, { once: true });
      produce(send, end, fail).catch(fail);
    },
    cancel(): void {
      done = true;
    },
  });
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/** Waits out a reply's `delay_ms`, then its `until`, or until `signal` aborts. */
export async function holdReply(
  reply: { delay_ms?: number; until?: Promise<unknown> },
  signal: AbortSignal,
): Promise<void> {
  await pause(reply.delay_ms ?? 0, signal);
  if (reply.until === undefined || signal.aborted) return;
  const closed = new Promise<void>((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
  await Promise.race([reply.until.then(() => {}, () => {}), closed]);
}

/**
 * Starts a server speaking `dialect` on 127.0.0.1 (a free port).
 *
 * @param replies The model turns' answers, in order.
 * @param options `fallback`: the answer once the script is used up.
 */
export function startModelServer(
  dialect: Dialect,
  replies: ScriptedReply[],
  options: { fallback?: ScriptedReply } = {},
): Promise<ModelServer> {
  const script = new Script(replies, options.fallback);
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const { promise: ready, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolve(port),
    onError: (error) =>
      new Response(`scripted server error: ${errorText(error)}`, {
        status: 500,
      }),
  }, async (request) => {
    const url = new URL(request.url);
    const record: RecordedRequest = {
      at: Date.now(),
      method: request.method,
      path: url.pathname + url.search,
      body: null,
      scripted: false,
    };
    requests.push(record);
    const ctx: DialectContext = {
      script,
      body: null,
      took(reply): void {
        record.scripted = true;
        record.reply = reply;
      },
      signal: closing.signal,
    };
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      return dialect.upgrade?.(request, ctx) ??
        new Response("no websocket here", { status: 404 });
    }
    const length = Number(request.headers.get("content-length") ?? "0");
    if (length > MAX_BODY_BYTES) {
      return new Response("body too large", { status: 413 });
    }
    const text = request.body ? await request.text() : "";
    if (text.length > MAX_BODY_BYTES) {
      return new Response("body too large", { status: 413 });
    }
    try {
      record.body = text ? JSON.parse(text) : null;
    } catch {
      record.body = text;
    }
    ctx.body = record.body;
    return await dialect.handle(request, ctx);
  });
  return ready.then((port) => ({
    url: `http://127.0.0.1:${port}`,
    script,
    requests,
    turns: () => requests.filter((r) => r.scripted),
    async close(): Promise<void> {
      closing.abort();
      await server.shutdown();
    },
  }));
}
