#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * Fleet follow latency (issue 21): the time from appending an event line to
 * a live run's events.jsonl until the line is read from a fleet follower's
 * stdout (`control events fleet:<run_id> --fleet URL --from current
 * --json`), one `nats-server` on loopback, against the file follower
 * (`control events ROOT --from current --json`) on the same appends in the
 * same run; median and p99 of 200 appends per pass, passes alternating.
 *
 * The run is played as `follow_latency.ts` plays it, and published as
 * `run --fleet` publishes one (`_fleet.ts`'s `playFleetRun`): this process
 * holds the run lock and the run's control plane, the run's bridge runs in
 * a worker as the runner's does, and this process appends whole event lines
 * itself, so the clock starts at the append.
 * The path measured: the bridge sees the append, publishes it, the server
 * stores it and pushes it to the follower's consumer, the follower writes
 * it to its stdout.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/fleet_follow.ts [--json] [--passes N]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { openFleetClient } from "../../lib/fleet/fleet_client.ts";
import { NatsServers } from "../_harness/nats.ts";
import { type BenchRow, median, percentile, report } from "./_bench.ts";
import { controlEvents } from "./_event_stream.ts";
import { natsInstalled, playFleetRun, waitFor } from "./_fleet.ts";
import { measureFollower, RUN_ID } from "./follow_latency.ts";

/** Waits until the fleet lists the run (its bridge put its snapshot). */
async function listed(url: string): Promise<void> {
  await using client = await openFleetClient({ url });
  await waitFor(
    "the fleet listing the run",
    async () => (await client.runs()).some((run) => run.run_id === RUN_ID),
  );
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: { json: { type: "boolean" }, passes: { type: "string" } },
  });
  const passes = Number(args.values.passes ?? 2);
  const measure =
    "append → line on a fleet follower's stdout (`control events fleet:… --from current --json`), one node on loopback";
  const target = "median ≤ 10 ms, p99 ≤ 50 ms";
  if (!natsInstalled(measure, target)) return;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fleet_" });
  await using servers = await NatsServers.start(1);
  const url = servers.url();
  const run = await playFleetRun(dir, url, RUN_ID);
  try {
    await listed(url);
    const { root, file, next } = run;
    const fileFollower = controlEvents(root, "--from", "current", "--json");
    const fleetFollower = controlEvents(
      `fleet:${RUN_ID}`,
      "--fleet",
      url,
      "--from",
      "current",
      "--json",
    );
    const files: number[] = [];
    const fleets: number[] = [];
    for (let pass = 0; pass < passes; pass++) {
      files.push(
        ...await measureFollower("file follower", fileFollower, file, next),
      );
      fleets.push(
        ...await measureFollower("fleet follower", fleetFollower, file, next),
      );
    }
    const [fm, fp] = [median(files), percentile(files, 99)];
    const [nm, np] = [median(fleets), percentile(fleets, 99)];
    const rows: BenchRow[] = [{
      measure,
      baseline:
        `file follower (\`control events ROOT --from current --json\`): ${
          fm.toFixed(2)
        } / ${fp.toFixed(2)} ms`,
      result: `${nm.toFixed(2)} / ${np.toFixed(2)} ms (median / p99)`,
      ratio: `${nm - fm >= 0 ? "+" : ""}${(nm - fm).toFixed(2)} ms`,
      target,
      met: nm <= 10 && np <= 50,
      note:
        `${fleets.length} appends each, 5–15 ms apart, in ${passes} alternating passes; the bridge runs in a worker of the appending process, as in \`run --fleet\``,
    }];
    report(rows);
  } finally {
    await run.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
