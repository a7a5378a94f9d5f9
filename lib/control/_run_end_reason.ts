/**
 * The reasons a request is refused because its run ended before it could
 * be applied, written in one place: the plane's last sweep, a client
 * settling its own late request, and the end of steers no lane settled all
 * use them, and a waiter (`waitForOutcome`) tells such a refusal from one
 * the run made on its merits.
 *
 * @module
 */

/** A request still waiting when its run ended with `status`. */
export function runEndedReason(status: string): string {
  return `the run ended (${status}) before the request was applied`;
}

/** A request whose run was replaced (by `by`, when known) before it was applied. */
export function runReplacedReason(runId: string, by: string | null): string {
  return `run ${runId} was replaced by ${
    by ?? "another run"
  } before the request was applied`;
}

/** An accepted steer no lane delivered or refused before its runner stopped. */
export const RUNNER_STOPPED_REASON =
  "the runner stopped before the steer could be delivered; send it again if it still matters";

const ENDED = /^the run ended \([^)]*\) before the request was applied$/;
const REPLACED = /^run \S+ was replaced by .* before the request was applied$/;

/**
 * Whether a rejection's reason says the run ended (or was replaced, or its
 * runner stopped) before the request could be applied, rather than that
 * the run refused it.
 */
export function isRunEndReason(reason: string | null): boolean {
  if (reason === null) return false;
  return reason === RUNNER_STOPPED_REASON || ENDED.test(reason) ||
    REPLACED.test(reason);
}
