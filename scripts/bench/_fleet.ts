/**
 * What the fleet benchmarks share (issue 21): the CLI timed from spawn to
 * exit (wall, CPU and peak RSS from `/usr/bin/time`, stdout kept when
 * asked), a run's fleet key, the event `seq` the fleet holds last for it,
 * the last `seq` of an events file, `median (min–max)` as the rows print
 * it, and a live run played by hand and published as `run --fleet` does. The servers are `scripts/_harness/nats.ts`'s: real
 * `nats-server`s with JetStream on 127.0.0.1.
 *
 * @module
 */

import { join } from "node:path";
import { openPlane } from "../../lib/control/plane.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import type { FleetLink } from "../../lib/fleet/_link.ts";
import {
  EVENTS_STREAM,
  eventsSubject,
  rootName,
  runName,
} from "../../lib/fleet/fleet_names.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import type { BridgeReport } from "../../lib/fleet/bridge.ts";
import { startRunBridge } from "../../lib/fleet/run_bridge.ts";
import { acquireRunLock } from "../../lib/shared/run_lock.ts";
import { DEFAULT_VIEW } from "../../lib/shared/view.ts";
import { cliArgs } from "../_harness/cli.ts";
import { NATS_SERVER } from "../_harness/nats.ts";
import { median, progress, report } from "./_bench.ts";

/** The node name every fleet benchmark runs as. */
export const NODE = "m1";

/**
 * Whether `nats-server` is installed; when it is not, reports the row as
 * not measured (the table says so, and the target as missed).
 */
export function natsInstalled(measure: string, target: string): boolean {
  if (NATS_SERVER !== null) return true;
  report([{
    measure,
    baseline: "—",
    result: "not measured: nats-server is not installed",
    ratio: "—",
    target,
    met: false,
    note: "apt-get install nats-server (Debian's 2.9 has JetStream)",
  }]);
  return false;
}

/** A finished CLI process, timed from spawn to exit. */
export interface TimedCli {
  /** Wall time, spawn to exit (ms). */
  ms: number;
  /** When it exited (ms since the epoch). */
  exitedAt: number;
  /** User + system CPU time (ms), its workers' included. */
  cpuMs: number;
  /** Peak RSS (KiB). */
  rssKiB: number;
  /** The exit code. */
  code: number;
  /** Its stdout when kept, else empty. */
  stdout: Uint8Array;
  /** Its stderr, without `/usr/bin/time`'s line. */
  stderr: string;
}

/**
 * Runs `prompt_runner ARGS` under `/usr/bin/time`, stdout to /dev/null
 * unless `keep` (then read whole, as `| wc -l` would).
 */
export async function timeCli(
  args: string[],
  options: { keep?: boolean; denoFlags?: string[] } = {},
): Promise<TimedCli> {
  const start = performance.now();
  const output = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "PR_TIME %U %S %M",
      Deno.execPath(),
      ...cliArgs(args, options.denoFlags ?? []),
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: options.keep ? "piped" : "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  const exitedAt = Date.now();
  const stderr = new TextDecoder().decode(output.stderr);
  const time = /PR_TIME ([\d.]+) ([\d.]+) (\d+)\n?$/.exec(stderr);
  if (time === null) {
    throw new Error(`no figures from /usr/bin/time: ${stderr}`);
  }
  return {
    ms,
    exitedAt,
    cpuMs: (Number(time[1]) + Number(time[2])) * 1000,
    rssKiB: Number(time[3]),
    code: output.code,
    stdout: options.keep ? output.stdout : new Uint8Array(),
    stderr: stderr.slice(0, time.index).replace(
      /Command exited with non-zero status \d+\n$/,
      "",
    ),
  };
}

/** Throws with the process's stderr unless it exited 0. */
export function ok(what: string, run: TimedCli): TimedCli {
  if (run.code !== 0) {
    throw new Error(`${what} exited ${run.code}: ${run.stderr.trim()}`);
  }
  return run;
}

/** A connection to the fleet at `url`, for looking at what it holds. */
export async function benchLink(url: string): Promise<FleetLink> {
  return await openLink({
    url: parseFleetUrl(url),
    name: "prompt_runner bench",
    timeoutMs: 3_000,
  });
}

/** The fleet key (`<node>.<root>.<run_id>`) of a run of a state root. */
export async function fleetKey(
  stateRoot: string,
  runId: string,
  node = NODE,
): Promise<string> {
  return runName(
    node,
    await rootName(await Deno.realPath(stateRoot), null),
    runId,
  )
    .key;
}

/** The run's last event the fleet holds: its `seq` and when it was stored, or `null`. */
export async function fleetLast(
  link: FleetLink,
  key: string,
): Promise<{ seq: number; time: number } | null> {
  const last = await link.lastMessage(EVENTS_STREAM, eventsSubject(key));
  if (last === null) return null;
  const seq = Number(last.msgId?.slice(last.msgId.lastIndexOf(":") + 1));
  if (!Number.isInteger(seq)) throw new Error(`no seq in ${last.msgId}`);
  return { seq, time: last.time };
}

