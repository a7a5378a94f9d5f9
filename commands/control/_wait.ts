/**
 * `--wait [--timeout S]` of `control view`, `steer`, `amend` and `relax`:
 * block until the request's outcome is final and exit by it (0 applied, 4
 * rejected, 5 the run ended first, 124 the time limit passed), printing
 * the request's last log entry. The flags and their checks, which the
 * planner needs; the waiting is in `_wait_report.ts`, loaded by the work.
 *
 * @module
 */

import {
  RunLostError,
  StateError,
  UsageError,
} from "../../lib/shared/errors.ts";
import { secondsFlag } from "../_args.ts";
import type { ControlFlag, FlagValues } from "./_declare.ts";

/** The flags, as each command's help lists them. */
export const WAIT_FLAGS: Record<string, ControlFlag> = {
  wait: {
    type: "boolean",
    help: "Wait until the outcome is final and exit by it (0 applied,\n" +
      "4 rejected, 5 the run ended first), printing its log entry",
  },
  timeout: {
    type: "string",
    arg: "S",
    help: "With --wait: give up after S seconds (exit 124)",
  },
};

/** `--json` of `view` and `steer`. */
export const REQUEST_JSON_FLAG: ControlFlag = {
  type: "boolean",
  help: "Print {request_id, run_id} as one JSON line; with --wait,\n" +
    "the final log entry instead",
};

/** What `--wait` asks for: `null` without it. */
export interface WaitChoice {
  /** The time limit in milliseconds, or `null` for none. */
  timeoutMs: number | null;
}

/**
 * Reads `--wait` and `--timeout`, before any file is read.
 *
 * @throws {UsageError} for a bad `--timeout`, or one without `--wait`.
 */
export function waitChoice(values: FlagValues): WaitChoice | null {
  const timeout = values.timeout as string | undefined;
  if (values.wait !== true) {
    if (timeout === undefined) return null;
    throw new UsageError("--timeout goes with --wait", {
      hint: "Add --wait to block until the outcome is final",
    });
  }
  return {
    timeoutMs: timeout === undefined
      ? null
      : secondsFlag("--timeout", timeout) * 1000,
  };
}

/**
 * Sends a request. With `--wait`, a run that ended while the request was
 * written (the client settled it `rejected` itself: `RUN_ENDED`) is what
 * `--wait` calls the run ending first: exit 5, not 4.
 */
export async function sendRequest<T>(
  wait: WaitChoice | null,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (
      wait === null || !(error instanceof StateError) ||
      error.code !== "RUN_ENDED"
    ) throw error;
    throw new RunLostError(error.message, {
      code: "RUN_ENDED",
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      cause: error,
    });
  }
}
