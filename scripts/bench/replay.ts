#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Replay throughput and memory: `control events ROOT --from start --json`
 * of 1M and 2M realistic events into /dev/null, against `cat` of the same
 * file in the same run (medians; peak RSS from `/usr/bin/time`); and the
 * 1M replay with the default rendering (compact, no colour).
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/replay.ts [--json]
 *
 * @module
 */

import { type BenchRow, median, progress, report } from "./_bench.ts";
import {
  controlEvents,
  makeStreamRoot,
  measure,
  type StreamRoot,
} from "./_event_stream.ts";

const MiB = 1024 * 1024;

/** The default rendering of a stream: 3 runs beside more of `cat`. */
async function rendered(stream: StreamRoot, cat: number[]): Promise<BenchRow> {
  const ours: number[] = [];
  let failed = 0;
  for (let i = 0; i < 3; i++) {
    cat.push((await measure(["cat", stream.file])).ms);
    const run = await measure(controlEvents(stream.root, "--from", "start"));
    if (run.code !== 0) failed = run.code;
    ours.push(run.ms);
    progress(`rendered: control events ${run.ms.toFixed(0)} ms`);
  }
  const rate = stream.bytes / (median(ours) / 1000);
  const catRate = stream.bytes / (median(cat) / 1000);
  return {
    measure:
      `replay \`control events --from start\` (default rendering), 1M events (${
        (stream.bytes / 1e6).toFixed(0)
      } MB) → /dev/null`,
    baseline: `cat: ${(catRate / 1e9).toFixed(2)} GB/s`,
    result: failed === 0 ? `${(rate / 1e6).toFixed(0)} MB/s` : `exit ${failed}`,
    ratio: `${(median(ours) / median(cat)).toFixed(0)}×`,
    target: "≥ 50 MB/s",
    met: failed === 0 && rate >= 50e6,
    note: `median of 3; ${
      (median(ours) / 1000).toFixed(2)
    } s; stdout is no terminal, so no colour`,
  };
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_replay_" });
  try {
    const rows: BenchRow[] = [];
    const results: { events: number; replayMs: number; rss: number }[] = [];
    for (const [events, repeats] of [[1_000_000, 5], [2_000_000, 3]] as const) {
      const stream = await makeStreamRoot(dir, `root-${events}`, events);
      const cat: number[] = [];
      const ours: number[] = [];
      const rss: number[] = [];
      let failed = 0;
      for (let i = 0; i < repeats; i++) {
        cat.push((await measure(["cat", stream.file])).ms);
        const run = await measure(
          controlEvents(stream.root, "--from", "start", "--json"),
        );
        if (run.code !== 0) failed = run.code;
        ours.push(run.ms);
        rss.push(run.rssKiB);
        progress(
          `${events} events: cat ${cat.at(-1)!.toFixed(0)} ms, control events ${
            run.ms.toFixed(0)
          } ms, ${(run.rssKiB / 1024).toFixed(0)} MiB RSS, exit ${run.code}`,
        );
      }
      const catRate = stream.bytes / (median(cat) / 1000);
      const ourRate = stream.bytes / (median(ours) / 1000);
      const peak = Math.max(...rss) / 1024;
      results.push({ events, replayMs: median(ours), rss: peak });
      const mb = (stream.bytes / 1e6).toFixed(0);
      const share = (ourRate / catRate) * 100;
      if (events === 1_000_000) {
        rows.push({
          measure:
            `replay \`control events --from start --json\`, 1M events (${mb} MB) → /dev/null`,
          baseline: `cat: ${(catRate / 1e9).toFixed(2)} GB/s`,
          result: `${(ourRate / 1e6).toFixed(0)} MB/s, ${
            peak.toFixed(0)
          } MiB RSS`,
          ratio: `${share.toFixed(1)} % of cat`,
          target: "≥ 25 % of cat; RSS < 100 MB",
          met: share >= 25 && peak * MiB < 100e6 && failed === 0,
          note: `median of ${repeats}; ${(median(ours)).toFixed(0)} ms vs cat ${
            median(cat).toFixed(0)
          } ms, process start included in both`,
        });
      } else {
        const flat = peak <= results[0]!.rss * 1.1 + 5;
        rows.push({
          measure: `replay, 2M events (${mb} MB)`,
          baseline: `cat ${(median(cat) / 1000).toFixed(2)} s`,
          result: failed === 0
            ? `${(median(ours) / 1000).toFixed(2)} s, ${
              peak.toFixed(0)
            } MiB RSS (1M: ${results[0]!.rss.toFixed(0)} MiB)`
            : `exit ${failed}`,
          ratio: `${(median(ours) / median(cat)).toFixed(1)}×`,
          target: "works; RSS < 100 MB and flat from 1M to 2M",
          met: failed === 0 && peak * MiB < 100e6 && flat,
          note: `median of ${repeats}`,
        });
      }
      if (events === 1_000_000) rows.push(await rendered(stream, cat));
      await Deno.remove(stream.root, { recursive: true });
    }
    report(rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
