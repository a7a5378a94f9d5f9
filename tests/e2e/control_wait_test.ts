/**
 * `control view|steer|amend|relax --wait [--timeout S]` across processes: a
 * runner in one process, the CLI waiting in another, exiting by the
 * request's final outcome (0 applied, 4 rejected, 5 the run ended first,
 * 124 the time passed).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runEndedReason } from "../../lib/control/_run_end_reason.ts";
import { acquireRunLock } from "../../lib/shared/run_lock.ts";
import { readAll } from "../_helpers/lines.ts";
import { listDir, readJsonl, startRun } from "../_helpers/live_run.ts";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { makeControlRoot, promptStart } from "../_helpers/plane.ts";
import { runCli, spawnCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** The NDJSON lines of a command's stdout. */
function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout.split("\n").filter((line) => line !== "").map((line) =>
    JSON.parse(line)
  );
}

/** Waits until a request file waits in `requests/`, and returns its id. */
async function requestWaiting(stateRoot: string): Promise<string> {
  const name = await waitFor("a request in requests/", async () => {
    const names = await listDir(join(stateRoot, "control", "requests"));
    return names.find((n) => n.endsWith(".json") && !n.startsWith("."));
  });
  return name.slice(0, -".json".length);
}

/** A CLI process's exit code and output, once it ends. */
async function ended(
  child: Deno.ChildProcess,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [status, stdout, stderr] = await Promise.all([
    child.status,
    readAll(child.stdout),
    readAll(child.stderr),
  ]);
  return { code: status.code, stdout, stderr };
}

Deno.test("control view --wait exits 0 once the view is applied: --json prints the applied set_view entry as one NDJSON line, the human form prints it as control log does", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(60) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const json = await runCli([
    "control",
    "view",
    packet.dir,
    "--thinking",
    "hide",
    "--author",
    "ada",
    "--wait",
    "--json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.stderr, "");
  const lines = jsonLines(json.stdout);
  assert.equal(lines.length, 1, json.stdout);
  const [entry] = lines;
  assert.equal(entry!.command, "set_view");
  assert.equal(entry!.outcome, "applied");
  assert.equal(entry!.author, "ada");
  assert.deepEqual(entry!.params, { thinking: "hide" });
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(
    log.find((e) => e.request_id === entry!.request_id),
    entry,
    "the entry as the log holds it",
  );

  const human = await runCli([
    "control",
    "view",
    packet.dir,
    "--diff",
    "full",
    "--wait",
    "--timeout",
    "60",
  ]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(
    human.stdout,
    /^Requested diff=full for run \S+ \(request \S+\); waiting for its outcome\n\S+ {2}applied {3}set_view \{"diff":"full"\} {2}by \S+ on 01\/1\n$/,
  );
});

Deno.test("control steer --wait exits 0 only once the lane delivers the steer, not at accepted: on the stdin lane and on the resume lane", async () => {
  const stdinPrompt = longPrompt(40, 40).replace(
    "simulate:\n",
    "simulate:\n  lane: stdin\n",
  );
  await using onStdin = await makePacket({
    prompts: { "01_long.prompt.md": stdinPrompt },
  });
  await using onResume = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(40, 40) },
  });
  await using a = startRun(onStdin.dir);
  await using b = startRun(onResume.dir);
  await a.until((e) => e.type === "run_started");
  await b.until((e) => e.type === "run_started");
  for (
    const [packet, delivery] of [
      [onStdin, "send_input"],
      [onResume, "interrupt_and_resume"],
    ] as const
  ) {
    const result = await runCli([
      "control",
      "steer",
      packet.dir,
      "keep",
      "it",
      "short",
      "--wait",
      "--json",
    ]);
    assert.equal(result.code, 0, result.stderr);
    const [entry, ...more] = jsonLines(result.stdout);
    assert.deepEqual(more, []);
    assert.equal(entry!.command, "steer");
    assert.equal(entry!.outcome, "applied");
    assert.equal((entry!.params as { delivery: string }).delivery, delivery);
    const log = await readJsonl(
      join(packet.stateRoot, "control", "log.jsonl"),
    );
    assert.deepEqual(
      log.filter((e) => e.request_id === entry!.request_id).map((e) =>
        e.outcome
      ),
      ["accepted", "applied"],
    );
    const [record] = await readJsonl(
      join(packet.stateRoot, "interventions", "01.jsonl"),
    );
    assert.equal(record?.text, "keep it short", "delivered before the exit");
  }
});

