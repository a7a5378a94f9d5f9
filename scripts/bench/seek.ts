#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Seeking: `control events ROOT --from SEQ --json` for the last 5 events of
 * a 1M-event stream, against the same on a 1k-event stream in the same run
 * (medians of alternating repeats). A seek reads a few kilobytes wherever
 * the stream is long; a parse from byte 0 would grow with it.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/seek.ts [--json]
 *
 * @module
 */

import { type BenchRow, median, progress, ratio, report } from "./_bench.ts";
import { controlEvents, makeStreamRoot, measure } from "./_event_stream.ts";

const REPEATS = 9;

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_seek_" });
  try {
    const small = await makeStreamRoot(dir, "root-1k", 1_000);
    const big = await makeStreamRoot(dir, "root-1m", 1_000_000);
    const times = { small: [] as number[], big: [] as number[] };
    for (let i = 0; i < REPEATS; i++) {
      for (
        const [name, stream, events] of [
          ["small", small, 1_000],
          ["big", big, 1_000_000],
        ] as const
      ) {
        const run = await measure(
          controlEvents(stream.root, "--from", String(events - 4), "--json"),
        );
        if (run.code !== 0) throw new Error(`${name}: exit ${run.code}`);
        times[name].push(run.ms);
      }
      progress(
        `1k: ${times.small.at(-1)!.toFixed(0)} ms, 1M: ${
          times.big.at(-1)!.toFixed(0)
        } ms`,
      );
    }
    const [s, b] = [median(times.small), median(times.big)];
    const rows: BenchRow[] = [{
      measure:
        "`control events --from SEQ --json` (last 5 events), 1M-line file",
      baseline: `same on 1k lines: ${s.toFixed(0)} ms`,
      result: `${b.toFixed(0)} ms`,
      ratio: ratio(b, s),
      target: "≤ 1.2×",
      met: b / s <= 1.2,
      note: `median of ${REPEATS}, alternating; process start included`,
    }];
    report(rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
