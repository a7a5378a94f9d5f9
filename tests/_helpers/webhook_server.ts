/**
 * A webhook receiver on 127.0.0.1 for notification tests: it records each
 * request and answers as told (a status, or never: it hangs until the
 * receiver closes).
 *
 * @module
 */

/** A request the receiver got. */
export interface ReceivedRequest {
  /** The method. */
  method: string;
  /** The path and query. */
  path: string;
  /** The headers, lower-case names. */
  headers: Record<string, string>;
  /** The body. */
  body: string;
}

/** A running receiver; `await using` closes it. */
export interface WebhookServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** What it got, in order. */
  requests: ReceivedRequest[];
  /** Closes it, ending any request it holds. */
  close(): Promise<void>;
}

/**
 * Starts a receiver that answers each request with `answer(request)`: a
 * status code, or `"hang"` (no answer until the receiver closes).
 */
export function webhookServer(
  answer: (request: ReceivedRequest) => number | "hang",
): WebhookServer {
  const requests: ReceivedRequest[] = [];
  const closing = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen(): void {} },
    async (request) => {
      const received: ReceivedRequest = {
        method: request.method,
        path: new URL(request.url).pathname + new URL(request.url).search,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      };
      requests.push(received);
      const status = answer(received);
      if (status === "hang") {
        await new Promise<void>((resolve) => {
          if (closing.signal.aborted) return resolve();
          closing.signal.addEventListener("abort", () => resolve());
        });
        return new Response(null, { status: 504 });
      }
      return new Response(status === 204 ? null : "ok", { status });
    },
  );
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing.abort();
      await server.shutdown();
    })();
    return closed;
  };
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
