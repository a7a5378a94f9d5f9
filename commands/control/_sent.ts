/**
 * What `control view` and `control steer` print once their request is sent,
 * and, with `--wait`, the wait for its outcome (loaded only then).
 *
 * @module
 */

import type { RunRef } from "../../lib/control/paths.ts";
import type { SentRequest } from "../../lib/control/request.ts";
import { terminalSafe } from "../../lib/render/ansi.ts";
import type { CommandContext } from "../_context.ts";
import type { WaitChoice } from "./_wait.ts";

/** How `view` and `steer` speak of a request they sent. */
export interface SentWords {
  /** The line's start, e.g. `Queued steer`. */
  what: string;
  /** Without `--wait`: when it takes effect. */
  later: string;
  /** With `--wait`: what the command waits for. */
  waiting: string;
  /** Without `--wait`: the hint on stderr. */
  hint: string;
}

/**
 * Reports a request just sent: its receipt (one JSON line with `--json`,
 * else a line that says when it takes effect). With `--wait`, then waits
 * for its outcome and returns the exit code that says it; without, hints
 * where to look and returns 0.
 */
export async function reportSent(
  context: CommandContext,
  ref: RunRef,
  receipt: SentRequest,
  options: { wait: WaitChoice | null; json: boolean; words: SentWords },
): Promise<number> {
  const { wait, json, words } = options;
  if (json && wait === null) await context.stdout.json(receipt);
  else if (!json) {
    await context.stdout.line(terminalSafe(
      `${words.what} for run ${ref.run_id} (request ${receipt.request_id}); ${
        wait === null ? words.later : words.waiting
      }`,
    ));
  }
  if (wait !== null) {
    const { waitAndReport } = await import("./_wait_report.ts");
    return await waitAndReport(context, ref, receipt.request_id, wait, json);
  }
  await context.stderr.line(`hint: ${words.hint}`);
  return 0;
}
