/**
 * The soak's clients, through the real CLI: writers (view changes, steers,
 * amendments), followers of the events, and pollers of the status.
 *
 * @module
 */

import { readSnapshotFile } from "../../_audit/mod.ts";
import { LineReader, readAll, Rng, sleep } from "../../_harness/mod.ts";
import { checkStatusRead } from "../audits/reads.ts";
import { poolName, poolToken, PROMPTS } from "../packet.ts";
import type { Soak } from "../state.ts";

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
