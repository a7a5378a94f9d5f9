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
 *   paced like an agent (an event every 5 ms) and once flat out.
 *
 * Needs Chromium (Debian's `chromium`, or `$PROMPT_RUNNER_CHROMIUM`) and
 * `npm:puppeteer-core` through the tests' browser harness.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 scripts/bench/dashboard.ts [--json] [--repeats N]
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { launchBrowser } from "../../tests/_helpers/browser.ts";
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

function rootKey(stateRoot: string): string {
  return "r-" +
    createHash("sha256").update(stateRoot).digest("hex").slice(0, 12);
}

interface Dashboard {
  origin: string;
  token: string;
  stop(): Promise<void>;
}

/** Starts `serve TARGET` and reads its URL line. */
async function serve(target: string): Promise<Dashboard> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, MAIN, "serve", target],
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

/** One run, with `tabs` browsers (contexts) on its run page (or none). */
async function timedRun(
  rounds: number,
  delayMs: number,
  tabs: number,
): Promise<number> {
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
      const url = `${dashboard.origin}/run/${rootKey(stateRoot)}/${runId}`;
      // A browser context each, as separate browsers: one browser holds at
      // most six connections to a host, and each run page keeps one open.
      for (let i = 0; i < tabs; i++) {
        const context = await browser.browser.createBrowserContext();
        const page = await context.newPage();
        await page.goto(`${dashboard.origin}/?token=${dashboard.token}`);
        await page.goto(url);
      }
    }
    const status = await runner.status;
    if (!status.success) throw new Error(`the run exited ${status.code}`);
    return await workTime(stateRoot);
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
  for (let i = 0; i < repeats; i++) {
    none.push(await timedRun(rounds, delayMs, 0));
    ten.push(await timedRun(rounds, delayMs, TABS));
    progress(
      `${name} ${i + 1}/${repeats}: no browser ${
        none.at(-1)
      } ms, ${TABS} browsers ${ten.at(-1)} ms`,
    );
  }
  const [a, b] = [median(none), median(ten)];
  return {
    measure:
      `dashboard: a run with ${TABS} browsers on its page vs none, ${name}`,
    baseline: `no browser: ${a} ms`,
    result: `${TABS} browsers: ${b} ms`,
    ratio: ratio(b, a),
    target: "≤ 1.1×",
    met: b / a <= 1.1,
    note: `${rounds * 6} events, median of ${repeats}, interleaved`,
  };
}

async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: { json: { type: "boolean" }, repeats: { type: "string" } },
  });
  const repeats = Number(args.values.repeats ?? "3");
  const rows = await latency();
  rows.push(
    await browsersCost("paced (an event every ~5 ms)", 500, 5, repeats),
  );
  rows.push(await browsersCost("flat out", 2000, 0, repeats));
  report(rows);
}

if (import.meta.main) await main();