Deno.test("control steer --wait exits 4 with the reason on stderr: a steer beyond recovery.max_steers, and one for a prompt that is not running", async () => {
  await using packet = await makePacket({
    manifest: "  max_steers: 1",
    prompts: { "01_long.prompt.md": longPrompt(60) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const steerWait = (...words: string[]) =>
    runCli(["control", "steer", packet.dir, ...words, "--wait"]);
  const first = await steerWait("mind", "the", "tests");
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, / applied {3}steer /);

  const over = await steerWait("one", "more", "--json");
  assert.equal(over.code, 4, over.stderr);
  assert.match(
    over.stderr,
    /^error: Request \S+ was rejected: steer budget spent: 1\/1 for prompt 01 in this run \(raise recovery\.max_steers to allow more\)\n$/,
  );
  const [refused] = jsonLines(over.stdout);
  assert.equal(refused!.outcome, "rejected");
  assert.deepEqual(refused!.params, { text: "one more" });

  const elsewhere = await steerWait("for", "later", "--prompt", "02");
  assert.equal(elsewhere.code, 4, elsewhere.stderr);
  assert.match(
    elsewhere.stderr,
    /^error: Request \S+ was rejected: the steer is for prompt 02, but prompt 01 is running\n$/,
  );
  assert.match(elsewhere.stdout, / rejected {2}steer \{"text":"for later"\} /);
});

Deno.test("control steer --wait exits 5 when the runner dies before it takes the steer", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(200) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "tool_call_started");
  // A stopped runner still holds its lock, so the steer is sent; it is
  // never taken.
  run.child.kill("SIGSTOP");
  const waiter = spawnCli([
    "control",
    "steer",
    packet.dir,
    "too",
    "late",
    "--wait",
  ]);
  const requestId = await requestWaiting(packet.stateRoot);
  run.child.kill("SIGKILL");
  const result = await ended(waiter);
  assert.equal(result.code, 5, result.stderr);
  assert.match(
    result.stderr,
    new RegExp(
      `^error: Request ${requestId} was not applied: run \\S+ ended first \\(The runner of run \\S+ \\(pid \\d+\\) is gone: it stopped without finishing the run\\)\\nhint: `,
    ),
  );
  assert.match(result.stdout, /^Queued steer for run \S+ \(request \S+\); /);
});

Deno.test("control view --wait exits 5 when the run ends with the request still waiting, printing the refusal the run logged as it closed", async () => {
  await using root = await makeControlRoot();
  // The runner is this process: its plane and its run lock.
  const plane = await root.open("run-w");
  const lock = await acquireRunLock(root.stateRoot, "run-w");
  try {
    await plane.promptStarted(promptStart());
    const waiter = spawnCli([
      "control",
      "view",
      root.stateRoot,
      "--thinking",
      "hide",
      "--wait",
      "--json",
    ]);
    const requestId = await requestWaiting(root.stateRoot);
    await plane.close("completed");
    await lock.release();
    const result = await ended(waiter);
    assert.equal(result.code, 5, result.stderr);
    const [entry, ...more] = jsonLines(result.stdout);
    assert.deepEqual(more, []);
    assert.equal(entry!.request_id, requestId);
    assert.equal(entry!.outcome, "rejected");
    assert.equal(entry!.reason, runEndedReason("completed"));
    assert.match(
      result.stderr,
      /^error: Request \S+ was not applied: run run-w ended first \(the run ended \(completed\) before the request was applied\)\n/,
    );
  } finally {
    await lock.release();
    await plane.close("completed");
  }
});

Deno.test("control view --wait --timeout exits 124 while the runner is stopped, printing no entry; the request is applied once the runner goes on", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(15, 40) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  run.child.kill("SIGSTOP");
  const result = await runCli([
    "control",
    "view",
    packet.dir,
    "--tool-output",
    "full",
    "--wait",
    "--timeout",
    "0.5",
    "--json",
  ]);
  run.child.kill("SIGCONT");
  assert.equal(result.code, 124, result.stderr);
  assert.equal(result.stdout, "");
  const match =
    /^error: Request (\S+) has no final outcome after 0\.5 s: it is pending, not taken by the runner yet\nhint: /
      .exec(result.stderr);
  assert.ok(match, result.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(
    log.filter((e) => e.request_id === match[1]).map((e) => e.outcome),
    ["applied"],
  );
});

