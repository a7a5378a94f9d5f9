/**
 * `prompt_runner watch` against real runs in another process: it exits 0
 * when the run completes, 6 when the run needs a person, 4 when the runner
 * is killed (or the run is not running and must be), 124 when the run goes
 * quiet past --progress-timeout; each last sample names its reason.
 */

import assert from "node:assert/strict";
import { LineReader, readAll } from "../_helpers/lines.ts";
import {
  readSnapshot,
  startRun,
  waitForSnapshot,
} from "../_helpers/live_run.ts";
import { runCli, spawnCli } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

function samples(stdout: string): Record<string, unknown>[] {
  return stdout.trim().split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l)
  );
}

Deno.test("watch prints a sample a second and exits 0 when the run completes", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(12, 100) },
  });
  await using run = startRun(packet.dir);
  await waitForSnapshot(
    packet.stateRoot,
    "the run",
    (s) => s.status === "running",
  );
  const watched = await runCli([
    "watch",
    packet.dir,
    "--json",
    "--require-running",
  ]);
  assert.equal(watched.code, 0, watched.stderr);
  const all = samples(watched.stdout);
  assert.ok(all.length >= 2, watched.stdout);
  assert.equal(all.at(-1)!.status, "completed");
  assert.ok(all.every((s) => s.violation === undefined));
  assert.ok(all.some((s) => s.status === "running" && s.prompt_id === "01"));
  assert.equal((await run.finish()).code, 0);
});

Deno.test("watch exits 6 (attention) when the run needs a person, naming the reason", async () => {
  await using packet = await makePacket({
    manifest: "budget: {max_cost_usd: 0.05}",
    prompts: {
      "01_a.prompt.md": promptFile(`simulate:
  attempts:
    - delay_ms: 150
      repeat: 12
      messages: ["spending"]
      usage: {input_tokens: 10, output_tokens: 1, cost_usd: 0.01}`),
    },
  });
  await using run = startRun(packet.dir);
  await waitForSnapshot(
    packet.stateRoot,
    "the run",
    (s) => s.status === "running",
  );
  const watched = await runCli(["watch", packet.dir, "--json"]);
  assert.equal(watched.code, 6, watched.stderr);
  const last = samples(watched.stdout).at(-1)!;
  assert.deepEqual(
    (last.violation as Record<string, unknown>).reason,
    "attention",
  );
  assert.equal(
    (last.attention as Record<string, unknown>).reason,
    "budget_exhausted",
  );
  assert.match(
    watched.stderr,
    /^error: watch: attention: budget exhausted on 01/m,
  );
  await run.finish();
});

Deno.test("watch exits 6 for an attention raised and cleared between two samples: the event stream keeps it", async () => {
  await using packet = await makePacket({
    prompts: {
      // Stalls of 0.2 s: each raised at the idle tick 1 s into a quiet
      // spell (limit 0.6 s), cleared by the event 1.2 s into it.
      "01_a.prompt.md": promptFile(`progress_timeout_ms: 600
simulate:
  attempts:
    - delay_ms: 1200
      messages: ["after a pause"]`),
      "02_b.prompt.md": longPrompt(6, 100),
    },
  });
  // The watch starts first: the run begins while it watches.
  const watcher = spawnCli(["watch", packet.dir, "--json"]);
  const stderr = readAll(watcher.stderr);
  const lines = new LineReader(watcher.stdout);
  const first = JSON.parse((await lines.next())!);
  assert.equal(first.status, "never_run");
  await using run = startRun(packet.dir);
  const rest = await lines.rest();
  const { code } = await watcher.status;
  assert.equal(code, 6, await stderr);
  const last = JSON.parse(rest.filter((l) => l !== "").at(-1)!);
  assert.equal(last.violation.reason, "attention");
  assert.equal(last.attention.reason, "stalled");
  assert.equal(last.attention.prompt_id, "01");
  assert.match(await stderr, /^error: watch: attention: stalled on 01/m);
  // The run itself went on: a stall is reported, never fatal, and cleared.
  const finished = await run.finish();
  assert.equal(finished.code, 0, finished.stderr);
  const snapshot = await readSnapshot(packet.stateRoot);
  assert.equal(snapshot?.attention, null);
});

Deno.test("watch exits 4 (not_running) when the runner is killed", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(200, 100) },
  });
  await using run = startRun(packet.dir);
  await waitForSnapshot(
    packet.stateRoot,
    "the run",
    (s) => s.status === "running",
  );
  const watcher = runCli(["watch", packet.dir, "--json"]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  run.child.kill("SIGKILL");
  const watched = await watcher;
  assert.equal(watched.code, 4, watched.stderr);
  const all = samples(watched.stdout);
  assert.equal(all[0]!.status, "running", "it watched the live run first");
  const last = all.at(-1)!;
  assert.equal(last.status, "runner_gone");
  assert.equal(
    (last.violation as Record<string, unknown>).reason,
    "not_running",
  );
  assert.match(watched.stderr, /not_running: the runner \(pid \d+\) is gone/);
});

Deno.test("watch --require-running exits 4 at once for a packet never run", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  const watched = await runCli(["watch", packet.dir, "--require-running"]);
  assert.equal(watched.code, 4);
  assert.match(watched.stdout, /never run/);
  assert.match(
    watched.stderr,
    /error: watch: not_running: the run is never run/,
  );
});

Deno.test("watch --progress-timeout exits 124 (progress_stale) when the run goes quiet", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`simulate:
  attempts:
    - delay_ms: 20000
      messages: ["slow"]`),
    },
  });
  await using _run = startRun(packet.dir);
  await waitForSnapshot(
    packet.stateRoot,
    "the run",
    (s) => s.status === "running",
  );
  const watched = await runCli([
    "watch",
    packet.dir,
    "--json",
    "--progress-timeout",
    "1.5",
  ]);
  assert.equal(watched.code, 124, watched.stderr);
  const last = samples(watched.stdout).at(-1)!;
  assert.equal(last.status, "running");
  assert.equal(
    (last.violation as Record<string, unknown>).reason,
    "progress_stale",
  );
  assert.ok(Number(last.last_event_age_ms) > 1500);
});

Deno.test("watch refuses a bad --progress-timeout and an extra argument with exit 2", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  const bad = await runCli(["watch", packet.dir, "--progress-timeout", "0"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--progress-timeout must be a positive number of seconds, found "0"/,
  );
  const extra = await runCli(["watch", packet.dir, "other"]);
  assert.equal(extra.code, 2);
  const help = await runCli(["watch", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /progress_stale/);
});
