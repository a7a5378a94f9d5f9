/**
 * The soak's killer: SIGKILLs the runner at random moments and resumes it
 * (`run --resume`), starting a fresh run whenever one completes.
 *
 * @module
 */

import { readSnapshotFile } from "../../_audit/mod.ts";
import { Rng, sleep } from "../../_harness/mod.ts";
import type { Runner, Soak } from "../state.ts";

export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return await check();
}

/** Reads a finished runner's stderr into violations: a soak's runner never warns. */
function noteRunnerOutput(soak: Soak, stderr: string, how: string): void {
  for (const line of stderr.split("\n")) {
    if (line.trim() === "") continue;
    soak.violations.add("runner output", `${how}: ${line.slice(0, 300)}`);
  }
}

/** Waits up to `ms` for the runner to exit; `true` when it did. */
async function exitWithin(runner: Runner, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    runner.child.status.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(
        () => resolve(false),
        Math.max(0, Math.min(ms, 2 ** 31 - 1)),
      );
    }),
  ]);
  clearTimeout(timer);
  return exited;
}

/**
 * The killer: SIGKILLs the runner at random moments spread over the soak
 * and resumes it; starts a fresh run when one completes (once every
 * follower has seen it end); at the deadline lets the last run finish.
 */
export async function killer(
  soak: Soak,
  first: Runner,
  deadline: number,
  kills: number,
): Promise<void> {
  const rng = new Rng(soak.seed + 3000);
  let runner = first;
  let failures = 0;
  const fresh = async (finishedRun: string | null): Promise<Runner | null> => {
    if (finishedRun !== null) {
      const ok = await waitUntil(
        () => soak.trackers.every((t) => t.finished.has(finishedRun)),
        60_000,
      );
      if (!ok) {
        soak.violations.add(
          "followers saw every seq",
          `followers did not see run ${finishedRun} finish within 60 s: ${
            soak.trackers.map((t) => `${t.runId}@${t.next}`).join(", ")
          }`,
        );
      }
    }
    // Past the deadline only for kills still due: a run that finished just
    // before it would otherwise leave them undone.
    return Date.now() < deadline || soak.counts.kills < kills
      ? soak.startRunner(false)
      : null;
  };
  /** What follows a runner that exited by itself. */
  const afterExit = async (): Promise<Runner | null> => {
    const status = await runner.child.status;
    const stderr = await runner.stderr;
    const snap = await readSnapshotFile(soak.stateRoot);
    const runId = typeof snap?.run_id === "string" ? snap.run_id : null;
    if (status.code === 0) {
      soak.counts.runsCompleted++;
      soak.progress(`run ${runId} completed`);
      noteRunnerOutput(soak, stderr, `run ${runId}`);
      return await fresh(runId);
    }
    if (
      status.code === 4 && runner.resume &&
      /Cannot resume run \S+: it finished/.test(stderr)
    ) {
      // Killed after its end was published: that run is over.
      soak.counts.resumeFoundFinished++;
      return await fresh(snap?.status === "completed" ? runId : null);
    }
    soak.violations.add(
      "runner exit",
      `run ${runId} (${runner.resume ? "resumed" : "fresh"}) exited ${
        status.code === 0 && status.signal ? status.signal : status.code
      }: ${stderr.trim().slice(0, 400)}`,
    );
    if (++failures > 5) return null;
    if (snap?.status === "running") return soak.startRunner(true);
    return await fresh(null);
  };
  for (;;) {
    const now = Date.now();
    let killAt = Infinity;
    const left = kills - soak.counts.kills;
    if (left > 0 && now < deadline) {
      const remaining = deadline - now;
      const mean = remaining / left;
      const lifetime = rng.chance(0.15)
        ? rng.between(0, Math.min(1500, mean))
        : rng.between(0.3, 1.7) * mean;
      killAt = Math.min(runner.startedAt + lifetime, deadline);
    } else if (left > 0) {
      // Past the deadline with kills still due: each run is killed soon.
      killAt = runner.startedAt + rng.between(200, 1500);
    }
    const wakeAt = now < deadline
      ? Math.min(killAt, deadline)
      : left > 0
      ? killAt
      : now + 240_000;
    if (await exitWithin(runner, wakeAt - now)) {
      const next = await afterExit();
      if (next === null) return;
      runner = next;
      continue;
    }
    if (now >= deadline && left <= 0) {
      soak.violations.add(
        "run finishes",
        "the last run did not finish within 240 s of the deadline",
      );
      try {
        runner.child.kill("SIGKILL");
      } catch {
        // Gone.
      }
      await runner.child.status;
      return;
    }
    if (Date.now() < killAt) continue; // The deadline came first.
    try {
      runner.child.kill("SIGKILL");
    } catch {
      // It exited just now.
    }
    const status = await runner.child.status;
    if (status.signal !== "SIGKILL") {
      const next = await afterExit();
      if (next === null) return;
      runner = next;
      continue;
    }
    noteRunnerOutput(soak, await runner.stderr, "a runner killed later");
    soak.counts.kills++;
    // Now and then the runner stays dead past the followers' heartbeat
    // window, so they exit 5 and restart, and writers meet a gone runner.
    let pause = soak.counts.kills % 8 === 2 ? rng.between(5500, 7000) : 0;
    // Never at the cost of the kills still due before the deadline.
    const due = kills - soak.counts.kills;
    if (deadline - Date.now() - pause < Math.max(1, due) * 2500) pause = 0;
    soak.progress(
      `kill ${soak.counts.kills} after ${
        ((Date.now() - runner.startedAt) / 1000).toFixed(1)
      }s${pause > 0 ? `, resumed ${(pause / 1000).toFixed(1)}s later` : ""}`,
    );
    if (pause > 0) {
      soak.counts.longPauses++;
      await sleep(pause);
    }
    runner = soak.startRunner(true);
  }
}
