#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * The dashboard (`prompt_runner serve`) in a real headless Chromium:
 *
 * - append → visible: the time from appending an event line to a live run's
 *   stream until its `.event[data-seq]` element is in the run page's DOM
 *   (a MutationObserver stamps it with the page's epoch clock), against
 *   `control events --from current --json` on the same stream in the same
 *   run (median and p99 of 200 appends each);
 * - what browsers cost a run: the same simulated run's time (from its
 *   second prompt's first event to `run_finished`, taken from the event
 *   stamps) with 10 browsers on its run page against none, interleaved; once
 *   paced like an agent (an event every 5 ms) and once flat out. The pages
 *   are opened over the DevTools protocol without attaching to them (an
 *   attached page reports its network traffic to the bench chunk by chunk,
 *   which a person's browser does not), and checked at the end: each one
 *   followed the run to `run_finished` with no gap. The CPU seconds that the
 *   runner, the server and Chromium used are in the row's note.
 *
 * Profiling: `BENCH_CPU_TYPES=1` prints Chromium's CPU by process type for
 * each run with browsers; `BENCH_SERVE_V8=1` runs the server under V8's
 * `--prof` (an `isolate-*.log` in the current directory, for
 * `node --prof-process`).
 *
 * Needs Chromium (Debian's `chromium`, or `$PROMPT_RUNNER_CHROMIUM`) and
 * `npm:puppeteer-core` through the scripts' browser harness
 * (`scripts/_harness/browser.ts`). The server, its packet and the /proc
 * readings are in `_dashboard.ts`.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 scripts/bench/dashboard.ts [--json] [--repeats N] [--only latency|paced|flat]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { launchBrowser } from "../_harness/browser.ts";
import { cpuSeconds } from "../_harness/proc.ts";
import { rootKey } from "../_harness/serve.ts";
import {
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  percentile,
  progress,
  ratio,
  report,
} from "./_bench.ts";
import {
  chromiumByType,
  type CpuShare,
  followedToTheEnd,
  packet,
  serve,
  workTime,
} from "./_dashboard.ts";
import { controlEvents } from "./_event_stream.ts";
import {
  eventLine,
  measureFollower,
  playedRun,
  RUN_ID,
} from "./follow_latency.ts";

const APPENDS = 200;
const WARMUP = 20;
const TABS = 10; // browsers (one context each)

/** Append → visible in a run page's DOM, and the `control events` baseline. */
async function latency(): Promise<BenchRow[]> {
  const { root, path, release } = await playedRun();
  const snapshotPath = join(root, "control", "snapshot.json");
  const snapshot = JSON.parse(await Deno.readTextFile(snapshotPath));
  await Deno.writeTextFile(
    snapshotPath,
    JSON.stringify({
      ...snapshot,
      packet: "bench",
      packet_dir: "",
      view: {
        log_mode: "studio",
        tool_output: "summary",
        thinking: "show",
        diff: "stat",
      },
      last_seq: 0,
      event_count: 0,
    }),
  );
  using file = await Deno.open(path, {
    append: true,
    create: true,
    mode: 0o600,
  });
  const next = { seq: 1 };
  const dashboard = await serve(root);
  await using browser = await launchBrowser();
  try {
    const events = await measureFollower(
      "control events --from current --json",
      controlEvents(root, "--from", "current", "--json"),
      file,
      next,
    );
    const page = await browser.open(
      `${dashboard.origin}/?token=${dashboard.token}`,
    );
    await page.goto(`${dashboard.origin}/run/${rootKey(root)}/${RUN_ID}`);
    await page.waitForSelector("#events", "the run page");
    await page.evaluate(`(() => {
      window.__seen = {};
      new MutationObserver((records) => {
        const at = performance.timeOrigin + performance.now();
        for (const record of records) {
          for (const node of record.addedNodes) {
            const seq = node.getAttribute && node.getAttribute("data-seq");
            if (seq !== null && seq !== undefined && !(seq in window.__seen)) {
              window.__seen[seq] = at;
            }
          }
        }
      }).observe(document.getElementById("events"), {
        childList: true,
        subtree: true,
      });
      return true;
    })()`);
    const appended = new Map<number, number>();
    for (let n = 0; n < WARMUP + APPENDS; n++) {
      const seq = next.seq++;
      const line = eventLine(seq);
      appended.set(seq, performance.timeOrigin + performance.now());
      file.writeSync(line);
      await page.waitUntil(
        `event ${seq} in the DOM`,
        `window.__seen && ${JSON.stringify(String(seq))} in window.__seen`,
        10_000,
      );
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 10));
    }
    const seen = await page.evaluate<Record<string, number>>("window.__seen");
    const dom: number[] = [];
    let n = 0;
    for (const [seq, at] of appended) {
      if (n++ < WARMUP) continue;
      dom.push(seen[String(seq)]! - at);
    }
    const [em, ep] = [median(events), percentile(events, 99)];
    const [dm, dp] = [median(dom), percentile(dom, 99)];
    progress(
      `run page DOM: median ${dm.toFixed(2)} ms, p99 ${dp.toFixed(2)} ms`,
    );
    return [{
      measure: "dashboard: append → visible in the run page's DOM",
      baseline: `control events --from current: ${em.toFixed(2)} / ${
        ep.toFixed(2)
      } ms`,
      result: `${dm.toFixed(2)} / ${dp.toFixed(2)} ms (median / p99)`,
      ratio: `${dm - em >= 0 ? "+" : ""}${(dm - em).toFixed(2)} ms`,
      target: "median ≤ control events + 20 ms",
      met: dm <= em + 20,
      note:
        `${APPENDS} appends each, 5–15 ms apart, after ${WARMUP} warm-up; headless Chromium, one tab`,
    }];
  } finally {
    await browser.close();
    await dashboard.stop();
    await release();
  }
}

