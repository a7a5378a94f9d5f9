/**
 * The dashboard fuzz's checks: every answer a documented status, the
 * followers given every event once and in order, the server alive, its
 * memory bounded, and the run's pace kept. Exported so tests can plant
 * violations and see each one fire.
 *
 * @module
 */

import type { Violations } from "../_harness/mod.ts";
import { decoder, type Exchange, type Fuzzed } from "./actors/requests.ts";
import { ExitCode } from "../../lib/shared/errors.ts";

/** Statuses the dashboard answers with, by design. */
export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([
  200,
  303,
  400,
  401,
  403,
  404,
  405,
  409,
  413,
  431,
  501,
  503,
  505,
]);

/** What "bounded" means for the server's memory under the fuzz. */
export const MEMORY_LIMIT_MIB = 400;

/** The least the run's events per second may keep of its pace without fuzz. */
export const MIN_RATIO = 0.9;

/**
 * Records a violation when an answer is not what `sent` may get: a
 * documented status (or one of its `expect`ed ones), never none.
 */
export function checkAnswer(
  sent: Fuzzed,
  got: Exchange,
  violations: Violations,
): void {
  const what = `${sent.kind}: ${
    JSON.stringify(decoder.decode(sent.bytes.subarray(0, 300)))
  }`;
  if (got.status === -1) {
    violations.add("server accepts", `${what} could not connect`);
  } else if (got.status === 0) {
    violations.add(
      "every complete request answered",
      `${what} got no answer (${got.closed ? "closed" : "timed out"})`,
    );
  } else if (
    // At its cap the server answers whatever it closes to make room with
    // its 503: a limit's own answer is judged by checkLimits.
    sent.expect !== undefined
      ? !sent.expect.includes(got.status) && got.status !== 503
      : !DOCUMENTED_STATUSES.has(got.status)
  ) {
    violations.add(
      "documented statuses",
      `${what} got ${got.status}${
        sent.expect ? `, not ${sent.expect.join(" or ")}` : ""
      }`,
    );
  }
}

/**
 * Checks what a follower received against the run's stored lines: every
 * seq once, in order, each line byte for byte, through `run_finished`.
 */
export function checkFollowed(
  name: string,
  received: readonly { id: number; data: string }[],
  stored: readonly string[],
  violations: Violations,
): void {
  if (received.length !== stored.length) {
    violations.add(
      "followers get every event once",
      `${name}: ${received.length} events, the run stored ${stored.length}`,
    );
  }
  for (let i = 0; i < Math.min(received.length, stored.length); i++) {
    const got = received[i]!;
    if (got.id !== i + 1 || got.data !== stored[i]) {
      violations.add(
        "followers get every event once",
        `${name}: event ${i + 1} came as id ${got.id}${
          got.data === stored[i] ? "" : " with other data"
        }`,
      );
      break;
    }
  }
}

/** Events a second of each run: the median with the fuzz, to without it. */
export function paceRatio(
  without: readonly number[],
  fuzzed: readonly number[],
): number {
  const median = (values: readonly number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? sorted[mid]!
      : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  return median(fuzzed) / median(without);
}

/**
 * Records a limit that was never seen enforced: a kind of request over a
 * limit, sent at least 3 times, that never got its own status (only 503s
 * from a server at its cap).
 */
export function checkLimits(
  limited: ReadonlyMap<string, { sent: number; enforced: number }>,
  violations: Violations,
): void {
  for (const [kind, { sent, enforced }] of limited) {
    if (sent >= 3 && enforced === 0) {
      violations.add(
        "each limit enforced",
        `${kind}: ${sent} sent, none got the limit's own status`,
      );
    }
  }
}

/** Records the pace, memory and output violations of a fuzzed server. */
export function checkServer(
  outcome: {
    ratio: number;
    peak_rss_mib: number;
    exit_code: number | null;
    died_during: boolean;
    stderr: string;
  },
  violations: Violations,
): void {
  if (!(outcome.ratio >= MIN_RATIO)) {
    violations.add(
      "the run keeps its pace",
      `events/s with the fuzz ${(outcome.ratio * 100).toFixed(1)}% of without`,
    );
  }
  if (!(outcome.peak_rss_mib <= MEMORY_LIMIT_MIB)) {
    violations.add(
      "memory bounded",
      `peak VmRSS ${
        outcome.peak_rss_mib.toFixed(0)
      } MiB, over ${MEMORY_LIMIT_MIB}`,
    );
  }
  if (outcome.died_during) {
    violations.add("server never dies", `serve exited during the fuzz`);
  }
  if (outcome.exit_code !== ExitCode.SIGTERM) {
    violations.add(
      "server never dies",
      `serve exited ${outcome.exit_code} on SIGTERM, not 143`,
    );
  }
  for (const line of outcome.stderr.split("\n")) {
    if (line.trim() === "") continue;
    if (/^warning: the dashboard cannot accept a connection: /.test(line)) {
      continue;
    }
    violations.add("server output", line.slice(0, 300));
  }
}
