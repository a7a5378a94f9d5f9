/**
 * Headless runs: a runner started fully detached (its own session, no
 * terminal, stdin from /dev/null, output to a file, SIGHUP ignored by
 * nohup, not a child of the test) is watched, re-viewed, steered and
 * amended by separate CLI processes, and ends by itself.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  cliCommandLine,
  continueRunner,
  killRunner,
  runnerAlive,
  type RunnerProcess,
  runnerState,
  waitForRunner,
} from "../_helpers/detached.ts";
import { readJsonl, waitForSnapshot } from "../_helpers/live_run.ts";
import { ROOT, runCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

const FINAL = ["completed", "failed", "blocked", "interrupted"];

/** `control status --json` from a separate process. */
async function controlStatus(dir: string): Promise<Record<string, unknown>> {
  const result = await runCli(["control", "status", dir, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/**
 * Starts `prompt_runner run PACKET` the way an operator detaches it:
 * `setsid sh -c 'nohup … > LOG 2>&1 < /dev/null &'`. The shell exits at
 * once, so the runner is reparented and the test never waits on it.
 */
async function startDetached(dir: string, log: string): Promise<void> {
  const env = Deno.env.toObject();
  // The output goes to a file: plain text without being told.
  delete env.NO_COLOR;
  const launcher = await new Deno.Command("setsid", {
    args: [
      "sh",
      "-c",
      `nohup ${cliCommandLine(["run", dir])} > "$1" 2>&1 < /dev/null &`,
      "sh",
      log,
    ],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(
    launcher.code,
    0,
    new TextDecoder().decode(launcher.stderr),
  );
}

Deno.test("a run started detached (setsid, nohup, no terminal, output to a file) is controlled by other processes to the end: status, view, steer, amend, SIGHUP ignored, completed, no process left", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(30, 30) },
  });
  const out = join(packet.root, "out.log");
  const control = join(packet.stateRoot, "control");
  await startDetached(packet.dir, out);
  let runner: RunnerProcess | null = null;
  try {
    runner = await waitForRunner(packet.stateRoot);
    const streaming = await waitForSnapshot(
      packet.stateRoot,
      "the detached run to stream",
      (s) => s.status === "running" && Number(s.tool_count) >= 1,
    );
    // Freeze the runner mid-attempt, so every command below lands before
    // the attempt ends however slowly the CLI processes start; each one
    // only needs its request (or amendment) durable.
    Deno.kill(runner.pid, "SIGSTOP");
    try {
      const events = await readJsonl(join(control, "events.jsonl"));
      assert.ok(
        !events.some((e) => e.type === "run_completed"),
        "the runner was stopped mid-attempt",
      );
      const status = await controlStatus(packet.dir);
      assert.equal(status.status, "running");
      assert.equal(status.run_id, runner.run_id);
      assert.equal(status.run_id, streaming.run_id);
      assert.equal(status.pid, runner.pid);
      assert.equal(status.prompt_id, "01");
      assert.equal((status.view as Record<string, string>).log_mode, "compact");

      const view = await runCli([
        "control",
        "view",
        packet.dir,
        "--log-mode",
        "verbose",
        "--author",
        "ada",
      ]);
      assert.equal(view.code, 0, view.stderr);
      const steer = await runCli([
        "control",
        "steer",
        packet.dir,
        "Keep the notes short",
        "--author",
        "ada",
      ]);
      assert.equal(steer.code, 0, steer.stderr);
      const amend = await runCli([
        "control",
        "amend",
        packet.dir,
        "01",
        "--add-file",
        "README.md",
        "--reason",
        "the readme must stay",
        "--author",
        "ada",
      ]);
      assert.equal(amend.code, 0, amend.stderr);
      assert.equal(await runnerState(runner), "T", "the runner stayed stopped");
    } finally {
      continueRunner(runner);
    }

    // nohup left SIGHUP ignored: a hangup must not end the run.
    const before = Number(
      (await waitForSnapshot(
        packet.stateRoot,
        "the view applied",
        (s) => (s.view as Record<string, string>).log_mode === "verbose",
      )).event_count,
    );
    Deno.kill(runner.pid, "SIGHUP");
    await waitForSnapshot(
      packet.stateRoot,
      "events after the hangup",
      (s) => Number(s.event_count) > before || s.status !== "running",
    );

    const final = await waitFor("the run to finish", async () => {
      const status = await controlStatus(packet.dir);
      return FINAL.includes(String(status.status)) ? status : null;
    }, 60_000);
    assert.equal(final.status, "completed");
    assert.equal(final.steer_count, 1);
    assert.deepEqual(final.view, {
      log_mode: "verbose",
      tool_output: "summary",
      thinking: "show",
      diff: "stat",
    });

    // No runner left: the lock is released and the process is gone.
    await waitFor(
      "the runner to exit",
      async () => !(await runnerAlive(runner!)),
    );
    await assert.rejects(
      Deno.lstat(join(packet.stateRoot, "run.lock")),
      Deno.errors.NotFound,
    );

    // Each command's log entry.
    const log = await readJsonl(join(control, "log.jsonl"));
    assert.ok(
      log.every((e) => e.run_id === runner!.run_id && e.author === "ada"),
    );
    // The amendment is logged by its client at once; the runner logs the
    // others when it processes them, after it was continued.
    assert.deepEqual(
      log.map((e) => `${e.command} ${e.outcome}`),
      ["amend applied", "set_view applied", "steer accepted", "steer applied"],
      JSON.stringify(log),
    );
    const setView = log.find((e) => e.command === "set_view")!;
    assert.deepEqual(setView.params, { log_mode: "verbose" });
    const amendEntry = log.find((e) => e.command === "amend")!;
    assert.equal(amendEntry.reason, "the readme must stay");

    // The intervention and the amendment.
    const interventions = await readJsonl(
      join(packet.stateRoot, "interventions", "01.jsonl"),
    );
    assert.equal(interventions.length, 1);
    assert.equal(interventions[0]!.text, "Keep the notes short");
    assert.equal(interventions[0]!.author, "ada");
    assert.equal(interventions[0]!.run_id, runner.run_id);
    const amendments = await readJsonl(
      join(packet.stateRoot, "amendments", "01.jsonl"),
    );
    assert.equal(amendments.length, 1);
    assert.equal(amendments[0]!.clause, "files_exist");
    assert.deepEqual(amendments[0]!.entries, ["README.md"]);
    assert.equal(amendments[0]!.reason, "the readme must stay");
    assert.equal(amendments[0]!.phase, "pre_verify");

    // The amended contract was enforced, and the prompt records both.
    const events = await readJsonl(join(control, "events.jsonl"));
    const verified = events.filter((e) => e.type === "verification_finished");
    assert.equal(verified.length, 1);
    const items = (verified[0]!.data as { items: Record<string, string>[] })
      .items;
    assert.ok(
      items.some((i) =>
        i.clause === "files_exist" && i.label === "README.md" &&
        i.status === "pass"
      ),
      JSON.stringify(items),
    );
    const last = events.at(-1)!;
    assert.equal(last.type, "run_finished");
    assert.equal((last.data as Record<string, unknown>).status, "completed");
    const state = JSON.parse(
      await Deno.readTextFile(join(packet.stateRoot, "state.json")),
    );
    const result = state.prompts["01"];
    assert.equal(result.status, "completed");
    assert.equal(result.steered, true);
    assert.equal(result.steer_count, 1);
    assert.equal(result.amended, true);

    // The output file: plain text, compact until the view changed, verbose
    // after, the steer and the end in it, nothing on stderr.
    const text = await Deno.readTextFile(out);
    assert.ok(!text.includes("\x1b"), "no escape codes in a file");
    const lines = text.trimEnd().split("\n");
    const firstVerbose = lines.findIndex((l) => l.startsWith("["));
    assert.ok(firstVerbose > 0, text);
    assert.ok(lines.slice(0, firstVerbose).includes(">> working on it"));
    assert.ok(lines.slice(0, firstVerbose).every((l) => !l.startsWith("[")));
    const steered = lines.findIndex((l) => l.startsWith("[prompt_steered]"));
    assert.ok(steered >= firstVerbose, text);
    assert.match(lines[steered]!, /text="Keep the notes short" author=ada /);
    assert.ok(
      lines.includes(
        '[run_finished] status=completed prompts={"01":"completed"}',
      ),
      text,
    );
    assert.match(lines.at(-1)!, /^--- \d+ events, \d+ tools ---$/);
    assert.ok(
      lines.every((l) => !/^(error|warning|hint):/.test(l)),
      text,
    );
  } finally {
    if (runner !== null) await killRunner(runner);
  }
});