/**
 * Waits until `check` says yes, looking every 20 ms.
 *
 * @throws when it has not within `deadlineMs`, naming `what`.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  deadlineMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!await check()) {
    if (Date.now() > deadline) {
      throw new Error(`${what} did not happen within ${deadlineMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A state root's events file. */
export function eventsFile(stateRoot: string): string {
  return join(stateRoot, "control", "events.jsonl");
}

/** The last whole line of an events file, parsed, or `null` when it has none. */
export async function lastEvent(
  file: string,
): Promise<{ seq: number; at: string; type: string } | null> {
  const size = await Deno.stat(file).then((info) => info.size, () => 0);
  if (size === 0) return null;
  using handle = await Deno.open(file, { read: true });
  const length = Math.min(size, 64 * 1024);
  await handle.seek(size - length, Deno.SeekMode.Start);
  const bytes = new Uint8Array(length);
  let at = 0;
  while (at < length) {
    const n = await handle.read(bytes.subarray(at));
    if (n === null) break;
    at += n;
  }
  const text = new TextDecoder().decode(bytes.subarray(0, at));
  const end = text.lastIndexOf("\n");
  if (end < 0) return null;
  const line = text.slice(text.lastIndexOf("\n", end - 1) + 1, end);
  return JSON.parse(line);
}

/** `median (min–max)` of some figures, with `digits` decimals. */
export function spread(values: number[], digits = 0): string {
  return `${median(values).toFixed(digits)} (${
    Math.min(...values).toFixed(digits)
  }–${Math.max(...values).toFixed(digits)})`;
}

/** Whether two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The root name of the runs {@linkcode playFleetRun} plays. */
export const PLAYED_ROOT = "r-bench";

/** A stored event line of a played run (a message delta, about 230 bytes, or its end). */
export function eventLine(
  runId: string,
  seq: number,
  end = false,
): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      v: 1,
      seq,
      at: new Date().toISOString(),
      run_id: runId,
      prompt_id: end ? null : "01",
      attempt: end ? null : 1,
      type: end ? "run_finished" : "message_streamed",
      data: end
        ? { status: "completed", reason: null, prompts: { "01": "completed" } }
        : { delta: "Reading the ADR first, then the tests.", kind: "text" },
    }) + "\n",
  );
}

/** A live run played by hand, its bridge publishing it (see {@linkcode playFleetRun}). */
export interface PlayedRun {
  /** Its state root. */
  root: string;
  /** Its fleet key. */
  key: string;
  /** Its events file, open for appending. */
  file: Deno.FsFile;
  /** The next `seq` to append. */
  next: { seq: number };
  /** Appends `count` event lines in one write. */
  append(count: number): void;
  /** Appends its `run_finished`, closes its plane, and waits for its bridge to publish the rest. */
  finish(): Promise<BridgeReport | null>;
  /** Stops it, whatever is left unpublished, and removes its files. */
  close(): Promise<void>;
}

/**
 * A live run in `dir`, played as a runner would and published as `run
 * --fleet` publishes one: this process holds the run lock and the run's
 * control plane (its real snapshot, kept fresh), the run's bridge runs in
 * a worker (`startRunBridge`, as the runner starts it), and the caller
 * appends whole event lines, so a clock can start at the append.
 */
export async function playFleetRun(
  dir: string,
  url: string,
  runId: string,
): Promise<PlayedRun> {
  const root = join(dir, runId);
  await Deno.mkdir(root, { mode: 0o700 });
  const lock = await acquireRunLock(root, runId);
  const plane = await openPlane(root, {
    run_id: runId,
    packet: "bench",
    packet_dir: dir,
    state_root: root,
    view: { ...DEFAULT_VIEW },
    max_steers: 3,
    prompt_ids: ["01"],
    provider: "simulated",
    model: "simulated",
  });
  const bridge = startRunBridge({
    url: parseFleetUrl(url),
    stateRoot: root,
    packetDir: null,
    runId,
    node: NODE,
    root: PLAYED_ROOT,
    replicas: 1,
    warn: (message) => progress(`bridge: ${message}`),
  });
  const file = await Deno.open(eventsFile(root), {
    append: true,
    create: true,
    mode: 0o600,
  });
  const next = { seq: 1 };
  const write = (bytes: Uint8Array) => {
    let at = 0;
    while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
  };
  let closed = false;
  return {
    root,
    key: runName(NODE, PLAYED_ROOT, runId).key,
    file,
    next,
    append(count: number): void {
      const lines = [];
      for (let i = 0; i < count; i++) lines.push(eventLine(runId, next.seq++));
      const bytes = new Uint8Array(lines.reduce((n, l) => n + l.length, 0));
      let at = 0;
      for (const line of lines) {
        bytes.set(line, at);
        at += line.length;
      }
      write(bytes);
    },
    async finish(): Promise<BridgeReport | null> {
      write(eventLine(runId, next.seq++, true));
      await plane.close("completed");
      return await bridge.finish();
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await bridge.stop();
      await plane.abandon();
      file.close();
      await lock.release();
      await Deno.remove(root, { recursive: true });
    },
  };
}
