/**
 * No agent is left behind: processes an agent CLI leaves (a setsid
 * grandchild, a grandchild holding its output, the whole CLI when its
 * runner is SIGKILLed) are stopped, and never keep a runner alive. Played
 * by the `leaves_behind` fake CLI (under the amp parser) and run by real
 * `prompt_runner run` processes; every process a test starts is killed
 * when it ends, however it ends.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { waitFor, within } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import {
  type FakeCli,
  fakeLines,
  leftPid,
  makeFakeCli,
} from "../_helpers/fake_cli/mod.ts";
import {
  descendantPids,
  processReaper,
  processStart,
} from "../_helpers/fake_cli/proc_tree.ts";

type Json = Record<string, unknown>;

const NO_RETRY =
  "recovery: {retry: {max_attempts: 0}, repair: {enabled: false}, resume_attempts: 0}";

/** A packet whose prompt 01 runs the `leaves_behind` fake in `mode`. */
async function leavingPacket(mode: string): Promise<
  Awaited<ReturnType<typeof makePacket>> & { fake: FakeCli }
> {
  const packet = await makePacket();
  const fake = await makeFakeCli(packet.root, "leaves_behind", {
    FAKE_LEAVE: mode,
  });
  await packet.writePrompt(
    "01_fake.prompt.md",
    promptFile(
      `provider: amp\nagent: {bin: ${JSON.stringify(fake.bin)}}\n${NO_RETRY}`,
    ),
  );
  return Object.assign(packet, { fake });
}

async function promptState(stateRoot: string): Promise<Json> {
  const state = JSON.parse(
    await Deno.readTextFile(join(stateRoot, "state.json")),
  );
  return state.prompts["01"] as Json;
}

async function transcript(stateRoot: string, attempt: number): Promise<string> {
  const entry = await promptState(stateRoot);
  const record = (entry.attempts as Json[]).find((a) => a.attempt === attempt);
  return await Deno.readTextFile(
    join(stateRoot, String(record?.transcript)),
  );
}

/** Waits for the pid the fake wrote of what it left behind. */
async function waitForLeft(fake: FakeCli): Promise<number> {
  return await waitFor("the fake's left-behind pid", () => leftPid(fake));
}

/** How many lines `who` (`agent`, `setsid`) with `pid` appended so far. */
async function linesOf(
  fake: FakeCli,
  who: string,
  pid: number,
): Promise<number> {
  return (await fakeLines(fake)).filter((l) => l === `${who} ${pid}`).length;
}

Deno.test("a setsid grandchild (output redirected) the CLI left when its turn ended normally is killed at the attempt's end, and the transcript names it", async () => {
  await using packet = await leavingPacket("setsid");
  await using reaper = processReaper();
  const done = await startRun(packet.dir).finish();
  const left = reaper.track(await waitForLeft(packet.fake));
  assert.equal(done.code, 0, done.stderr);
  assert.equal((await promptState(packet.stateRoot)).status, "completed");
  await waitFor(
    "the setsid grandchild to be gone",
    () => Promise.resolve(reaper.alive([left]).length === 0),
    15_000,
  );
  assert.match(
    await transcript(packet.stateRoot, 1),
    new RegExp(
      `killed 1 process\\(es\\) the amp CLI left running: ${left} \\(sleep\\)`,
    ),
  );
});

for (const stream of ["stdout", "stderr"] as const) {
  Deno.test(`a grandchild out of the runner's reach that holds the CLI's ${stream} never keeps the runner alive after the run completed`, async () => {
    await using packet = await leavingPacket(`holds_${stream}`);
    await using reaper = processReaper();
    await using run = startRun(packet.dir);
    const finished = await run.until((e) => e.type === "run_finished");
    reaper.track(await waitForLeft(packet.fake));
    assert.equal((finished.data as Json).status, "completed");
    const status = await within(
      run.child.status,
      30_000,
      "the runner to exit after run_finished",
    );
    assert.equal(status.code, 0);
    // It escaped every sweep: only the test's reaper ends it.
    assert.equal(reaper.alive().length, 1);
  });
}

/**
 * Starts a run of `packet`, waits until its agent works (and has left its
 * writing child), SIGKILLs the runner, and returns the agent's and the
 * child's pids, both tracked by `reaper`.
 */
async function killRunnerMidAttempt(
  packet: { dir: string; fake: FakeCli },
  reaper: ReturnType<typeof processReaper>,
): Promise<{ agent: number; child: number }> {
  const run = startRun(packet.dir);
  try {
    await run.until((e) => e.type === "tool_call_started");
    const [invocation] = await packet.fake.invocations();
    const agent = reaper.track(invocation!.pid);
    const child = reaper.track(await waitForLeft(packet.fake));
    for (const pid of descendantPids(agent)) reaper.track(pid);
    run.child.kill("SIGKILL");
    assert.equal((await run.finish()).signal, "SIGKILL");
    return { agent, child };
  } finally {
    await run[Symbol.asyncDispose]();
  }
}

