/**
 * The dashboard bench's parts (`dashboard.ts`): `serve` started on a
 * target, the simulated packet its runs play, the pages' check that each
 * followed the run to its end, and the CPU seconds of processes read from
 * /proc.
 *
 * @module
 */

import { join } from "node:path";
import type { launchBrowser } from "../_harness/browser.ts";
import { benchDir, CLI_PERMISSIONS, MAIN } from "./_bench.ts";

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
export async function cpuSeconds(pids: number[]): Promise<number> {
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
export async function chromiumByType(
  pids: number[],
): Promise<Record<string, number>> {
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
export interface CpuShare {
  runner: number;
  serve: number;
  chromium: number;
}

/** Starts `serve TARGET` and reads its URL line. */
export async function serve(target: string): Promise<Dashboard> {
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

/** A packet: a 4 s wait (the browsers connect), then `rounds` rounds of work. */
export async function packet(rounds: number, delayMs: number): Promise<string> {
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
export async function workTime(stateRoot: string): Promise<number> {
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
export async function followedToTheEnd(
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
