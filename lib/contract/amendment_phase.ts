/**
 * The phase of an amendment: before any verification, after a failed one,
 * or after a passed one.
 *
 * @module
 */

import type { AmendmentPhase } from "../control/amendment_log.ts";
import { readState } from "../status/state_file.ts";

/**
 * The phase of an amendment made now, from the prompt's verification history
 * in the state root (its latest verification, whichever run made it).
 */
export async function amendmentPhase(
  stateRoot: string,
  promptId: string,
): Promise<AmendmentPhase> {
  const state = await readState(stateRoot);
  const attempts = state.prompts[promptId]?.attempts ?? [];
  const last = attempts.findLast((attempt) => attempt.verifier !== null);
  if (last === undefined) return "pre_verify";
  return last.verifier!.passed ? "post_success" : "post_failure";
}