/** Waits until `who`/`pid` appends a few more lines: it is alive and writing. */
async function waitForWriting(
  fake: FakeCli,
  who: string,
  pid: number,
): Promise<void> {
  const before = await linesOf(fake, who, pid);
  await waitFor(
    `${who} ${pid} to keep writing`,
    async () => (await linesOf(fake, who, pid)) >= before + 3,
  );
}

Deno.test("run --resume after a SIGKILLed runner stops the agent it left (SIGTERM ignored, so SIGKILL) and its setsid child before the new attempt starts, and says what it stopped", async () => {
  await using packet = await leavingPacket("keeps_running");
  await using reaper = processReaper();
  const { agent, child } = await killRunnerMidAttempt(packet, reaper);
  await waitForWriting(packet.fake, "agent", agent);
  await waitForWriting(packet.fake, "setsid", child);
  await using resumed = startRun(packet.dir, ["--resume"]);
  const done = await resumed.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(reaper.alive([agent, child]), []);
  // Nothing the old agent started wrote a line once the new one started.
  const invocations = await packet.fake.invocations();
  assert.equal(invocations.length, 2);
  const lines = await fakeLines(packet.fake);
  const newStart = lines.indexOf(`start ${invocations[1]!.pid}`);
  assert.ok(newStart > 0, lines.join("\n"));
  assert.deepEqual(
    lines.slice(newStart).filter((l) =>
      l === `agent ${agent}` || l === `setsid ${child}`
    ),
    [],
  );
  // Said on stderr, in the audit log, and in the killed attempt's transcript.
  const said = new RegExp(
    `stopped the amp CLI the previous runner left running \\(prompt 01, attempt 1, pid ${agent}\\)`,
  );
  assert.match(done.stderr, new RegExp(`^warning: ${said.source}`, "m"));
  for (const pid of [agent, child]) {
    assert.match(done.stderr, new RegExp(`\\b${pid} \\(`));
  }
  assert.match(done.stderr, /SIGKILL/);
  const logged =
    (await readJsonl(join(packet.stateRoot, "control", "log.jsonl")))
      .filter((e) => e.command === "agent_stopped");
  assert.equal(logged.length, 1);
  assert.equal(logged[0]!.prompt_id, "01");
  assert.equal(logged[0]!.attempt, 1);
  assert.equal(logged[0]!.author, "runner");
  const stopped = ((logged[0]!.params as Json).stopped as Json[]).map((p) =>
    p.pid
  );
  assert.ok(stopped.includes(agent) && stopped.includes(child), `${stopped}`);
  assert.match(await transcript(packet.stateRoot, 1), said);
  const entry = await promptState(packet.stateRoot);
  assert.deepEqual(
    (entry.attempts as Json[]).map((a) => a.status),
    ["interrupted", "completed"],
  );
});

Deno.test("run --resume stops the setsid child of an agent that died when its runner was SIGKILLed (left to init, out of any tree walk)", async () => {
  await using packet = await leavingPacket("orphan");
  await using reaper = processReaper();
  const { agent, child } = await killRunnerMidAttempt(packet, reaper);
  await waitFor(
    "the agent to die on its closed stdout",
    () => Promise.resolve(reaper.alive([agent]).length === 0),
  );
  await waitForWriting(packet.fake, "setsid", child);
  await using resumed = startRun(packet.dir, ["--resume"]);
  const done = await resumed.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(reaper.alive([child]), []);
  assert.match(
    done.stderr,
    new RegExp(`^warning: stopped .*\\b${child} \\(sh[,)]`, "m"),
  );
});

