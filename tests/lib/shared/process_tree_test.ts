import assert from "node:assert/strict";
import {
  AGENT_ID_VARIABLE,
  agentLeftovers,
  parseProcStat,
} from "../../../lib/shared/process_tree.ts";
import { processReaper } from "../../_helpers/fake_cli/proc_tree.ts";

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
