/**
 * A refused connection's late reset: with wrong credentials the server
 * answers, then closes, and the NATS client lets go of the socket and of
 * its listeners; the socket may still report its reset (`ECONNRESET`), an
 * uncaught error that would end the process (exit 1) just after the
 * refusal was reported (exit 4).
 *
 * @module
 */

/**
 * Lets such a reset pass for a moment (which holds no process open), and
 * rethrows the connection's own error.
 */
export function quietLateReset(error: unknown): never {
  const onError = (event: ErrorEvent): void => {
    const code = (event.error as { code?: unknown } | null)?.code;
    if (code === "ECONNRESET") event.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  Deno.unrefTimer(
    setTimeout(() => globalThis.removeEventListener("error", onError), 2_000),
  );
  throw error;
}
