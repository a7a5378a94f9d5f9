/**
 * Stopping a follower on SIGINT/SIGTERM: the iteration ends quietly and the
 * command exits 130/143.
 *
 * @module
 */

/** An abort signal tied to SIGINT and SIGTERM while `fn` runs. */
export async function withStopSignals(
  fn: (signal: AbortSignal) => Promise<number>,
): Promise<number> {
  const abort = new AbortController();
  let code = 0;
  const listeners: [Deno.Signal, () => void][] = [
    ["SIGINT", () => {
      code = 130;
      abort.abort();
    }],
    ["SIGTERM", () => {
      code = 143;
      abort.abort();
    }],
  ];
  for (const [signal, listener] of listeners) {
    Deno.addSignalListener(signal, listener);
  }
  try {
    const result = await fn(abort.signal);
    return code || result;
  } finally {
    for (const [signal, listener] of listeners) {
      Deno.removeSignalListener(signal, listener);
    }
  }
}
