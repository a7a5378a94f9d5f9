/**
 * What the scripts and the tests know of `prompt_runner serve` from the
 * outside: a state root's URL key, a free port, and a DevTools session on
 * its inspector (`tests/_helpers/serve_process.ts` re-exports these).
 *
 * @module
 */

import { createHash } from "node:crypto";

/** The URL key of a state root that is not a workspace's (serve spec). */
export function rootKey(stateRoot: string): string {
  return "r-" +
    createHash("sha256").update(stateRoot).digest("hex").slice(0, 12);
}

/** A free port on 127.0.0.1 (for an inspector). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A Chrome DevTools Protocol session on the server's inspector. */
export class Inspector {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, (result: unknown) => void>();
  #id = 0;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data));
      this.#pending.get(message.id)?.(message.result ?? message.error);
      this.#pending.delete(message.id);
    };
  }

  /** Opens a session on the first target of the inspector at `port`. */
  static async open(port: number): Promise<Inspector> {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`))
      .json() as { webSocketDebuggerUrl: string }[];
    const url = targets[0]!.webSocketDebuggerUrl;
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`cannot open ${url}`));
    });
    return new Inspector(socket);
  }

  /** Sends a command and waits for its result. */
  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#id;
    return new Promise((resolve) => {
      this.#pending.set(id, (result) => resolve(result as T));
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * The V8 heap in use (bytes) after a full collection: the spaces that
   * hold data, without compiled code and its metadata (which grows while
   * the JIT warms up, and is no leak).
   */
  async heapAfterGc(): Promise<number> {
    await this.send("HeapProfiler.collectGarbage");
    const { result } = await this.send<{ result: { value: number } }>(
      "Runtime.evaluate",
      {
        expression: `import("node:v8").then((v8) => v8.getHeapSpaceStatistics()
          .filter((s) => /^(new|old|large_object|new_large_object)_space$/.test(s.space_name))
          .reduce((n, s) => n + s.space_used_size, 0))`,
        awaitPromise: true,
        returnByValue: true,
      },
    );
    return result.value;
  }

  /** Closes the session, and waits until it is closed. */
  async close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise((resolve) => this.#socket.onclose = resolve);
    this.#socket.close();
    await closed;
  }
}
