#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * Fuzzing the dashboard: a live `prompt_runner serve` on 127.0.0.1 (under
 * `ulimit -n 256`, so floods run it out of files) while a simulated run
 * streams, hit with random requests (methods, paths, headers, hosts and
 * bytes of every kind), oversized ones (heads, header counts, declared and
 * streamed bodies), half-sent requests and stalled bodies, and connection
 * floods; two followers read the run's event stream as browsers do and a
 * poller asks for the runs page on a fresh connection four times a second.
 * Checks that the server never dies and answers every complete request
 * with a status it documents, closes every half-sent one within its
 * timeouts, keeps answering the poller, keeps its memory bounded, gives
 * the followers every event once and in order, and that the run's events
 * per second stay within 10% of the same run's without the fuzzing
 * (runs with and without, interleaved, in the same invocation). Prints a
 * summary; exits 1 on any violation.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 \
 *     scripts/fuzz_dashboard/main.ts [--quick] [--seconds N] [--seed N] [--keep]
 *
 * `scripts/fuzz/main.ts` runs it after the control directory's fuzzing (so
 * `deno task fuzz` runs both). Two minutes by default; `--quick` is about
 * twenty seconds.
 *
 * The packet and its runs are in `runs.ts`, the random, oversized and
 * half-sent requests, the floods and the browser-like clients in
 * `actors/`, the checks in `audits.ts`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { cliArgs } from "../_harness/cli.ts";
import {
  formatCount,
  leaveScratch,
  LineReader,
  parseScriptFlags,
  readAll,
  reportViolations,
  Rng,
  type ScriptFlags,
  sleep,
  Violations,
} from "../_harness/mod.ts";
import { cpuSeconds, vmRssMib } from "../_harness/proc.ts";
import { rootKey } from "../_harness/serve.ts";
import {
  flooder,
  follower,
  type Fuzz,
  halfSender,
  poller,
  requester,
  type Tally,
} from "./actors/clients.ts";
import type { Target } from "./actors/requests.ts";
import {
  checkFollowed,
  checkLimits,
  checkServer,
  MIN_RATIO,
  paceRatio,
} from "./audits.ts";
import { DELAY_MS, runIdOf, runOnce, startedRun, writePacket } from "./runs.ts";

/** The server's open-file limit while fuzzed. */
const FILE_LIMIT = 256;

/**
 * Fuzzes a live dashboard for about `flags.seconds`; prints the summary
 * and returns the exit code (1 on any violation).
 */
