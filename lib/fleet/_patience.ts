/**
 * Waiting out a fleet that answers slowly for a while: a cluster electing a
 * leader after losing a node, a server restarting. A JetStream call that
 * times out or finds no responder is tried again, with a growing pause,
 * until the caller's patience runs out; then the fleet "did not answer"
 * (exit 4), its URL's secrets masked. Anything else fails at once.
 *
 * @module
 */

import { errorText, StateError } from "../shared/errors.ts";
import { maskFleetSecrets } from "./fleet_url.ts";

const PAUSES_MS = [50, 100, 250, 500, 1_000];

/** Whether an error of the NATS client passes by itself. */
export function isTransient(error: unknown): boolean {
  const e = error as { name?: string; code?: unknown; message?: string };
  // The servers' own refusal passes by no waiting.
  if (/permission|authori[sz]ation|authentication/i.test(e?.message ?? "")) {
    return false;
  }
  if (
    e?.name === "TimeoutError" || e?.name === "NoResponders" ||
    e?.name === "NoRespondersError" ||
    e?.name === "RequestError"
  ) {
    return true;
  }
  if (e?.code === 503 || e?.code === 408) return true;
  // A consumer asked of a stream still being made (or being stopped).
  if (/\binvalid stream\b/i.test(e?.message ?? "")) return true;
  return /timeout|timed out|no responders|no (meta )?leader|leader(ship)? (is )?not|temporarily unavailable|not available|connection (closed|disconnected)/i
    .test(e?.message ?? "");
}

/** The error of a fleet that did not answer in time. */
export function noAnswerError(
  shown: string,
  cause: unknown,
  what?: string,
): StateError {
  return new StateError(
    `The fleet at ${shown} did not answer${what ? ` (${what})` : ""}: ${
      maskFleetSecrets(errorText(cause))
    }`,
    {
      code: "FLEET_NO_ANSWER",
      hint:
        "Its servers may be restarting or electing a leader; try again, or check them ('nats-server' logs, /healthz)",
      cause,
    },
  );
}

/**
 * Runs `work`, again while it fails transiently, for at most `patienceMs`.
 *
 * @throws {StateError} `FLEET_NO_ANSWER` when it still fails so then; the
 * error itself when it is not transient.
 */
export async function patiently<T>(
  work: () => Promise<T>,
  options: { patienceMs: number; shown: string; what?: string },
): Promise<T> {
  const deadline = Date.now() + options.patienceMs;
  for (let attempt = 0;; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isTransient(error)) throw error;
      const pause = PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)]!;
      if (Date.now() + pause >= deadline) {
        throw noAnswerError(options.shown, error, options.what);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
