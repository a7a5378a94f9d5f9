/**
 * The dashboard fuzz's packet (a prompt paced like an agent) and its runs:
 * one run to the end, the events per second of its work prompt, and the
 * id of the run a runner started.
 *
 * @module
 */

import { join } from "node:path";
import { isEvent } from "../_audit/mod.ts";
import { cliArgs } from "../_harness/cli.ts";
import { sleep } from "../_harness/mod.ts";
import { writePacedPacket } from "../_harness/paced_packet.ts";

const decoder = new TextDecoder();

/** Events a second the simulated agent writes (an event every 5 ms). */
export const DELAY_MS = 5;

/** A packet: a wait (the fuzz begins), then `rounds` rounds paced like an agent. */
export async function writePacket(
  dir: string,
  rounds: number,
): Promise<string> {
  return await writePacedPacket(join(dir, "packet"), {
    name: "fuzz-dashboard",
    body: "The dashboard under fuzz.\n",
    waitMs: 1500,
    delayMs: DELAY_MS,
    rounds,
  });
}

/** The work prompt's events a second, from the run's own event stamps. */
async function eventsPerSecond(stateRoot: string): Promise<number> {
  const events = (await Deno.readTextFile(
    join(stateRoot, "control", "events.jsonl"),
  )).split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const work = events.filter((e) => e.prompt_id === "02");
  const last = events.at(-1);
  if (work.length < 2 || !isEvent(last, "run_finished")) {
    throw new Error("the run did not finish its work prompt");
  }
  const ms = Date.parse(work.at(-1).at) - Date.parse(work[0].at);
  return work.length / (ms / 1000);
}

/** Runs the packet once; its work prompt's events a second. */
export async function runOnce(
  packet: string,
  stateRoot: string,
): Promise<number> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: cliArgs(["run", packet]),
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `the run exited ${output.code}: ${decoder.decode(output.stderr)}`,
    );
  }
  return await eventsPerSecond(stateRoot);
}

/** The run id of the state root's snapshot, or `""` before any run. */
export async function runIdOf(stateRoot: string): Promise<string> {
  try {
    return JSON.parse(
      await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
    ).run_id ?? "";
  } catch {
    return "";
  }
}

/** The run id the state root's snapshot names, once a run has started. */
export async function startedRun(
  stateRoot: string,
  before: string,
): Promise<string> {
  for (let i = 0; i < 600; i++) {
    try {
      const snapshot = JSON.parse(
        await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
      );
      if (snapshot.run_id && snapshot.run_id !== before) return snapshot.run_id;
    } catch {
      // Not yet written.
    }
    await sleep(20);
  }
  throw new Error("no run started");
}
