import assert from "node:assert/strict";
import {
  AGENT_ID_VARIABLE,
  agentLeftovers,
  agentProcesses,
  parseProcStat,
  stopAgent,
} from "../../../lib/shared/process_tree.ts";
import {
  processReaper,
  processStart,
} from "../../_helpers/fake_cli/proc_tree.ts";
import { waitFor } from "../../_helpers/run_cli.ts";

/**
 * Starts `script` under `sh` in a process group of its own (as an agent
 * CLI runs), with `env` added, and returns its pid and the pids it prints
 * on its first line.
 */
async function startTree(
  script: string,
  env: Record<string, string> = {},
): Promise<{ child: Deno.ChildProcess; pid: number; printed: number[] }> {
  const child = new Deno.Command("sh", {
    args: ["-c", script],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    detached: true,
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return {
    child,
    pid: child.pid,
    printed: text.trim().split(/\s+/).filter(Boolean).map(Number),
  };
}

Deno.test("parseProcStat() reads pid, parent, group, start time and a name holding spaces and parentheses", () => {
  const line =
    "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
  assert.deepEqual(parseProcStat(line), {
    pid: 4242,
    ppid: 1,
    pgid: 4242,
    start: "987654",
    state: "S",
    name: "a (b) c",
  });
  assert.equal(parseProcStat("garbage"), null);
});

Deno.test("agentLeftovers() finds by the id in their environment what an agent left, in a session of its own and adopted by init, and nothing else", async () => {
  await using reaper = processReaper();
  const value = `test-${crypto.randomUUID()}`;
  const tree = await startTree(
    `setsid sh -c 'exec sleep 300' </dev/null >/dev/null 2>&1 & echo $!`,
    { [AGENT_ID_VARIABLE]: value },
  );
  const [tool] = tree.printed;
  reaper.track(tool!);
  await tree.child.status;
  const found = await agentLeftovers(`${AGENT_ID_VARIABLE}=${value}`);
  assert.deepEqual(found.map((e) => [e.pid, e.name]), [[tool!, "sleep"]]);
  assert.deepEqual(
    await agentLeftovers(`${AGENT_ID_VARIABLE}=${value}-other`),
    [],
  );
});

Deno.test("stopAgent() stops an agent that ignores SIGTERM with SIGKILL, and its child in a session of its own with SIGTERM", async () => {
  await using reaper = processReaper();
  const tree = await startTree(
    `setsid sh -c 'while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 & echo $!; trap '' TERM; while :; do sleep 0.05; done`,
  );
  try {
    reaper.track(tree.pid);
    const [tool] = tree.printed;
    reaper.track(tool!);
    const report = await stopAgent(
      { pid: tree.pid, pid_start: processStart(tree.pid), env: null },
      { graceMs: 500 },
    );
    assert.deepEqual(report.left, []);
    const how = new Map(report.stopped.map((s) => [s.process.pid, s.signal]));
    assert.equal(how.get(tree.pid), "SIGKILL");
    assert.equal(how.get(tool!), "SIGTERM");
    assert.equal(report.stopped[0]!.process.pid, tree.pid, "the agent first");
    assert.deepEqual(reaper.alive([tree.pid, tool!]), []);
  } finally {
    await reaper[Symbol.asyncDispose]();
    await tree.child.status;
  }
});

Deno.test("stopAgent() never touches a pid whose start time is not the recorded one (a reused pid), nor its group", async () => {
  await using reaper = processReaper();
  const tree = await startTree("sleep 300 & echo $!; wait");
  try {
    reaper.track(tree.pid);
    const [sleeper] = tree.printed;
    reaper.track(sleeper!);
    const start = processStart(tree.pid)!;
    const report = await stopAgent(
      { pid: tree.pid, pid_start: String(BigInt(start) + 1n), env: null },
      { graceMs: 200, killWaitMs: 200 },
    );
    assert.deepEqual(report, { stopped: [], left: [] });
    assert.deepEqual(
      reaper.alive([tree.pid, sleeper!]).sort(),
      [
        tree.pid,
        sleeper!,
      ].sort(),
    );
    // The recorded start time: the same processes are the agent's.
    const found = await agentProcesses({
      pid: tree.pid,
      pid_start: start,
      env: null,
    });
    assert.deepEqual(
      found.map((e) => e.pid).sort(),
      [tree.pid, sleeper!].sort(),
    );
  } finally {
    await reaper[Symbol.asyncDispose]();
    await tree.child.status;
  }
});

Deno.test("stopAgent() finds by its id a tool whose agent is gone, left to init in a session of its own", async () => {
  await using reaper = processReaper();
  const id = `${AGENT_ID_VARIABLE}=test-${crypto.randomUUID()}`;
  const tree = await startTree(
    `setsid sh -c 'exec sleep 300' </dev/null >/dev/null 2>&1 & echo $!`,
    { [AGENT_ID_VARIABLE]: id.split("=")[1]! },
  );
  const [tool] = tree.printed;
  reaper.track(tool!);
  const agentStart = null;
  await tree.child.status;
  assert.deepEqual(reaper.alive([tool!]), [tool!]);
  // `$!` is setsid's pid, which execs sh, which execs sleep: on a loaded
  // machine the pid can still be setsid or sh when the shell has printed it.
  await waitFor("the tool to have exec'd sleep", async () => {
    const ps = await new Deno.Command("ps", {
      args: ["-o", "comm=", "-p", String(tool)],
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(ps.stdout).trim() === "sleep";
  });
  const report = await stopAgent(
    { pid: tree.pid, pid_start: agentStart, env: id },
    { graceMs: 1000 },
  );
  assert.deepEqual(report.stopped.map((s) => s.process.pid), [tool!]);
  assert.equal(report.stopped[0]!.process.name, "sleep");
  await waitFor(
    "the tool to be gone",
    () => Promise.resolve(reaper.alive([tool!]).length === 0),
  );
  // Nothing else carries the id: an agent with nothing left is a no-op.
  assert.deepEqual(
    await stopAgent({ pid: tree.pid, pid_start: agentStart, env: id }),
    { stopped: [], left: [] },
  );
});
