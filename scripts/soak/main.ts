#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Endurance: a simulated packet streams for minutes on both steering lanes
 * while, through the real CLI, 8 writers send view changes, steers and
 * amendments (and, through the client API, a burst of steers spends one
 * prompt's steer budget), 4 followers follow the events, 2 pollers read the status, and
 * a killer SIGKILLs the runner at random moments and resumes it
 * (`run --resume`), starting a fresh run whenever one completes. Then the
 * state root is audited: one receipt and one final log entry per request,
 * no steer applied twice, every seq seen once and in order by every
 * follower, every status read whole, every amendment enforced, no temp
 * file left, attempts numbered without gaps, events continuous, no process
 * left behind. Prints a summary; exits 1 on any violation, listing each
 * (capped).
 *
 * The packet is in `packet.ts`, the soak's shared state in `state.ts`, the
 * clients and the killer in `actors/`, the checks in `audits/` (with the
 * state root's reading and the temp-file check shared with the fuzzers in
 * `../_audit/`).
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid \
 *     scripts/soak/main.ts [--quick] [--seconds N] [--kills N] [--seed N] [--keep]
 *
 * Ten minutes and 100 kills by default; `--quick` is about a minute with 8
 * kills. `--keep` leaves the temporary directory for a look at a failure.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { checkTemps, readEventFiles, readSnapshotFile } from "../_audit/mod.ts";
import {
  formatCount,
  leaveScratch,
  leftoverProcesses,
  onInterrupt,
  parseScriptFlags,
  reportViolations,
  sleep,
} from "../_harness/mod.ts";
import {
  follower,
  laneCoverer,
  overspender,
  poller,
  writer,
} from "./actors/clients.ts";
import { killer, waitUntil } from "./actors/killer.ts";
import { checkFollowerCoverage, FollowTracker } from "./audits/reads.ts";
import {
  checkRequests,
  checkSteers,
  type RequestStats,
  type SteerStats,
} from "./audits/requests.ts";
import {
  type AttemptStats,
  checkAmendments,
  checkAttempts,
  checkEventFiles,
} from "./audits/runs.ts";
import { MAX_STEERS, writeSoakPacket } from "./packet.ts";
import { Soak } from "./state.ts";

const WRITERS = 8;
const FOLLOWERS = 4;
const POLLERS = 2;

async function soakOnce(
  soak: Soak,
  seconds: number,
  kills: number,
): Promise<void> {
  const start = Date.now();
  const deadline = start + seconds * 1000;
  const first = soak.startRunner(false);
  const started = await waitUntil(
    async () => (await readSnapshotFile(soak.stateRoot)) !== null,
    60_000,
  );
  if (!started) throw new Error("the first run wrote no snapshot within 60 s");
  for (let f = 0; f < FOLLOWERS; f++) soak.trackers.push(new FollowTracker());
  const followers = soak.trackers.map((_, f) => follower(soak, f));
  const pollers = Array.from({ length: POLLERS }, () => poller(soak));
  const writers = [
    ...Array.from({ length: WRITERS }, (_, w) => writer(soak, w + 1)),
    overspender(soak),
    laneCoverer(soak),
  ];
  await killer(soak, first, deadline, kills);
  soak.progress("the last run ended; stopping writers and pollers");
  soak.stopWriters = true;
  await Promise.all(writers);
  soak.stopPollers = true;
  await Promise.all(pollers);
  soak.progress("writers and pollers stopped");
  const snap = await readSnapshotFile(soak.stateRoot);
  const last = String(snap?.run_id);
  if (snap?.status !== "completed") {
    soak.violations.add(
      "run finishes",
      `the last run ${last} ended ${snap?.status}`,
    );
  }
  const ended = await waitUntil(
    () => soak.trackers.every((t) => t.finished.has(last)),
    60_000,
  );
  if (!ended) {
    soak.violations.add(
      "followers saw every seq",
      `followers did not see the last run ${last} finish: ${
        soak.trackers.map((t) => `${t.runId}@${t.next}`).join(", ")
      }`,
    );
  }
  soak.stopFollowers = true;
  const stopped = await waitUntil(
    async () => (await Promise.race([
      Promise.all(followers).then(() => true),
      sleep(0).then(() => false),
    ])),
    30_000,
  );
  if (!stopped) {
    soak.violations.add(
      "follower exit",
      "followers still running 30 s after the end",
    );
    await soak.killAll();
    await Promise.all(followers);
  }
}

async function audit(soak: Soak): Promise<{
  requests: RequestStats;
  steers: SteerStats;
  attempts: AttemptStats;
  runs: number;
}> {
  const v = soak.violations;
  const files = await readEventFiles(soak.stateRoot, v);
  const runs = checkEventFiles(files, v);
  for (const [runId, run] of runs) {
    if (run.finished !== "completed") {
      v.add(
        "run finishes",
        `run ${runId}'s stream ends at seq ${run.last} ${
          run.finished === null
            ? "without run_finished"
            : `finished ${run.finished}`
        }`,
      );
    }
  }
  checkFollowerCoverage(soak.trackers, runs, v);
  const requests = await checkRequests(soak.stateRoot, soak.acked, v);
  const steers = await checkSteers(soak.stateRoot, MAX_STEERS, files, v);
  await checkAmendments(soak.packet, soak.stateRoot, soak.amendments, files, v);
  const attempts = await checkAttempts(soak.stateRoot, runs, v);
  if (attempts.interrupted > soak.counts.kills) {
    v.add(
      "attempts settled",
      `${attempts.interrupted} interrupted attempts, but only ${soak.counts.kills} kills`,
    );
  }
  await checkTemps(soak.stateRoot, v);
  return { requests, steers, attempts, runs: runs.size };
}

async function main(): Promise<number> {
  const flags = parseScriptFlags(
    Deno.args,
    { seconds: 600, quickSeconds: 40 },
    { kills: { full: 100, quick: 8 } },
  );
  const kills = flags.numbers.kills!;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_soak_" });
  let soak: Soak | null = null;
  const offInterrupt = onInterrupt(dir, flags.keep, () => soak?.killAll());
  const began = Date.now();
  try {
    const packet = await writeSoakPacket(dir);
    soak = new Soak(dir, packet, flags.seed);
    console.error(
      `soak: ${flags.seconds} s, ${kills} kills, seed ${flags.seed}, in ${dir}`,
    );
    await soakOnce(soak, flags.seconds, kills);
    soak.progress("auditing");
    const result = await audit(soak);
    const v = soak.violations;
    const leftovers = await leftoverProcesses(dir);
    for (const p of leftovers) v.add("no process left", p);
    if (soak.counts.kills < kills) {
      v.add("kills", `only ${soak.counts.kills} of ${kills} kills happened`);
    }
    const delivered = result.steers.delivered;
    if (!delivered.send_input || !delivered.interrupt_and_resume) {
      v.add(
        "coverage",
        `steers delivered on both lanes: ${JSON.stringify(delivered)}`,
      );
    }
    if (result.requests.budgetRefusals === 0) {
      v.add("coverage", "no steer was refused for budget");
    }
    const c = soak.counts;
    const elapsed = Math.round((Date.now() - began) / 1000);
    console.log(
      `soak: ${formatCount(elapsed)} s, ${c.kills} kills, ${
        formatCount(c.requests)
      } requests (${formatCount(c.acked)} acked), ${
        formatCount(c.seqs)
      } seqs checked by ${FOLLOWERS} followers, ${
        formatCount(c.statusReads)
      } status reads, ${formatCount(c.amendments)} amendments, violations: ${
        formatCount(v.count)
      }`,
    );
    const outcomes = Object.entries(result.requests.outcomes).sort()
      .map(([k, n]) => `${k} ${formatCount(n)}`).join(", ");
    console.log(
      `  runs: ${c.runsStarted} started, ${c.runsCompleted} completed, ${result.runs} streams; ${c.resumes} resumes (${c.resumeFoundFinished} found the run already finished, ${c.longPauses} after a pause past the heartbeat window); follower restarts: ${c.followerRestarts}`,
    );
    console.log(
      `  requests: ${
        formatCount(result.requests.ids)
      } audited (${outcomes}); ${c.refused} refused by state (${c.settledByClient} settled by their client); ${result.requests.budgetRefusals} steers refused for budget`,
    );
    console.log(
      `  steers delivered: ${
        Object.entries(delivered).map(([k, n]) => `${k} ${n}`).join(", ") ||
        "none"
      }; attempts: ${result.attempts.attempts} (${result.attempts.interrupted} interrupted); seed ${flags.seed}`,
    );
    return reportViolations(v);
  } finally {
    await soak?.killAll();
    offInterrupt();
    await leaveScratch("soak", dir, flags.keep);
  }
}

if (import.meta.main) Deno.exit(await main());
