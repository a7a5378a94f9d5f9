#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * What notifications cost a run whose receivers misbehave: a webhook that
 * never answers and one that answers 500 (retried) must never slow it.
 *
 * Two rows, each measured beside its baseline in the same invocation
 * (interleaved, medians of repeats):
 *
 * - the same 20,000-event simulated run with the file control plane,
 *   without `notify:` and with rules for every moment pointing at both bad
 *   webhooks: events per second from the first event to `run_finished`.
 *   The wait at the end (the bounded grace the deliveries still under way
 *   get, 3 s) is reported beside it, not counted in the rate.
 * - the plane alone fed 20,000 events of which one in 20 is an
 *   `attention_needed` (a flood: deliveries pile up against the bad
 *   webhooks and the queue's bound drops the excess): events per second
 *   through `observe` and `boundary`, with and without the rules.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 scripts/bench/notify.ts [--json] [--repeats N] [--events N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { openPlane } from "../../lib/control/plane.ts";
import { loadPacket, type Packet } from "../../lib/packet/mod.ts";
import { runPacket } from "../../lib/runner/mod.ts";
import type { RunEvent } from "../../lib/shared/events.ts";
import type { NotifyRule } from "../../lib/shared/notify_rule.ts";
import { DEFAULT_VIEW } from "../../lib/shared/view.ts";
import {
  benchDir,
  type BenchRow,
  EVENTS_PER_ROUND,
  loadRound,
  median,
  progress,
  ratio,
  report,
  simulatedPacket,
} from "./_bench.ts";

/** The receivers' process: one never answers, one answers 500. */
const RECEIVERS = `
const hang = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} },
  () => new Promise(() => {}));
const fail = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} },
  () => new Response("down", { status: 500 }));
console.log(JSON.stringify([hang.addr.port, fail.addr.port]));
await new Promise(() => {});
`;

/**
 * Two receivers that misbehave, in a process of their own (as a real
 * receiver is): their work does not share the runner's event loop.
 */
async function badReceivers(
  dir: string,
): Promise<{ urls: string[]; close(): Promise<void> }> {
  const script = join(dir, "receivers.ts");
  await Deno.writeTextFile(script, RECEIVERS);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net=127.0.0.1", script],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the receivers did not start");
    text += value;
  }
  const [hang, fail] = JSON.parse(text) as [number, number];
  return {
    urls: [
      `http://127.0.0.1:${hang}/hang`,
      `http://127.0.0.1:${fail}/fail`,
    ],
    async close(): Promise<void> {
      child.kill("SIGKILL");
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

function rulesFor(urls: string[], dir: string): NotifyRule[] {
  return urls.map((webhook) => ({
    on: ["attention", "failed", "completed", "finished"],
    webhook,
    timeout_ms: null,
    dir,
  }));
}

/** One plane run: events per second to `run_finished`, and the wait after it. */
async function timeRun(
  packet: Packet,
  stateRoot: string,
): Promise<{ rate: number; endMs: number; events: number }> {
  let events = 0;
  let first = 0;
  let last = 0;
  const result = await runPacket(packet, {
    stateRoot,
    onEvent: (event: RunEvent) => {
      events++;
      if (events === 1) first = performance.now();
      if (event.type === "run_finished") last = performance.now();
    },
  });
  const endMs = performance.now() - last;
  if (result.status !== "completed") throw new Error(`run ${result.status}`);
  return { rate: events / ((last - first) / 1000), endMs, events };
}

function syntheticEvent(seq: number, runId: string): RunEvent {
  const base = {
    v: 1 as const,
    seq,
    at: new Date().toISOString(),
    run_id: runId,
    prompt_id: "01",
    attempt: 1,
  };
  return seq % 20 === 0
    ? {
      ...base,
      type: "attention_needed",
      data: { reason: "stalled", prompt_id: "01", attempt: 1, detail: "quiet" },
    }
    : {
      ...base,
      type: "message_received",
      data: { content: "working on it", role: "assistant" },
    };
}

/** The plane alone: events per second through observe and boundary. */
async function timePlane(
  root: string,
  events: number,
  notify: NotifyRule[],
): Promise<number> {
  const runId = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const plane = await openPlane(root, {
    run_id: runId,
    packet: "bench",
    packet_dir: root,
    state_root: root,
    view: { ...DEFAULT_VIEW },
    max_steers: 3,
    prompt_ids: ["01"],
    provider: "simulated",
    model: "simulated",
    notify,
  });
  const start = performance.now();
  for (let seq = 1; seq <= events; seq++) {
    await plane.observe(syntheticEvent(seq, runId));
    await plane.boundary({ idle: false });
  }
  const rate = events / ((performance.now() - start) / 1000);
  await plane.close("completed");
  return rate;
}

export async function main(): Promise<void> {
  const args = parseArgs({
    args: Deno.args,
    options: {
      json: { type: "boolean" },
      repeats: { type: "string" },
      events: { type: "string" },
    },
  });
  const repeats = Number(args.values.repeats ?? 5);
  const count = Number(args.values.events ?? 20_000);
  const dir = await simulatedPacket(
    await benchDir(),
    loadRound(Math.ceil(count / EVENTS_PER_ROUND)),
  );
  const receivers = await badReceivers(dir);
  const rows: BenchRow[] = [];
  try {
    const plain = await loadPacket(dir);
    const noisy = { ...plain, notify: rulesFor(receivers.urls, dir) };
    let n = 0;
    const root = (): string => join(dir, `root-${n++}`);
    await timeRun(plain, root()); // warm-up
    const base: number[] = [];
    const ours: number[] = [];
    const waits: number[] = [];
    let events = 0;
    for (let i = 0; i < repeats; i++) {
      base.push((await timeRun(plain, root())).rate);
      const run = await timeRun(noisy, root());
      ours.push(run.rate);
      waits.push(run.endMs);
      events = run.events;
      progress(
        `run: without ${base.at(-1)!.toFixed(0)}, with bad webhooks ${
          ours.at(-1)!.toFixed(0)
        } events/s; end wait ${run.endMs.toFixed(0)} ms`,
      );
    }
    const b = median(base);
    const o = median(ours);
    rows.push({
      measure:
        "runner with notify: to a hanging and a 500 webhook vs without notify:",
      baseline: `without: ${b.toFixed(0)} events/s`,
      result: `${o.toFixed(0)} events/s`,
      ratio: ratio(b, o),
      target: "within 5 %",
      met: o >= b * 0.95,
      note:
        `${events} events to run_finished, median of ${repeats}; after run_finished the run's end waited ${
          median(waits).toFixed(0)
        } ms for the deliveries still under way (the bounded grace is 3 s)`,
    });
    const planeBase: number[] = [];
    const planeOurs: number[] = [];
    await timePlane(root(), count, []); // warm-up
    for (let i = 0; i < repeats; i++) {
      planeBase.push(await timePlane(root(), count, []));
      planeOurs.push(
        await timePlane(root(), count, rulesFor(receivers.urls, dir)),
      );
      progress(
        `plane: without ${planeBase.at(-1)!.toFixed(0)}, with ${
          planeOurs.at(-1)!.toFixed(0)
        } events/s`,
      );
    }
    const pb = median(planeBase);
    const po = median(planeOurs);
    rows.push({
      measure:
        "plane observe + boundary, one attention_needed in 20, notify: to bad webhooks vs none",
      baseline: `without: ${pb.toFixed(0)} events/s`,
      result: `${po.toFixed(0)} events/s`,
      ratio: ratio(pb, po),
      target: "within 5 %",
      met: po >= pb * 0.95,
      note: `${count} events (${
        Math.floor(count / 20)
      } attention_needed), median of ${repeats}; deliveries beyond the queue's bound (64) are dropped and logged once`,
    });
  } finally {
    await receivers.close();
    await Deno.remove(dir, { recursive: true });
  }
  report(rows);
}

if (import.meta.main) await main();
