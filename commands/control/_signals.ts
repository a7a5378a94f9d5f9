/**
 * Stopping a follower on SIGINT/SIGTERM: the iteration ends quietly and the
 * command exits 130/143.
 *
 * @module
 */

import { onStopSignals } from "../../lib/shared/stop_signals.ts";

/** An abort signal tied to SIGINT and SIGTERM while `fn` runs. */
export async function withStopSignals(
  fn: (signal: AbortSignal) => Promise<number>,
): Promise<number> {
  const abort = new AbortController();
  let code = 0;
  const remove = onStopSignals(["SIGINT", "SIGTERM"], (_signal, exitCode) => {
    code = exitCode;
    abort.abort();
  });
  try {
    const result = await fn(abort.signal);
    return code || result;
  } finally {
    remove();
  }
}