Deno.test("a bad --timeout exits 2 naming it, and --timeout without --wait exits 2, before anything is written", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  const commands = [
    ["view", packet.dir, "--thinking", "hide"],
    ["steer", packet.dir, "hello", "there"],
    ["amend", packet.dir, "01", "--add-file", "X.md", "--reason", "r"],
    ["relax", packet.dir, "01", "--drop", "files_exist", "--reason", "r"],
  ];
  for (const args of commands) {
    for (const bad of ["abc", "0", "-3", "1e3"]) {
      const result = await runCli([
        "control",
        ...args,
        ...(args[0] === "relax" ? ["--confirm"] : []),
        "--wait",
        `--timeout=${bad}`,
      ]);
      assert.equal(result.code, 2, `${args[0]} ${bad}: ${result.stderr}`);
      assert.match(
        result.stderr,
        new RegExp(
          `^error: --timeout must be a positive number of seconds, found "${bad}"\\n`,
        ),
      );
    }
    const alone = await runCli(["control", ...args, "--timeout", "5"]);
    assert.equal(alone.code, 2, alone.stderr);
    assert.match(alone.stderr, /^error: --timeout goes with --wait\n/);
  }
  assert.deepEqual(await listDir(packet.stateRoot), []);
});

Deno.test("control amend and relax --wait exit 0 at once, printing the entry the amendment was logged with", async () => {
  await using packet = await makePacket({
    git: false,
    prompts: {
      "01_notes.prompt.md": promptFile("verify: {files_exist: [NOTES.md]}"),
    },
  });
  const amended = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "CHANGES.md",
    "--reason",
    "the notes name it",
    "--author",
    "ada",
    "--wait",
    "--json",
  ]);
  assert.equal(amended.code, 0, amended.stderr);
  const lines = jsonLines(amended.stdout);
  assert.equal(lines.length, 1);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(lines[0], log.at(-1));
  assert.equal(lines[0]!.command, "amend");
  assert.equal(lines[0]!.outcome, "applied");

  const relaxed = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--drop",
    "files_exist",
    "--reason",
    "no notes after all",
    "--confirm",
    "--wait",
  ]);
  assert.equal(relaxed.code, 0, relaxed.stderr);
  assert.match(
    relaxed.stdout,
    /^Relaxed prompt 01 \(pre_verify\): dropped files_exist\n.*\n\S+ {2}applied {3}relax \{"clause":"files_exist",.*— no notes after all\n$/,
  );
});

Deno.test({
  name:
    "over a fleet, control view --wait exits 0 once applied and control steer --wait for a prompt not running exits 4",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const url = servers.url();
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(100, 40) },
    });
    await using run = startRun(packet.dir, [
      "--fleet",
      url,
      "--fleet-node",
      "m1",
      "--run-id",
      "run-f",
    ]);
    await run.until((e) => e.type === "tool_call_started");
    const viewed = await waitFor("the fleet to take the view", async () => {
      const result = await runCli([
        "control",
        "view",
        "fleet:run-f",
        "--thinking",
        "hide",
        "--fleet",
        url,
        "--wait",
        "--timeout",
        "60",
        "--json",
      ]);
      // The run shows in the fleet a moment after it starts.
      return result.code === 3 ? null : result;
    });
    assert.equal(viewed.code, 0, viewed.stderr);
    const [entry] = jsonLines(viewed.stdout);
    assert.equal(entry!.command, "set_view");
    assert.equal(entry!.outcome, "applied");

    const steered = await runCli([
      "control",
      "steer",
      "fleet:run-f",
      "not",
      "now",
      "--prompt",
      "02",
      "--fleet",
      url,
      "--wait",
      "--timeout",
      "60",
    ]);
    assert.equal(steered.code, 4, steered.stderr);
    assert.match(
      steered.stderr,
      /^error: Request \S+ was rejected: the steer is for prompt 02, but prompt 01 is running\n$/,
    );
  },
});
