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
 * `npm:puppeteer-core` through the tests' browser harness.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 scripts/bench/dashboard.ts [--json] [--repeats N] [--only latency|paced|flat]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { launchBrowser } from "../_harness/browser.ts";
import { rootKey } from "../_harness/serve.ts";
import {
  benchDir,
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  percentile,
  progress,
  ratio,
  report,
} from "./_bench.ts";
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

interface Dashboard {
  origin: string;
  token: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A file of a process's under /proc, read with `cat` (Deno reads /proc
 * only with --allow-all); empty once the process is gone.
 */
async function procFile(pid: number, name: string): Promise<string> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/${name}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout);
}

/** The CPU seconds (user + system) processes have used so far, summed. */
async function cpuSeconds(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    // Fields 14 and 15 of /proc/PID/stat, after the parenthesised name.
    const text = await procFile(pid, "stat");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return ticks / CLOCK_TICKS;
}

/** Chromium's CPU seconds by process type (`--type=`; `browser` for none). */
async function chromiumByType(pids: number[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const pid of pids) {
    // Chromium rewrites its children's titles into one space-separated line.
    const title = await procFile(pid, "cmdline");
    const type = /--type=(\S+)/.exec(title)?.[1] ?? "browser";
    const sub = /--utility-sub-type=(\S+)/.exec(title)?.[1];
    const key = sub === undefined ? type : `${type}:${sub}`;
    out[key] = (out[key] ?? 0) + await cpuSeconds([pid]);
  }
  return out;
}

/** Linux's USER_HZ, the unit of /proc/PID/stat's times. */
const CLOCK_TICKS = 100;

/** Where the CPU went during a run with browsers on it (seconds). */
interface CpuShare {
  runner: number;
  serve: number;
  chromium: number;
}

/** Starts `serve TARGET` and reads its URL line. */
async function serve(target: string): Promise<Dashboard> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(Deno.env.get("BENCH_SERVE_V8") ? ["--v8-flags=--prof"] : []),
      ...CLI_PERMISSIONS,
      MAIN,
      "serve",
      target,
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve ended before its URL line: ${text}`);
    text += value;
  }
  const match = /^dashboard: (http:\/\/[^/]+)\/\?token=([\w-]+)$/m.exec(text);
  if (match === null) throw new Error(`no URL line: ${text}`);
  // Keep reading, so the server never blocks on a full pipe.
  const drained = (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    origin: match[1]!,
    token: match[2]!,
    pid: child.pid,
    async stop(): Promise<void> {
      child.kill("SIGTERM");
      await child.status;
      await drained.catch(() => {});
    },
  };
}

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

/** A packet: a 4 s wait (the browsers connect), then `rounds` rounds of work. */
async function packet(rounds: number, delayMs: number): Promise<string> {
  const dir = await benchDir();
  await Deno.mkdir(join(dir, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "prompt_runner_packet.md"),
    "---\nname: bench\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "01_wait.prompt.md"),
    "---\nsimulate: {attempts: [{delay_ms: 4000, messages: [ready]}]}\n---\nWait.\n",
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "02_work.prompt.md"),
    [
      "---",
      "simulate:",
      "  attempts:",
      `    - delay_ms: ${delayMs}`,
      `      repeat: ${rounds}`,
      '      thinking: ["thinking it over"]',
      '      messages: ["working on it"]',
      "      tools: [{name: Bash, input: {command: ls}, output: a.md}]",
      "      usage: {input_tokens: 100, output_tokens: 10}",
      "---",
      "Work.",
      "",
    ].join("\n"),
  );
  return dir;
}

/** The time of the work prompt, from the run's own event stamps. */
async function workTime(stateRoot: string): Promise<number> {
  const lines = (await Deno.readTextFile(
    join(stateRoot, "control", "events.jsonl"),
  )).split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const first = lines.find((e) => e.prompt_id === "02");
  const last = lines.at(-1);
  if (first === undefined || last?.type !== "run_finished") {
    throw new Error("the run did not finish its work prompt");
  }
  return Date.parse(last.at) - Date.parse(first.at);
}

/**
 * Checks, once the run is over, that each of the `tabs` run pages followed
 * it to its end: `run_finished` in its event list, every seq before it.
 */
async function followedToTheEnd(
  browser: Awaited<ReturnType<typeof launchBrowser>>["browser"],
  tabs: number,
): Promise<void> {
  const pages = browser.targets().filter((target) =>
    target.type() === "page" && target.url().includes("/run/")
  );
  if (pages.length !== tabs) {
    throw new Error(`${pages.length} run pages open, not ${tabs}`);
  }
  for (const target of pages) {
    const page = await target.page();
    if (page === null) throw new Error("a run page went away");
    await page.waitForFunction(
      `(() => {
        const done = document.querySelector("#events .event[data-type=run_finished]");
        if (!done) return false;
        const last = Number(done.getAttribute("data-seq"));
        const shown = document.querySelectorAll("#events .event[data-seq]");
        const first = Number(shown[0].getAttribute("data-seq"));
        return shown.length === last - first + 1;
      })()`,
      { timeout: 30_000 },
    );
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
