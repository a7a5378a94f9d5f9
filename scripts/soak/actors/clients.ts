/**
 * The soak's clients, through the real CLI: writers (view changes, steers,
 * amendments), followers of the events, and pollers of the status.
 *
 * @module
 */

import { requestOutcome } from "../../../lib/control/request_outcome.ts";
import { steer } from "../../../lib/control/steer.ts";
import { readSnapshotFile } from "../../_audit/mod.ts";
import { LineReader, readAll, Rng, sleep } from "../../_harness/mod.ts";
import { checkStatusRead } from "../audits/reads.ts";
import { MAX_STEERS, poolName, poolToken, PROMPTS } from "../packet.ts";
import type { Soak } from "../state.ts";

/**
 * Spends the steer budget of one running prompt at once: its budget and two
 * more steers put in place together, through the client API, at the prompt
 * in progress, again until one of them is refused for the budget (a burst
 * that meets a killed runner, or a prompt that ends first, is refused for
 * that instead). The writers' steers reach the budget only when the machine
 * lets them come fast enough; these make sure the budget's refusal is
 * exercised, and audited like any other steer.
 */
export async function overspender(soak: Soak): Promise<void> {
  while (!soak.stopWriters) {
    const snap = await readSnapshotFile(soak.stateRoot);
    const runId = snap?.run_id;
    const promptId = snap?.prompt_id;
    if (
      snap?.status !== "running" || typeof runId !== "string" ||
      typeof promptId !== "string"
    ) {
      await sleep(50);
      continue;
    }
    const ref = { state_root: soak.stateRoot, run_id: runId };
    const sent = await Promise.allSettled(
      Array.from(
        { length: MAX_STEERS + 2 },
        (_, n) =>
          steer(ref, `soak budget n${n}: keep the notes short`, {
            promptId,
            author: "soak-budget",
          }),
      ),
    );
    const ids: string[] = [];
    for (const result of sent) {
      soak.counts.requests++;
      if (result.status === "fulfilled") {
        ids.push(result.value.request_id);
        soak.acked.set(result.value.request_id, "steer");
        soak.counts.acked++;
      } else {
        soak.counts.refused++;
      }
    }
    for (const id of ids) {
      for (;;) {
        const outcome = await requestOutcome(ref, id).catch(() => null);
        if (outcome?.final) {
          if (/budget spent/.test(outcome.reason ?? "")) return;
          break;
        }
        if (soak.stopWriters) return;
        await sleep(100);
      }
    }
    await sleep(500);
  }
}

/**
 * Makes sure each lane delivers a steer: one steer at a time at the prompt
 * in progress when its lane has delivered none yet, until both have. The
 * writers' steers land on whichever prompt runs, refused while the runner
 * is down or the budget is spent: with kills and a loaded machine, chance
 * alone may leave a lane with no delivery.
 */
export async function laneCoverer(soak: Soak): Promise<void> {
  const delivered = new Set<string>();
  const lanes = new Set(PROMPTS.map((p) => p.lane));
  while (!soak.stopWriters && delivered.size < lanes.size) {
    const snap = await readSnapshotFile(soak.stateRoot);
    const runId = snap?.run_id;
    const promptId = snap?.prompt_id;
    const lane = PROMPTS.find((p) => p.id === promptId)?.lane;
    if (
      snap?.status !== "running" || typeof runId !== "string" ||
      typeof promptId !== "string" || lane === undefined ||
      delivered.has(lane)
    ) {
      await sleep(100);
      continue;
    }
    const ref = { state_root: soak.stateRoot, run_id: runId };
    soak.counts.requests++;
    const sent = await steer(ref, `soak lane ${lane}: keep the notes short`, {
      promptId,
      author: "soak-lane",
    }).catch(() => null);
    if (sent === null) {
      soak.counts.refused++;
      await sleep(200);
      continue;
    }
    soak.acked.set(sent.request_id, "steer");
    soak.counts.acked++;
    for (;;) {
      const outcome = await requestOutcome(ref, sent.request_id).catch(() =>
        null
      );
      if (outcome?.final) {
        if (outcome.outcome === "applied") delivered.add(lane);
        else await sleep(300);
        break;
      }
      if (soak.stopWriters) return;
      await sleep(100);
    }
  }
}

