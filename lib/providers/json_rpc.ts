/**
 * A JSON-RPC 2.0 peer over newline-delimited JSON, as the live-lane agents
 * speak it on stdio (`codex app-server`, ACP agents): requests with ids and
 * their responses, notifications, and requests from the agent to us
 * (approvals, permissions), answered from a handler, never left waiting.
 *
 * The peer does no I/O of its own: it writes through the function it is
 * given and is fed each parsed line. A message that is not JSON-RPC is
 * left to the caller.
 *
 * @module
 */

import { isRecord } from "../shared/is_record.ts";
import { errorText } from "../shared/errors.ts";

/** An error answer to a request (either side). */
export class JsonRpcError extends Error {
  /** The JSON-RPC error code (-32601 method not found, -32603 internal…). */
  readonly code: number;
  /** The error's `data`, if any. */
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "JsonRpcError";
    this.code = code;
    this.data = data;
  }
}

/** What the peer hands incoming messages to. */
export interface JsonRpcHandlers {
  /** A notification from the agent. */
  notification(method: string, params: unknown): void;
  /**
   * A request from the agent: the return value is the result; a thrown
   * {@linkcode JsonRpcError} is the error answer (anything else thrown is
   * answered as an internal error).
   */
  request(method: string, params: unknown): Promise<unknown> | unknown;
}

/** Options of one request. */
export interface RequestOptions {
  /** Rejects when no answer came within this many ms (default: never). */
  timeoutMs?: number;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * One side of a JSON-RPC connection.
 *
 * @example A request answered by the other side
 * ```ts
 * import { JsonRpcPeer } from "./json_rpc.ts";
 * import assert from "node:assert/strict";
 *
 * const sent: string[] = [];
 * const peer = new JsonRpcPeer((line) => {
 *   sent.push(line);
 *   return Promise.resolve();
 * }, { notification: () => {}, request: () => null });
 * const answer = peer.request("thread/start", { cwd: "/tmp" });
 * const { id } = JSON.parse(sent[0]!);
 * peer.receive({ jsonrpc: "2.0", id, result: { thread: { id: "t1" } } });
 * assert.deepEqual(await answer, { thread: { id: "t1" } });
 * ```
 */
export class JsonRpcPeer {
  readonly #write: (line: string) => Promise<void>;
  readonly #handlers: JsonRpcHandlers;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed: string | null = null;

  /**
   * @param write Writes one line (a JSON message, without its newline).
   * @param handlers Where the agent's notifications and requests go.
   */
  constructor(
    write: (line: string) => Promise<void>,
    handlers: JsonRpcHandlers,
  ) {
    this.#write = write;
    this.#handlers = handlers;
  }

  /**
   * Sends a request and waits for its answer.
   *
   * @throws {JsonRpcError} the agent's error answer.
   * @throws {Error} when the connection closed first, the write failed, or
   * the timeout passed.
   */
  request(
    method: string,
    params: unknown,
    options: RequestOptions = {},
  ): Promise<unknown> {
    if (this.#closed !== null) {
      return Promise.reject(new Error(`${method}: ${this.#closed}`));
    }
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const pending: Pending = { method, resolve, reject, timer: undefined };
    if (options.timeoutMs !== undefined) {
      pending.timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(
          new Error(`${method}: no answer within ${options.timeoutMs} ms`),
        );
      }, options.timeoutMs);
    }
    this.#pending.set(id, pending);
    this.#write(JSON.stringify({ jsonrpc: "2.0", id, method, params })).catch(
      (error) => this.#settle(id, undefined, new Error(errorText(error))),
    );
    return promise;
  }

  /** Sends a notification. */
  async notify(method: string, params: unknown): Promise<void> {
    if (this.#closed !== null) return;
    await this.#write(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /**
   * Takes one parsed line from the agent. Returns false when it is not a
   * JSON-RPC message (the caller keeps it in the transcript).
   */
  receive(message: unknown): boolean {
    if (!isRecord(message)) return false;
    const method = typeof message.method === "string" ? message.method : null;
    const hasId = typeof message.id === "number" ||
      typeof message.id === "string";
    if (method !== null && hasId) {
      this.#answer(message.id as number | string, method, message.params);
      return true;
    }
    if (method !== null) {
      this.#handlers.notification(method, message.params);
      return true;
    }
    if (hasId && ("result" in message || "error" in message)) {
      const id = Number(message.id);
      if (isRecord(message.error)) {
        const error = message.error;
        this.#settle(
          id,
          undefined,
          new JsonRpcError(
            typeof error.code === "number" ? error.code : -32603,
            typeof error.message === "string" ? error.message : "error",
            error.data,
          ),
        );
      } else {
        this.#settle(id, message.result, null);
      }
      return true;
    }
    return false;
  }

  /** Rejects every request still waiting; later ones reject at once. */
  close(reason: string): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    for (const [id, pending] of [...this.#pending]) {
      this.#settle(id, undefined, new Error(`${pending.method}: ${reason}`));
    }
  }

  /** How many requests wait for an answer. */
  get waiting(): number {
    return this.#pending.size;
  }

  #settle(id: number, result: unknown, error: Error | null): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (error === null) pending.resolve(result);
    else pending.reject(error);
  }

  async #answer(
    id: number | string,
    method: string,
    params: unknown,
  ): Promise<void> {
    let reply: Record<string, unknown>;
    try {
      const result = await this.#handlers.request(method, params);
      reply = { jsonrpc: "2.0", id, result: result ?? null };
    } catch (error) {
      reply = {
        jsonrpc: "2.0",
        id,
        error: error instanceof JsonRpcError
          ? {
            code: error.code,
            message: error.message,
            ...(error.data === undefined ? {} : { data: error.data }),
          }
          : { code: -32603, message: errorText(error) },
      };
    }
    if (this.#closed !== null) return;
    await this.#write(JSON.stringify(reply)).catch(() => {});
  }
}
