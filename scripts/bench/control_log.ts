#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * `control log --json | tail -1` on a state root with a long history
 * (100,000 log entries of 100 earlier runs, whose event streams are in the
 * archive) beside the same on a fresh root holding only the current run.
 * Both roots hold the same current run and its entries, and the bench checks
 * that both print the same line. Medians of {@linkcode REPEATS} runs,
 * interleaved.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid scripts/bench/control_log.ts [--json]
 *
 * @module
 */

import { join } from "node:path";
import { defaultStateRoot } from "../../lib/workspace/mod.ts";
import {
  type BenchRow,
  CLI_PERMISSIONS,
  MAIN,
  median,
  progress,
  ratio,
  report,
} from "./_bench.ts";

const REPEATS = 21;
const OLD_RUNS = 100;
const OLD_ENTRIES = 100_000;
const EVENTS_PER_OLD_RUN = 1_000;
const TARGET = 1.2;

function logLine(runId: string, at: number, n: number): string {
  return JSON.stringify({
    v: 1,
    at: new Date(at).toISOString(),
    run_id: runId,
    request_id: `20261130T000000000Z-${runId}-${n}`,
    command: n % 5 === 0 ? "steer" : "set_view",
    params: n % 5 === 0
      ? { text: "Keep the notes under ten lines, please" }
      : { log_mode: "verbose", diff: "stat" },
    author: "bench",
    outcome: n % 7 === 0 ? "rejected" : "applied",
    reason: n % 7 === 0 ? "the steer budget (3) is spent" : null,
    prompt_id: "01",
    attempt: 1,
  }) + "\n";
}

/** A packet run once, so its state root holds a finished current run. */
async function makeRunPacket(): Promise<{ dir: string; root: string }> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_log_" });
  await Deno.mkdir(join(dir, "prompts"));
  await Deno.writeTextFile(
    join(dir, "prompt_runner_packet.md"),
    "---\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "01_a.prompt.md"),
    '---\nsimulate:\n  attempts:\n    - messages: ["done"]\n---\nWork.\n',
  );
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...CLI_PERMISSIONS, MAIN, "run", dir],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `The setup run failed: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return { dir, root: defaultStateRoot(dir) };
}

/** The current run's id and its first event's time. */
async function currentRun(root: string): Promise<{ id: string; at: number }> {
  const snapshot = JSON.parse(
    await Deno.readTextFile(join(root, "control", "snapshot.json")),
  );
  const first = JSON.parse(
    (await Deno.readTextFile(join(root, "control", "events.jsonl")))
      .split("\n")[0]!,
  );
  return { id: snapshot.run_id, at: Date.parse(first.at) };
}

/** Appends the current run's own entries (the same in both roots). */
async function addCurrentEntries(
  root: string,
  run: { id: string; at: number },
): Promise<void> {
  let text = "";
  for (let n = 1; n <= 20; n++) text += logLine(run.id, run.at + n * 10, n);
  await Deno.writeTextFile(join(root, "control", "log.jsonl"), text, {
    append: true,
    mode: 0o600,
  });
}

/** Gives a root a long history: old runs' log entries and archived streams. */
async function addHistory(root: string, run: { at: number }): Promise<void> {
  const control = join(root, "control");
  const log = join(control, "log.jsonl");
  const current = await Deno.readTextFile(log).catch(() => "");
  const perRun = OLD_ENTRIES / OLD_RUNS;
  const file = await Deno.open(log, { write: true, truncate: true });
  const encoder = new TextEncoder();
  try {
    for (let r = 0; r < OLD_RUNS; r++) {
      const id = `20261101T000000000Z-old${String(r).padStart(3, "0")}`;
      const start = run.at - (OLD_RUNS - r) * 3_600_000;
      let text = "";
      for (let n = 0; n < perRun; n++) text += logLine(id, start + n * 1000, n);
      await file.write(encoder.encode(text));
      let events = "";
      for (let seq = 1; seq <= EVENTS_PER_OLD_RUN; seq++) {
        events += JSON.stringify({
          v: 1,
          seq,
          at: new Date(start + seq).toISOString(),
          run_id: id,
          prompt_id: "01",
          attempt: 1,
          type: "message_streamed",
          data: { delta: "working on it", kind: "text" },
        }) + "\n";
      }
      await Deno.writeTextFile(join(control, "events", `${id}.jsonl`), events, {
        mode: 0o600,
      });
    }
    await file.write(encoder.encode(current));
  } finally {
    file.close();
  }
}

async function timeLog(dir: string): Promise<{ ms: number; line: string }> {
  const command = [
    Deno.execPath(),
    "run",
    ...CLI_PERMISSIONS,
    MAIN,
    "control",
    "log",
    "--json",
  ].map((word) => `'${word}'`).join(" ");
  const started = performance.now();
  const output = await new Deno.Command("sh", {
    args: ["-c", `${command} | tail -1`],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  const stderr = new TextDecoder().decode(output.stderr);
  if (!output.success || stderr !== "") {
    throw new Error(`control log failed: ${stderr}`);
  }
  return { ms, line: new TextDecoder().decode(output.stdout) };
}

progress("setting up a fresh root and a big one…");
const fresh = await makeRunPacket();
const big = await makeRunPacket();
try {
  const freshRun = await currentRun(fresh.root);
  const bigRun = await currentRun(big.root);
  // The same entries in both, stamped after both runs started.
  const stamp = Math.max(freshRun.at, bigRun.at);
  await addCurrentEntries(fresh.root, { id: freshRun.id, at: stamp });
  await addCurrentEntries(big.root, { id: bigRun.id, at: stamp });
  await addHistory(big.root, bigRun);
  const size = (await Deno.stat(join(big.root, "control", "log.jsonl"))).size;
  progress(`big root: log.jsonl ${(size / 1e6).toFixed(1)} MB`);
  const times = { fresh: [] as number[], big: [] as number[] };
  let freshLine = "";
  let bigLine = "";
  await timeLog(fresh.dir);
  await timeLog(big.dir);
  for (let round = 1; round <= REPEATS; round++) {
    const a = await timeLog(fresh.dir);
    const b = await timeLog(big.dir);
    times.fresh.push(a.ms);
    times.big.push(b.ms);
    freshLine = a.line;
    bigLine = b.line;
    progress(
      `round ${round}/${REPEATS}: fresh ${a.ms.toFixed(0)} ms, big ${
        b.ms.toFixed(0)
      } ms`,
    );
  }
  // The two roots hold different run ids: compare the lines without them.
  const same = freshLine.replaceAll(freshRun.id, "ID") ===
      bigLine.replaceAll(bigRun.id, "ID") && freshLine !== "";
  const baseline = median(times.fresh);
  const figure = median(times.big);
  const rows: BenchRow[] = [{
    measure: `control log --json | tail -1, ${
      OLD_ENTRIES / 1000
    }k log entries + ${OLD_RUNS} archived runs`,
    baseline: `fresh root: ${baseline.toFixed(0)} ms`,
    result: `${figure.toFixed(0)} ms`,
    ratio: ratio(figure, baseline),
    target: `≤ ${TARGET}×`,
    met: same && figure / baseline <= TARGET,
    ...(same ? {} : { note: "the two roots printed different lines" }),
  }];
  report(rows);
} finally {
  await Deno.remove(fresh.dir, { recursive: true });
  await Deno.remove(big.dir, { recursive: true });
}
