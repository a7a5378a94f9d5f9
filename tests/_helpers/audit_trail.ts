/**
 * The audit trail check every test packet runs when it is disposed: the
 * state root's `control log --verify`, in process. Any test whose runs
 * break a hash chain, lose a receipt's log line or an amendment fails.
 *
 * @module
 */

import { AssertionError } from "node:assert/strict";
import { verifyLog } from "../../lib/control/verify_log.ts";
import { NotFoundError } from "../../lib/shared/errors.ts";

/**
 * Asserts that a state root's audit trail holds (torn lines and receipts
 * still being finished are notes, and hold). A state root that does not
 * exist holds.
 *
 * @throws {AssertionError} naming each line that does not hold.
 */
export async function assertTrailHolds(stateRoot: string): Promise<void> {
  let found;
  try {
    found = await verifyLog(stateRoot);
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
  if (found.holds) return;
  throw new AssertionError({
    message:
      `the audit trail of "${stateRoot}" does not hold (control log --verify):\n${
        found.problems.map((p) =>
          `  ${p.file}${
            p.line === null ? "" : ` line ${p.line}`
          }: ${p.kind}: ${p.message}`
        ).join("\n")
      }`,
  });
}
