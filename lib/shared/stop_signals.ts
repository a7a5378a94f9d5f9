/**
 * The signals that stop a command, and the exit code each one stands for:
 * 128 + the signal's number, as a shell reports a process it killed.
 *
 * @module
 */

import { ExitCode } from "./errors.ts";

/** A signal that stops a command. */
export type StopSignal = "SIGHUP" | "SIGINT" | "SIGTERM";

/**
 * The exit code of a command stopped by a signal.
 *
 * @example Usage
 * ```ts
 * import { stopExitCode } from "./stop_signals.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(stopExitCode("SIGINT"), 130);
 * assert.equal(stopExitCode("SIGTERM"), 143);
 * ```
 */
export function stopExitCode(signal: StopSignal): number {
  return ExitCode[signal];
}

/**
 * Calls `listener` with the signal and its exit code whenever one of
 * `signals` arrives, until the returned function removes the listeners.
 */
export function onStopSignals(
  signals: readonly StopSignal[],
  listener: (signal: StopSignal, exitCode: number) => void,
): () => void {
  const listeners = signals.map((signal) =>
    [signal, () => listener(signal, stopExitCode(signal))] as const
  );
  for (const [signal, handler] of listeners) {
    Deno.addSignalListener(signal, handler);
  }
  return () => {
    for (const [signal, handler] of listeners) {
      Deno.removeSignalListener(signal, handler);
    }
  };
}
