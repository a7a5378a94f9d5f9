#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Runner death: how soon `control events PACKET --json` notices a SIGKILLed
 * runner (from the kill until the follower exits 5), and what following
 * costs while the runner lives: the follower's CPU, and the runner's CPU
 * with and without a follower, over the same window of a quiet run (one
 * event a second), from `/proc/PID/stat` (read by `cat`).
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/runner_death.ts [--json]
 *
 * @module
 */

import { join } from "node:path";
import {
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  progress,
  report,
  simulatedPacket,
} from "./_bench.ts";

const KILLS = 5;
const WINDOW_MS = 6000;

async function makePacket(dir: string, delayMs: number): Promise<string> {
  return await simulatedPacket(
    join(dir, `packet-${delayMs}-${crypto.randomUUID()}`),
    [
      `delay_ms: ${delayMs}`,
      "repeat: 600",
      'messages: ["still working on it"]',
    ],
  );
}

function cli(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...CLI_PERMISSIONS, MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Resolves once the stream has produced a line containing `text`; drains the rest. */
function waitForText(
  stream: ReadableStream<Uint8Array>,
  text: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    (async () => {
      const decoder = new TextDecoder();
      let seen = "";
      let found = false;
      for await (const chunk of stream) {
        if (found) continue;
        seen += decoder.decode(chunk, { stream: true });
        if (seen.includes(text)) {
          found = true;
          resolve();
        }
        seen = seen.slice(-text.length);
      }
      if (!found) reject(new Error(`"${text}" never appeared`));
    })().catch(reject);
  });
}

/** A process's CPU time (user + system) in milliseconds, from /proc. */
async function cpuMs(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`] })
    .output();
  const stat = new TextDecoder().decode(out.stdout);
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  // utime and stime: fields 14 and 15 of the line, 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

async function noticeKill(dir: string): Promise<number> {
  const packet = await makePacket(dir, 20);
  const runner = cli(["run", packet, "--json"]);
  await waitForText(runner.stdout, '"message_streamed"');
  const follower = cli(["control", "events", packet, "--json"]);
  const stderr = new Response(follower.stderr).text();
  await waitForText(follower.stdout, '"message_streamed"');
  const start = performance.now();
  runner.kill("SIGKILL");
  const status = await follower.status;
  const ms = performance.now() - start;
  await runner.status;
  await runner.stderr.cancel();
  if (status.code !== 5) {
    throw new Error(`follower exited ${status.code}: ${await stderr}`);
  }
  return ms;
}

/** CPU of the runner (and of a follower) over a window of a quiet run. */
async function quietWindow(
  dir: string,
  withFollower: boolean,
): Promise<{ runner: number; follower: number | null }> {
  const packet = await makePacket(dir, 1000);
  const runner = cli(["run", packet, "--json"]);
  await waitForText(runner.stdout, '"message_streamed"');
  let follower: Deno.ChildProcess | null = null;
  if (withFollower) {
    follower = cli(["control", "events", packet, "--json"]);
    await waitForText(follower.stdout, '"message_streamed"');
    follower.stderr.cancel();
  }
  await sleep(500);
  const r0 = await cpuMs(runner.pid);
  const f0 = follower ? await cpuMs(follower.pid) : 0;
  await sleep(WINDOW_MS);
  const r1 = await cpuMs(runner.pid);
  const f1 = follower ? await cpuMs(follower.pid) : 0;
  runner.kill("SIGTERM");
  await runner.status;
  await runner.stderr.cancel();
  if (follower) await follower.status;
  return {
    runner: (r1 - r0) / WINDOW_MS * 100,
    follower: follower ? (f1 - f0) / WINDOW_MS * 100 : null,
  };
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_death_" });
  try {
    const kills: number[] = [];
    for (let n = 0; n < KILLS; n++) {
      kills.push(await noticeKill(dir));
      progress(`SIGKILL noticed after ${kills.at(-1)!.toFixed(0)} ms`);
    }
    const alone = await quietWindow(dir, false);
    const followed = await quietWindow(dir, true);
    progress(
      `runner CPU alone ${alone.runner.toFixed(2)} %, with a follower ${
        followed.runner.toFixed(2)
      } %; follower ${followed.follower!.toFixed(2)} % of a core`,
    );
    const rows: BenchRow[] = [{
      measure: "a follower noticing a SIGKILLed runner",
      baseline: "heartbeat staleness: 5 s",
      result: `${median(kills).toFixed(0)} ms (max ${
        Math.max(...kills).toFixed(0)
      } ms)`,
      ratio: `${(median(kills) / 5000).toFixed(2)}×`,
      target: "< 1 s",
      met: median(kills) < 1000,
      note: `median of ${KILLS} kills, until the follower exits 5`,
    }, {
      measure: "… its cost while the runner lives (quiet run, 1 event/s)",
      baseline: `runner alone: ${alone.runner.toFixed(1)} % CPU`,
      result: `follower ${followed.follower!.toFixed(1)} % CPU; runner ${
        followed.runner.toFixed(1)
      } % with it`,
      ratio: `${(followed.runner / Math.max(alone.runner, 0.1)).toFixed(2)}×`,
      target: "no polling cost to speak of",
      met: followed.follower! < 2,
      note: `CPU over ${
        WINDOW_MS / 1000
      } s from /proc (10 ms ticks); a lock probe and a snapshot read every 250 ms while idle`,
    }];
    report(rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
