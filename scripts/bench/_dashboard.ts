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
import { writePacedPacket } from "../_harness/paced_packet.ts";
import { cpuSeconds, procFile } from "../_harness/proc.ts";
import { benchDir, CLI_PERMISSIONS, MAIN } from "./_bench.ts";

interface Dashboard {
  origin: string;
  token: string;
  pid: number;
  stop(): Promise<void>;
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
  return await writePacedPacket(await benchDir(), {
    name: "bench",
    body: "",
    waitMs: 4000,
    delayMs,
    rounds,
  });
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