export async function writer(soak: Soak, w: number): Promise<void> {
  const rng = new Rng(soak.seed + 1000 + w);
  const views: [string, readonly string[]][] = [
    ["--log-mode", ["compact", "verbose", "studio"]],
    ["--tool-output", ["none", "summary", "preview", "full"]],
    ["--thinking", ["show", "hide"]],
    ["--diff", ["none", "stat", "full"]],
  ];
  for (let i = 0; !soak.stopWriters; i++) {
    const roll = rng.next();
    if (roll < 0.75) {
      const steer = roll >= 0.4;
      const args = ["control", steer ? "steer" : "view", soak.packet];
      if (steer) {
        args.push(`soak w${w} n${i}: keep the notes short`);
        if (rng.chance(0.25)) args.push("--prompt", rng.pick(PROMPTS).id);
      } else {
        for (const [flag, values] of views) {
          if (rng.chance(0.5)) args.push(flag, rng.pick(values));
        }
        if (args.length === 3) {
          args.push("--thinking", rng.pick(["show", "hide"]));
        }
      }
      args.push("--author", `soak-w${w}`);
      const result = await soak.cli(args);
      soak.counts.requests++;
      const command = steer ? "steer" : "set_view";
      if (result.code === 0) {
        const id = /\(request (\S+)\)/.exec(result.stdout)?.[1];
        if (id === undefined) {
          soak.violations.add(
            "writer",
            `${command} exit 0 without a request id: ${result.stdout.trim()}`,
          );
        } else {
          soak.acked.set(id, command);
          soak.counts.acked++;
        }
      } else if (result.code === 4) {
        soak.counts.refused++;
        if (/Request \S+ is recorded as rejected/.test(result.stderr)) {
          soak.counts.settledByClient++;
        }
      } else {
        soak.violations.add(
          "writer",
          `control ${args[1]} exited ${result.code ?? result.signal}: ${
            result.stderr.trim().slice(0, 300)
          }`,
        );
      }
    } else {
      const prompt = rng.pick(PROMPTS).id;
      const n = soak.poolNext++;
      const addition = rng.chance(0.5)
        ? ["--add-file", poolName(n)]
        : ["--add-contains", `${poolName(n)}=${poolToken(n)}`];
      const args = [
        "control",
        "amend",
        soak.packet,
        prompt,
        ...addition,
        "--reason",
        `soak w${w} n${i}`,
        "--author",
        `soak-w${w}`,
        "--json",
        ...(rng.chance(0.2) ? ["--persist"] : []),
      ];
      const result = await soak.cli(args);
      if (result.code === 0) {
        try {
          soak.amendments.push({
            record: JSON.parse(result.stdout),
            acked_at: Date.now(),
          });
          soak.counts.amendments++;
        } catch {
          soak.violations.add(
            "writer",
            `amend printed no record: ${result.stdout}`,
          );
        }
      } else {
        soak.violations.add(
          "writer",
          `control amend exited ${result.code ?? result.signal}: ${
            result.stderr.trim().slice(0, 300)
          }`,
        );
      }
    }
    await sleep(rng.int(0, 200));
  }
}

export async function follower(soak: Soak, f: number): Promise<void> {
  const rng = new Rng(soak.seed + 2000 + f);
  const tracker = soak.trackers[f]!;
  for (;;) {
    if (tracker.runId === null || tracker.finished.has(tracker.runId)) {
      if (soak.stopFollowers) return;
      const snap = await readSnapshotFile(soak.stateRoot);
      const runId = typeof snap?.run_id === "string" ? snap.run_id : null;
      if (
        runId !== null && runId !== tracker.runId &&
        !tracker.finished.has(runId)
      ) {
        tracker.follow(runId);
      } else {
        await sleep(100);
        continue;
      }
    }
    const child = soak.spawn([
      "control",
      "events",
      soak.packet,
      "--from",
      String(tracker.next),
      "--json",
    ]);
    const stderr = readAll(child.stderr);
    const lines = new LineReader(child.stdout);
    const before = tracker.finished.has(tracker.runId!);
    for (
      let line = await lines.next();
      line !== null;
      line = await lines.next()
    ) {
      soak.counts.seqs++;
      const problem = tracker.see(line);
      if (problem !== null) {
        soak.violations.add(
          "followers saw every seq",
          `follower ${f + 1}: ${problem}`,
        );
      }
    }
    const status = await child.status;
    const err = await stderr;
    if (status.code === 0) {
      if (before === tracker.finished.has(tracker.runId!)) {
        soak.violations.add(
          "follower exit",
          `follower ${f + 1}: exit 0 without run_finished of ${tracker.runId}`,
        );
        tracker.finished.add(tracker.runId!);
      }
      continue;
    }
    if (status.code === 5) {
      soak.counts.followerRestarts++;
      await sleep(rng.int(50, 300));
      continue;
    }
    soak.violations.add(
      "follower exit",
      `follower ${f + 1}: control events exited ${
        status.code ?? status.signal
      }: ${err.trim().slice(0, 300)}`,
    );
    if (soak.stopFollowers) return;
    await sleep(500);
  }
}

export async function poller(soak: Soak): Promise<void> {
  while (!soak.stopPollers) {
    const result = await soak.cli(["control", "status", soak.packet, "--json"]);
    soak.counts.statusReads++;
    const problem = checkStatusRead(result);
    if (problem !== null) soak.violations.add("status reads parse", problem);
  }
}
