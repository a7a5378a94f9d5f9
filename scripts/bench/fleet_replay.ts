#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net
/**
 * Replay from the fleet (issue 21): a finished run of 100,000 realistic
 * events (`_event_stream.ts`'s) published to a one-node `nats-server` on
 * loopback by `fleet join ROOT --once`, then `control events fleet:<run_id>
 * --from start --json` into /dev/null, spawn to exit, against the file
 * replay of the same run (`control events ROOT --from start --json`) in the
 * same run, interleaved, medians of repeats; MB are the bytes of
 * events.jsonl. The fleet's copy is checked byte for byte against the file
 * first.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid,networkInterfaces --allow-net scripts/bench/fleet_replay.ts [--json] [--repeats N] [--events N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { NatsServers } from "../_harness/nats.ts";
import { type BenchRow, median, progress, report } from "./_bench.ts";
import { makeStreamRoot } from "./_event_stream.ts";
import {
  natsInstalled,
  NODE,
  ok,
  sameBytes,
  spread,
  timeCli,
} from "./_fleet.ts";

const TARGET_MBS = 50;

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      repeats: { type: "string" },
      events: { type: "string" },
    },
  });
  const repeats = Number(args.values.repeats ?? 5);
  const events = Number(args.values.events ?? 100_000);
  const measure = `replay of a ${
    events / 1000
  }k-event run from the fleet (\`control events fleet:… --from start --json\` → /dev/null)`;
  const target = `≥ ${TARGET_MBS} MB/s`;
  if (!natsInstalled(measure, target)) return;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fleet_" });
  await using servers = await NatsServers.start(1);
  const url = servers.url();
  try {
    const stream = await makeStreamRoot(dir, "root", events);
    // The sample's snapshot, told how many events this run has.
    const snapshotFile = join(stream.root, "control", "snapshot.json");
    const snapshot = JSON.parse(await Deno.readTextFile(snapshotFile));
    Object.assign(snapshot, { last_seq: events, event_count: events });
    await Deno.writeTextFile(snapshotFile, JSON.stringify(snapshot));
    const address = `fleet:${snapshot.run_id}`;
    const join_ = ok(
      "fleet join --once",
      await timeCli([
        "fleet",
        "join",
        stream.root,
        "--fleet",
        url,
        "--fleet-node",
        NODE,
        "--once",
      ]),
    );
    progress(`fleet join --once published it in ${join_.ms.toFixed(0)} ms`);
    const fleetReplay = (from: string, keep = false) =>
      timeCli([
        "control",
        "events",
        address,
        "--fleet",
        url,
        "--from",
        from,
        "--json",
      ], { keep }).then((run) => ok("fleet replay", run));
    const fileReplay = (from: string) =>
      timeCli(["control", "events", stream.root, "--from", from, "--json"])
        .then((run) => ok("file replay", run));
    const copy = await fleetReplay("start", true);
    const identical = sameBytes(copy.stdout, await Deno.readFile(stream.file));
    const file: number[] = [];
    const fleet: number[] = [];
    const fileCpu: number[] = [];
    const fleetCpu: number[] = [];
    const rss: number[] = [];
    // The fixed part: the same commands from "current", which print nothing
    // for an ended run (start, TARGET, snapshot, exit).
    const fileStart: number[] = [];
    const fleetStart: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const f = await fileReplay("start");
      const n = await fleetReplay("start");
      fileStart.push((await fileReplay("current")).ms);
      fleetStart.push((await fleetReplay("current")).ms);
      file.push(f.ms);
      fileCpu.push(f.cpuMs);
      fleet.push(n.ms);
      fleetCpu.push(n.cpuMs);
      rss.push(n.rssKiB / 1024);
      progress(
        `file ${f.ms.toFixed(0)} ms, fleet ${n.ms.toFixed(0)} ms (${
          (n.rssKiB / 1024).toFixed(0)
        } MiB RSS); from current: file ${
          fileStart.at(-1)!.toFixed(0)
        } ms, fleet ${fleetStart.at(-1)!.toFixed(0)} ms`,
      );
    }
    const mbs = (ms: number) => stream.bytes / 1e6 / (ms / 1000);
    const rate = mbs(median(fleet));
    const rows: BenchRow[] = [{
      measure,
      baseline: `file replay (\`control events ROOT --json\`): ${
        mbs(median(file)).toFixed(0)
      } MB/s, ${spread(file)} ms`,
      result: `${rate.toFixed(1)} MB/s, ${spread(fleet)} ms, ${
        median(rss).toFixed(0)
      } MiB RSS; copy identical to events.jsonl: ${identical ? "yes" : "NO"}`,
      ratio: `${(median(fleet) / median(file)).toFixed(1)}× the file's time`,
      target,
      met: rate >= TARGET_MBS && identical,
      note: `${
        (stream.bytes / 1e6).toFixed(1)
      } MB of events.jsonl; medians (min–max) of ${repeats}, interleaved, process start included; of it the fixed part (the same command from \`current\`, which prints nothing for an ended run) ${
        spread(fleetStart)
      } ms (file: ${spread(fileStart)} ms), so ${
        mbs(median(fleet) - median(fleetStart)).toFixed(0)
      } MB/s streamed; CPU ${median(fleetCpu).toFixed(0)} vs ${
        median(fileCpu).toFixed(0)
      } ms; published by \`fleet join --once\` in ${
        (join_.ms / 1000).toFixed(1)
      } s`,
    }];
    report(rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