/** One run, with `tabs` browsers on its run page (or none). */
async function timedRun(
  rounds: number,
  delayMs: number,
  tabs: number,
): Promise<{ ms: number; cpu: CpuShare }> {
  const dir = await packet(rounds, delayMs);
  const stateRoot = join(dir, ".prompt_runner");
  const dashboard = tabs > 0 ? await serve(dir) : null;
  const browser = tabs > 0 ? await launchBrowser() : null;
  try {
    const runner = new Deno.Command(Deno.execPath(), {
      args: ["run", ...CLI_PERMISSIONS, MAIN, "run", dir],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // The runner's CPU, sampled while it lives (ps forgets it at exit).
    let runnerCpu = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const seconds = await cpuSeconds([runner.pid]);
        if (seconds > 0) runnerCpu = seconds;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    if (browser !== null && dashboard !== null) {
      let runId = "";
      for (let i = 0; i < 200 && runId === ""; i++) {
        try {
          runId = JSON.parse(
            await Deno.readTextFile(
              join(stateRoot, "control", "snapshot.json"),
            ),
          ).run_id;
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      // ?token= on the run page's own URL: a 303 sets the cookie.
      const url = `${dashboard.origin}/run/${
        rootKey(stateRoot)
      }/${runId}?token=${dashboard.token}`;
      // A browser context each, as separate browsers (one browser holds at
      // most six connections to a host), and the page opened over the
      // DevTools protocol without attaching to it: an attached page has its
      // network traffic reported to the bench, chunk by chunk.
      const session = await browser.browser.target().createCDPSession();
      for (let i = 0; i < tabs; i++) {
        const { browserContextId } = await session.send(
          "Target.createBrowserContext",
        );
        await session.send("Target.createTarget", { url, browserContextId });
      }
      await session.detach();
    }
    const status = await runner.status;
    sampling = false;
    await sampler;
    if (!status.success) throw new Error(`the run exited ${status.code}`);
    if (browser !== null) await followedToTheEnd(browser.browser, tabs);
    if (browser !== null && Deno.env.get("BENCH_CPU_TYPES")) {
      progress(
        JSON.stringify(await chromiumByType(await browser.processes())),
      );
    }
    const cpu = {
      runner: runnerCpu,
      serve: dashboard === null ? 0 : await cpuSeconds([dashboard.pid]),
      chromium: browser === null
        ? 0
        : await cpuSeconds(await browser.processes()),
    };
    return { ms: await workTime(stateRoot), cpu };
  } finally {
    await browser?.close();
    await dashboard?.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function browsersCost(
  name: string,
  rounds: number,
  delayMs: number,
  repeats: number,
): Promise<BenchRow> {
  const none: number[] = [];
  const ten: number[] = [];
  const shares: CpuShare[] = [];
  for (let i = 0; i < repeats; i++) {
    const alone = await timedRun(rounds, delayMs, 0);
    const watched = await timedRun(rounds, delayMs, TABS);
    none.push(alone.ms);
    ten.push(watched.ms);
    shares.push(watched.cpu);
    progress(
      `${name} ${i + 1}/${repeats}: no browser ${alone.ms} ms (runner CPU ${
        alone.cpu.runner.toFixed(1)
      } s), ${TABS} browsers ${watched.ms} ms (CPU: runner ${
        watched.cpu.runner.toFixed(1)
      } s, serve ${watched.cpu.serve.toFixed(1)} s, Chromium ${
        watched.cpu.chromium.toFixed(1)
      } s)`,
    );
  }
  const [a, b] = [median(none), median(ten)];
  const cpu = (key: keyof CpuShare) =>
    median(shares.map((share) => share[key])).toFixed(1);
  return {
    measure:
      `dashboard: a run with ${TABS} browsers on its page vs none, ${name}`,
    baseline: `no browser: ${a} ms`,
    result: `${TABS} browsers: ${b} ms`,
    ratio: ratio(b, a),
    target: "≤ 1.1×",
    met: b / a <= 1.1,
    note: `${
      rounds * 6
    } events, median of ${repeats}, interleaved; CPU seconds with the browsers: runner ${
      cpu("runner")
    }, serve ${cpu("serve")}, Chromium ${cpu("chromium")}`,
  };
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      repeats: { type: "string" },
      only: { type: "string" },
    },
  });
  const repeats = Number(args.values.repeats ?? "3");
  const only = args.values.only;
  if (only !== undefined && !["latency", "paced", "flat"].includes(only)) {
    throw new Error("--only takes latency, paced or flat");
  }
  const rows: BenchRow[] = [];
  if (only === undefined || only === "latency") rows.push(...await latency());
  if (only === undefined || only === "paced") {
    rows.push(
      await browsersCost("paced (an event every ~5 ms)", 500, 5, repeats),
    );
  }
  if (only === undefined || only === "flat") {
    rows.push(await browsersCost("flat out", 2000, 0, repeats));
  }
  report(rows);
}

if (import.meta.main) await main();
