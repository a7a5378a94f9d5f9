import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import {
  CLI_PERMISSIONS,
  ROOT,
  spawnCli,
  waitFor,
} from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

// Long enough that only an early stop ends it before a test gives up.
const SLOW = promptFile(`simulate:
  attempts:
    - delay_ms: 100
      repeat: 600
      messages: ["still working on it"]`);

Deno.test("control events of a run whose runner is SIGKILLed exits 5 saying the runner is gone", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const runner = spawnCli(["run", packet.dir, "--json"]);
  const runLines = new LineReader(runner.stdout);
  await runLines.until((l) => l.includes('"message_streamed"'));
  const follower = spawnCli(["control", "events", packet.dir, "--json"]);
  const followLines = new LineReader(follower.stdout);
  await followLines.until((l) => l.includes('"message_streamed"'));
  runner.kill("SIGKILL");
  await runner.status;
  await runLines.rest();
  await readAll(runner.stderr);
  const [status, stderr] = await Promise.all([
    follower.status,
    readAll(follower.stderr),
  ]);
  await followLines.rest();
  assert.equal(status.code, 5, stderr);
  assert.match(
    stderr,
    new RegExp(`^error: The runner of run .* \\(pid ${runner.pid}\\) is gone`),
  );
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("followers probing the run lock never make a starting runner fail to take it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_probe_" });
  try {
    const root = join(dir, "root");
    await Deno.mkdir(root, { mode: 0o700 });
    const lock = JSON.stringify(join(ROOT, "lib", "shared", "run_lock.ts"));
    const prober = join(dir, "prober.ts");
    await Deno.writeTextFile(
      prober,
      `import { readRunLock } from ${lock};
const [root, stop, ready, slow] = Deno.args as [string, string, string, string];
let probes = 0;
for (;;) {
  try { await Deno.lstat(stop); break; } catch { /* go on */ }
  await readRunLock(root).catch(() => null);
  if (slow === "slow") {
    // A probe slowed down as far as it can be: its shared lock held a while.
    try {
      using file = await Deno.open(root + "/run.lock");
      if (await file.tryLock(false)) await new Promise((r) => setTimeout(r, 20));
    } catch { /* no lock file this instant */ }
    await new Promise((r) => setTimeout(r, 5));
  }
  if (++probes === 1) await Deno.writeTextFile(ready, "");
}
console.log(probes);
`,
    );
    const taker = join(dir, "taker.ts");
    await Deno.writeTextFile(
      taker,
      `import { acquireRunLock } from ${lock};
const root = Deno.args[0]!;
let refused = 0;
for (let n = 0; n < 60; n++) {
  try { const held = await acquireRunLock(root, "run-" + n); await held.release(); }
  catch (error) { refused++; console.error(String(error)); }
}
console.log(refused);
`,
    );
    const spawn = (script: string, args: string[]): Deno.ChildProcess =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", ...CLI_PERMISSIONS, script, ...args],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    const stop = join(dir, "stop");
    const probers = [1, 2].map((n) =>
      spawn(prober, [
        root,
        stop,
        join(dir, `ready-${n}`),
        n === 1 ? "slow" : "fast",
      ])
    );
    // The probers are probing before the runner starts taking the lock.
    await waitFor("the probers", async () => {
      for (const n of [1, 2]) {
        if (!(await exists(join(dir, `ready-${n}`)))) return false;
      }
      return true;
    });
    // A lock file to probe, as a dead runner leaves it.
    const dead = new Deno.Command("true").spawn();
    await dead.status;
    await Deno.writeTextFile(
      join(root, "run.lock"),
      JSON.stringify({
        pid: dead.pid,
        pid_start: null,
        host: Deno.hostname(),
        run_id: "old",
      }),
    );
    const takerChild = spawn(taker, [root]);
    const [takerStatus, takerOut, takerErr] = await Promise.all([
      takerChild.status,
      readAll(takerChild.stdout),
      readAll(takerChild.stderr),
    ]);
    await Deno.writeTextFile(stop, "");
    const probes: number[] = [];
    for (const child of probers) {
      const [status, out, err] = await Promise.all([
        child.status,
        readAll(child.stdout),
        readAll(child.stderr),
      ]);
      assert.equal(status.code, 0, err);
      probes.push(Number(out.trim()));
    }
    assert.equal(takerStatus.code, 0, takerErr);
    assert.equal(takerOut.trim(), "0", takerErr);
    assert.ok(probes.every((n) => n > 0), `probes ${probes}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
