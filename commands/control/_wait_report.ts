/**
 * Waiting for a request's final outcome and reporting it (`--wait`): the
 * request's last log entry on stdout, and the exit code its outcome says.
 *
 * @module
 */

import type { AmendTarget } from "../../lib/contract/contract_transport.ts";
import {
  amendmentLogEntry,
  type AmendmentRecord,
} from "../../lib/control/amendment_log.ts";
import { readLogFile } from "../../lib/control/log_entry.ts";
import type { LogEntry } from "../../lib/control/log_entry.ts";
import { controlPaths, type RunRef } from "../../lib/control/paths.ts";
import { log } from "../../lib/control/read_log.ts";
import type { Transport } from "../../lib/control/transport.ts";
import { waitForOutcome } from "../../lib/control/wait_for_outcome.ts";
import { terminalSafe } from "../../lib/render/ansi.ts";
import {
  PromptRunnerError,
  RunLostError,
  StateError,
} from "../../lib/shared/errors.ts";
import type { CommandContext } from "../_context.ts";
import { formatLogEntry } from "./log.ts";
import { withStopSignals } from "./_signals.ts";
import type { WaitChoice } from "./_wait.ts";

/** The exit code of a wait whose time limit passed. */
const WAIT_TIMED_OUT = 124;

/** Prints a log entry: as one NDJSON line, or as `control log` shows it. */
export async function printEntry(
  context: CommandContext,
  entry: LogEntry,
  json: boolean,
): Promise<void> {
  if (json) await context.stdout.json(entry);
  else {
    await context.stdout.write(
      terminalSafe(formatLogEntry(entry) + "\n", { style: context.color }),
    );
  }
}

/**
 * Waits for a request's final outcome, prints its last log entry, and
 * returns 0 when it was applied; otherwise throws the error its exit code
 * says (4 rejected, 5 the run ended first, 124 the time limit passed).
 * SIGINT and SIGTERM end the wait quietly (130, 143).
 */
export async function waitAndReport(
  context: CommandContext,
  ref: RunRef,
  requestId: string,
  choice: WaitChoice,
  json: boolean,
): Promise<number> {
  return await withStopSignals(async (signal) => {
    let result;
    try {
      result = await waitForOutcome(ref, requestId, {
        signal,
        ...(choice.timeoutMs === null ? {} : { timeoutMs: choice.timeoutMs }),
      });
    } catch (error) {
      if (signal.aborted) return 0;
      throw error;
    }
    if (result.entry !== null) await printEntry(context, result.entry, json);
    const reason = result.reason ?? "";
    switch (result.outcome) {
      case "applied":
        return 0;
      case "rejected":
        throw new StateError(`Request ${requestId} was rejected: ${reason}`, {
          code: "REQUEST_REJECTED",
        });
      case "run_ended":
        throw new RunLostError(
          `Request ${requestId} was not applied: run ${ref.run_id} ended first (${reason})`,
          {
            code: "RUN_ENDED_FIRST",
            hint: "Requests only reach a live run: send it again to one",
          },
        );
      case "timed_out":
        throw new PromptRunnerError(
          `Request ${requestId} has no final outcome after ${
            (choice.timeoutMs ?? 0) / 1000
          } s: it is ${
            reason === "accepted"
              ? "accepted, waiting for its lane"
              : `${reason}, not taken by the runner yet`
          }`,
          {
            code: "WAIT_TIMED_OUT",
            exitCode: WAIT_TIMED_OUT,
            hint:
              "It may still be applied: 'prompt_runner control log' shows its outcome",
          },
        );
    }
  });
}

/**
 * The audit log entry an amendment was recorded with, as its log holds it
 * (the state root's, or the fleet run's); as it was built, when the log
 * cannot be read.
 */
async function amendmentEntry(
  where: { target: AmendTarget; stateRoot: string | null },
  record: AmendmentRecord,
): Promise<LogEntry> {
  const built = amendmentLogEntry(record);
  const same = (entry: LogEntry): boolean =>
    entry.at === built.at && entry.command === built.command &&
    entry.prompt_id === built.prompt_id && entry.author === built.author &&
    entry.outcome === "applied";
  let entries: LogEntry[] = [];
  try {
    if (where.stateRoot !== null) {
      entries = await readLogFile(controlPaths(where.stateRoot));
    } else if (
      typeof where.target === "object" && "transport" in where.target &&
      record.run_id !== null
    ) {
      // Sent as a request through the fleet: its entry there names it.
      entries = await log({
        state_root: where.target.state_root,
        run_id: record.run_id,
        transport: where.target.transport as unknown as Transport,
      });
    }
  } catch {
    // Recorded all the same: the entry as it was built.
  }
  return entries.findLast(same) ?? built;
}

/**
 * Prints the log entry of a recorded amendment (`--wait`: an amendment is
 * final once recorded).
 */
export async function printAmendmentEntry(
  context: CommandContext,
  where: {
    target: AmendTarget;
    stateRoot: string | null;
    record: AmendmentRecord;
  },
  json: boolean,
): Promise<void> {
  await printEntry(context, await amendmentEntry(where, where.record), json);
}