Deno.test("a pid the killed runner's agent had, now another process's (its start time differs), is never killed by a resume", async () => {
  await using packet = await leavingPacket("keeps_running");
  await using reaper = processReaper();
  const { agent, child } = await killRunnerMidAttempt(packet, reaper);
  // The agent's tree ends; an unrelated process takes over "its" pid (in
  // the record), as a recycled pid would.
  for (const pid of reaper.alive([agent, child])) Deno.kill(pid, "SIGKILL");
  await waitFor(
    "the old agent to be gone",
    () => Promise.resolve(reaper.alive([agent, child]).length === 0),
  );
  const stranger = new Deno.Command("sleep", {
    args: ["300"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    reaper.track(stranger.pid);
    const path = join(packet.stateRoot, "state.json");
    const state = JSON.parse(await Deno.readTextFile(path));
    const record = state.prompts["01"].attempts[0];
    assert.equal(record.agent.pid, agent);
    assert.notEqual(record.agent.pid_start, processStart(stranger.pid));
    record.agent.pid = stranger.pid;
    await Deno.writeTextFile(path, JSON.stringify(state));
    await using resumed = startRun(packet.dir, ["--resume"]);
    const done = await resumed.finish();
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(reaper.alive([stranger.pid]), [stranger.pid]);
    assert.doesNotMatch(done.stderr, /stopped/);
  } finally {
    stranger.kill("SIGKILL");
    await stranger.status;
  }
});

/**
 * Runs a shell command on the cgroup file system (Deno refuses `/sys`
 * short of `--allow-all`), returning its stdout, or `null` when it fails.
 */
function cgroupShell(script: string, ...args: string[]): string | null {
  const output = new Deno.Command("sh", {
    args: ["-c", script, "sh", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return output.success ? new TextDecoder().decode(output.stdout) : null;
}

const FREEZER_ROOT = "/sys/fs/cgroup/freezer";
/** Whether this machine has a cgroup v1 freezer the test may use. */
const FREEZER = cgroupShell('test -w "$1/tasks"', FREEZER_ROOT) !== null;
if (!FREEZER) {
  // deno-lint-ignore no-console -- a skipped test must be loud
  console.error(
    "\n!!! SKIPPED: no writable cgroup v1 freezer (root needed): the test of an agent that cannot be stopped was skipped.\n",
  );
}

/** A freezer cgroup of the test's own, thawed, emptied and removed at the end. */
function freezer(): AsyncDisposable & {
  add(pid: number): void;
  set(state: "FROZEN" | "THAWED"): void;
  state(): string;
} {
  const dir = `${FREEZER_ROOT}/prompt_runner_test_${Deno.pid}_${Date.now()}`;
  if (cgroupShell('mkdir "$1"', dir) === null) {
    throw new Error(`cannot make ${dir}`);
  }
  const set = (state: string): void => {
    cgroupShell('echo "$2" >"$1/freezer.state"', dir, state);
  };
  return {
    // A short-lived `sleep` may be gone already: nothing to freeze then.
    add: (pid) => void cgroupShell('echo "$2" >"$1/tasks"', dir, String(pid)),
    set,
    state: () => (cgroupShell('cat "$1/freezer.state"', dir) ?? "").trim(),
    async [Symbol.asyncDispose](): Promise<void> {
      set("THAWED");
      const tasks = () => (cgroupShell('cat "$1/tasks"', dir) ?? "").trim();
      for (const pid of tasks().split("\n").filter(Boolean)) {
        try {
          Deno.kill(Number(pid), "SIGKILL");
        } catch {
          // Gone.
        }
      }
      await waitFor(
        "the frozen processes to be gone",
        () => Promise.resolve(tasks() === ""),
      ).catch(() => {});
      cgroupShell('rmdir "$1"', dir);
    },
  };
}

Deno.test({
  name:
    "a resume whose killed runner's agent cannot be stopped (frozen: SIGKILL waits) refuses with exit 4 and starts no agent; once it can be, the resume stops it and continues",
  ignore: !FREEZER,
  async fn(): Promise<void> {
    await using packet = await leavingPacket("keeps_running");
    await using reaper = processReaper();
    const { agent, child } = await killRunnerMidAttempt(packet, reaper);
    await using frozen = freezer();
    for (const pid of [agent, child, ...descendantPids(agent)]) {
      frozen.add(pid);
    }
    frozen.set("FROZEN");
    // The v1 freezer stays FREEZING when a task could not be frozen on the
    // first pass (a busy machine: a task mid-fork or mid-exit); writing
    // FROZEN again makes the kernel try those tasks again.
    await waitFor("the agent to freeze", () => {
      const state = frozen.state();
      if (state === "FREEZING") frozen.set("FROZEN");
      return Promise.resolve(state === "FROZEN");
    });
    const refused = await startRun(packet.dir, ["--resume"]).finish();
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(
        `^error: Cannot start the run: the amp CLI the previous runner left running \\(prompt 01, attempt 1, pid ${agent}\\) could not be stopped: ${agent} \\(bash\\)`,
        "m",
      ),
    );
    assert.match(refused.stderr, /^hint: .*kill -KILL/m);
    assert.equal((await packet.fake.invocations()).length, 1);
    const entry = await promptState(packet.stateRoot);
    assert.equal((entry.attempts as Json[])[0]!.status, "running");
    frozen.set("THAWED");
    const resumed = await startRun(packet.dir, ["--resume"]).finish();
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(reaper.alive([agent, child]), []);
  },
});

Deno.test("an agent recorded on another host cannot be checked from here: the run says so and goes on, touching nothing on this host", async () => {
  await using packet = await leavingPacket("keeps_running");
  await using reaper = processReaper();
  const { agent } = await killRunnerMidAttempt(packet, reaper);
  const path = join(packet.stateRoot, "state.json");
  const state = JSON.parse(await Deno.readTextFile(path));
  state.prompts["01"].attempts[0].agent.host = "elsewhere.invalid";
  await Deno.writeTextFile(path, JSON.stringify(state));
  await using resumed = startRun(packet.dir, ["--resume"]);
  const done = await resumed.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.match(
    done.stderr,
    new RegExp(
      `^warning: cannot check the amp CLI the previous runner left running \\(prompt 01, attempt 1, pid ${agent}\\): it ran on host "elsewhere\\.invalid", not this one`,
      "m",
    ),
  );
  assert.deepEqual(reaper.alive([agent]), [agent]);
});