export async function fuzzDashboard(flags: ScriptFlags): Promise<number> {
  const began = Date.now();
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fuzz_dash_" });
  const runSeconds = flags.quick ? 6 : 15;
  // Events of a round at the agent's pace: 6 events, DELAY_MS apart.
  const rounds = Math.round(runSeconds * 1000 / (6 * DELAY_MS));
  // A run takes its work's time and a few seconds more (start, the wait).
  const pairs = flags.quick
    ? 1
    : Math.max(2, Math.round(flags.seconds / (2 * runSeconds + 10)));
  const violations = new Violations();
  const tally: Tally = {
    requests: 0,
    byKind: new Map(),
    byStatus: new Map(),
    limited: new Map(),
    halfSent: 0,
    floods: 0,
    flooded: 0,
    refused: 0,
    polls: 0,
  };
  console.error(
    `fuzz dashboard: ${pairs} runs with and ${pairs} without, seed ${flags.seed}, in ${dir}`,
  );
  const packet = await writePacket(dir, rounds);
  const stateRoot = join(packet, ".prompt_runner");
  const argv = [Deno.execPath(), ...cliArgs(["serve", packet])];
  const serve = new Deno.Command("sh", {
    args: ["-c", `ulimit -n ${FILE_LIMIT} && exec "$@"`, "sh", ...argv],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = serve.status.then((s) => {
    exited = true;
    return s;
  });
  const lines = new LineReader(serve.stdout);
  const stderr = readAll(serve.stderr);
  let peak = 0;
  let sampling = true;
  const without: number[] = [];
  const fuzzed: number[] = [];
  let diedDuring = false;
  const cpu = { serve: 0, fuzz: 0 };
  try {
    const first = await lines.next() ?? "";
    const match = /^dashboard: (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([\w-]+)$/
      .exec(first);
    if (match === null) throw new Error(`serve printed ${first}`);
    const drained = lines.rest();
    const port = Number(match[2]);
    const target: Target = {
      port,
      origin: match[1]!,
      cookie: `pr_token_${port}=${match[3]}`,
      run: null,
      root: rootKey(stateRoot),
    };
    const sampler = (async () => {
      while (sampling && !exited) {
        peak = Math.max(peak, await vmRssMib(serve.pid) ?? 0);
        await sleep(250);
      }
    })();
    // Without, with, with, without, …: a drift in the machine's load
    // weighs on both sides alike.
    const order = Array.from(
      { length: pairs * 2 },
      (_, i) => (i % 4 === 1 || i % 4 === 2) ? "with" : "without",
    );
    for (const [n, kind] of order.entries()) {
      if (kind === "without") {
        without.push(await runOnce(packet, stateRoot));
        continue;
      }
      // The same run, with the fuzz on the dashboard that shows it.
      const fuzz: Fuzz = {
        target,
        rng: new Rng(flags.seed + n),
        violations,
        tally,
        stop: false,
      };
      const previous = await runIdOf(stateRoot);
      const cpuBefore = [
        await cpuSeconds([serve.pid]),
        await cpuSeconds([Deno.pid]),
      ];
      const running = runOnce(packet, stateRoot);
      const runId = await startedRun(stateRoot, previous);
      target.run = `/run/${target.root}/${runId}`;
      const url = `${target.origin}${target.run}/events`;
      const followers = [follower(target, url), follower(target, url)];
      const workers = [
        requester(fuzz, false),
        requester(fuzz, false),
        requester(fuzz, true),
        halfSender(fuzz),
        flooder(fuzz),
        poller(fuzz),
      ];
      try {
        fuzzed.push(await running);
      } finally {
        fuzz.stop = true;
        await Promise.all(workers);
      }
      cpu.serve += await cpuSeconds([serve.pid]) - cpuBefore[0]!;
      cpu.fuzz += await cpuSeconds([Deno.pid]) - cpuBefore[1]!;
      if (exited) diedDuring = true;
      const stored = (await Deno.readTextFile(
        join(stateRoot, "control", "events.jsonl"),
      )).split("\n").filter(Boolean);
      const got = await Promise.all(followers);
      got.forEach((received, i) =>
        checkFollowed(`follower ${i + 1}`, received, stored, violations)
      );
    }
    sampling = false;
    await sampler;
    if (exited) diedDuring = true;
    serve.kill("SIGTERM");
    const code = (await status).code;
    await drained;
    const ratio = paceRatio(without, fuzzed);
    checkServer({
      // A quick run is too short, and too loaded by the tests beside it,
      // to judge a pace by: it prints it.
      ratio: flags.quick ? Math.max(ratio, MIN_RATIO) : ratio,
      peak_rss_mib: peak,
      exit_code: code,
      died_during: diedDuring,
      stderr: await stderr,
    }, violations);
    checkLimits(tally.limited, violations);
    const elapsed = Math.round((Date.now() - began) / 1000);
    const eps = (values: number[]): string =>
      values.map((v) => v.toFixed(0)).join(", ");
    console.log(
      `fuzz dashboard: ${elapsed} s, ${pairs * 2} runs, ${
        formatCount(tally.requests)
      } requests, ${
        formatCount(tally.halfSent)
      } half-sent, ${tally.floods} floods (${
        formatCount(tally.flooded)
      } connections), peak RSS ${peak.toFixed(0)} MiB, events/s ${
        (ratio * 100).toFixed(1)
      }% of without, violations: ${formatCount(violations.count)}`,
    );
    console.log(
      `  events/s without: ${eps(without)}; with: ${eps(fuzzed)}${
        flags.quick ? " (a quick run's pace is not judged)" : ""
      }; CPU during the fuzzed runs: serve ${
        cpu.serve.toFixed(1)
      } s, the fuzzer ${cpu.fuzz.toFixed(1)} s; polls answered ${
        formatCount(
          tally.polls - violations.countOf("a normal client is answered"),
        )
      } of ${
        formatCount(tally.polls)
      }; connects refused in floods ${tally.refused}`,
    );
    console.log(
      `  statuses: ${
        [...tally.byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) =>
          `${s} ${n}`
        ).join(", ")
      }; kinds: ${
        [...tally.byKind].sort((a, b) => b[1] - a[1]).map(([k, n]) =>
          `${k} ${n}`
        ).join(", ")
      }; seed ${flags.seed}`,
    );
    return reportViolations(violations);
  } finally {
    sampling = false;
    if (!exited) serve.kill("SIGKILL");
    await status;
    await lines.rest().catch(() => []);
    await stderr.catch(() => "");
    await leaveScratch("fuzz dashboard", dir, flags.keep);
  }
}

if (import.meta.main) {
  Deno.exit(
    await fuzzDashboard(
      parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 20 }),
    ),
  );
}
