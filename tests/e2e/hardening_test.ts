/**
 * The runner against a hostile or unlucky world, with real processes:
 * planted links, a state root of another user, a killed runner resumed, a
 * full disk, odd state files, a closed terminal, and racing lock takers.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readAll } from "../_helpers/lines.ts";
import {
  listDir,
  readJsonl,
  readSnapshot,
  startRun,
} from "../_helpers/live_run.ts";
import {
  CLI_PERMISSIONS,
  cliArgs,
  ROOT,
  runCli,
  waitFor,
} from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { writeExecutable } from "../_helpers/executable.ts";

const IS_ROOT = Deno.uid() === 0;

/**
 * Whether this machine lets the tests mount a small tmpfs (a full disk on
 * demand): root with CAP_SYS_ADMIN. Where it cannot, the full-disk tests
 * cannot run, and say so instead of passing.
 */
async function probeTmpfs(): Promise<boolean> {
  if (!IS_ROOT) return false;
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_tmpfs_" });
  try {
    const out = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir],
      stdout: "null",
      stderr: "null",
    }).output();
    if (!out.success) return false;
    await new Deno.Command("umount", { args: [dir] }).output();
    return true;
  } catch {
    return false;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const CAN_MOUNT = await probeTmpfs();
if (!CAN_MOUNT) {
  // deno-lint-ignore no-console
  console.error(
    "hardening_test: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): the full-disk tests are ignored",
  );
}

interface StateFile {
  prompts: Record<
    string,
    {
      status: string;
      attempts: {
        run_id: string;
        attempt: number;
        status: string;
        transcript: string | null;
      }[];
    }
  >;
}

async function readState(stateRoot: string): Promise<StateFile> {
  return JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")));
}

/** Every dot-temp file under a directory (recursively). */
async function tempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await tempFiles(path));
    else if (/^\..*\.tmp$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** Kills a live run once it has started its attempt and streamed a little. */
async function killMidAttempt(
  run: ReturnType<typeof startRun>,
): Promise<Record<string, unknown>> {
  const started = await run.until((e) => e.type === "prompt_started");
  await run.until((e) => e.type === "tool_call_started");
  run.child.kill("SIGKILL");
  const killed = await run.finish();
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  return started;
}

Deno.test("a resumed run continues the attempt numbering, keeps every transcript, and records killed attempts as interrupted", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(30, 30) },
  });
  const numbers: number[] = [];
  for (let kill = 0; kill < 3; kill++) {
    const run = startRun(packet.dir, kill === 0 ? [] : ["--resume"]);
    numbers.push(Number((await killMidAttempt(run)).attempt));
  }
  const last = startRun(packet.dir, ["--resume"]);
  const done = await last.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(numbers, [1, 2, 3]);
  const state = await readState(packet.stateRoot);
  const attempts = state.prompts["01"]!.attempts;
  assert.equal(new Set(attempts.map((a) => a.run_id)).size, 1, "one run id");
  assert.deepEqual(attempts.map((a) => a.attempt), [1, 2, 3, 4]);
  assert.deepEqual(attempts.map((a) => a.status), [
    "interrupted",
    "interrupted",
    "interrupted",
    "completed",
  ]);
  for (const attempt of attempts) {
    const text = await Deno.readTextFile(
      join(packet.stateRoot, attempt.transcript!),
    );
    assert.match(
      text,
      new RegExp(
        `attempt ${attempt.attempt} \\(run\\)[\\s\\S]*--- events ---\\n.+`,
      ),
      `transcript of attempt ${attempt.attempt} is whole`,
    );
  }
});

Deno.test("a link planted at a transcript's path is moved aside on --resume, and its target is never truncated", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(20, 30) },
  });
  const canary = join(packet.root, "canary");
  await Deno.mkdir(canary);
  const bait = join(canary, "bait.txt");
  await Deno.writeTextFile(bait, "untouched\n");
  const started = await killMidAttempt(startRun(packet.dir));
  const logs = join(packet.stateRoot, "logs", String(started.run_id));
  for (const n of [1, 2]) {
    const path = join(logs, `01-attempt-${n}.log`);
    await Deno.remove(path).catch(() => {});
    await Deno.symlink(bait, path);
  }
  const done = await startRun(packet.dir, ["--resume"]).finish();
  assert.equal(done.code, 0, done.stderr);
  assert.equal(await Deno.readTextFile(bait), "untouched\n");
  assert.deepEqual(await listDir(canary), ["bait.txt"]);
  const transcript = join(logs, "01-attempt-2.log");
  assert.ok((await Deno.lstat(transcript)).isFile);
  assert.match(await Deno.readTextFile(transcript), /attempt 2/);
  const warnings = done.stderr.split("\n").filter((l) =>
    l.includes("01-attempt-2.log")
  );
  assert.equal(warnings.length, 1, done.stderr);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.ok(
    log.some((e) =>
      e.command === "link_refused" &&
      String((e.params as Record<string, unknown>).path).endsWith(
        "01-attempt-2.log",
      )
    ),
  );
});

Deno.test(
  "run refuses a state root that belongs to another user with exit 4 and a hint",
  {
    ignore: !IS_ROOT,
  },
  async () => {
    await using packet = await makePacket({
      prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
    });
    await Deno.mkdir(packet.stateRoot, { mode: 0o700 });
    await Deno.chown(packet.stateRoot, 65534, 65534);
    const result = await runCli(["run", packet.dir]);
    assert.equal(result.code, 4, result.stderr);
    assert.match(
      result.stderr,
      /^error: Refused to use state root ".*": it belongs to user 65534/m,
    );
    assert.match(result.stderr, /^hint: /m);
    assert.deepEqual(await listDir(packet.stateRoot), []);
  },
);

Deno.test("run makes a group- or world-writable state root of ours private again, and says so", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  // A root a run made (an empty one could be anybody's: that is refused).
  const first = await runCli(["run", packet.dir]);
  assert.equal(first.code, 0, first.stderr);
  await Deno.chmod(packet.stateRoot, 0o777);
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /writable by group or others \(mode 777\); it is private again \(700\)/,
  );
  assert.equal((await Deno.stat(packet.stateRoot)).mode! & 0o777, 0o700);
});

Deno.test("12 processes racing to take over a dead holder's run lock: exactly one holds it, in every one of 10 rounds", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_lock_" });
  try {
    const rounds = 10;
    const takers = 12;
    const script = join(dir, "taker.ts");
    await Deno.writeTextFile(
      script,
      `import { acquireRunLock } from ${
        JSON.stringify(join(ROOT, "lib", "shared", "run_lock.ts"))
      };
const [dir, me, rounds] = [Deno.args[0]!, Deno.args[1]!, Number(Deno.args[2])];
const exists = async (p: string) => { try { await Deno.lstat(p); return true; } catch { return false; } };
const until = async (p: string) => { while (!(await exists(p))) await new Promise((r) => setTimeout(r, 5)); };
for (let r = 0; r < rounds; r++) {
  await until(dir + "/go-" + r);
  let lock = null;
  try { lock = await acquireRunLock(dir + "/root", "taker-" + me); } catch { /* refused */ }
  await Deno.writeTextFile(dir + "/res-" + r + "-" + me, lock ? "held" : "refused");
  if (lock) { await until(dir + "/stop-" + r); await lock.release(); }
  await Deno.writeTextFile(dir + "/done-" + r + "-" + me, "");
}
`,
    );
    await Deno.mkdir(join(dir, "root"), { mode: 0o700 });
    const children = Array.from(
      { length: takers },
      (_, i) =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--quiet",
            ...CLI_PERMISSIONS,
            script,
            dir,
            String(i),
            String(rounds),
          ],
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).spawn(),
    );
    const dead = new Deno.Command("true").spawn();
    const deadPid = dead.pid;
    await dead.status;
    const holders: number[] = [];
    for (let r = 0; r < rounds; r++) {
      await Deno.writeTextFile(
        join(dir, "root", "run.lock"),
        JSON.stringify({
          pid: deadPid,
          pid_start: null,
          host: Deno.hostname(),
          run_id: "dead-holder",
          started_at: "2026-11-30T00:00:00.000Z",
        }) + "\n",
      );
      await Deno.writeTextFile(join(dir, `go-${r}`), "");
      const results = await waitFor(`round ${r} results`, async () => {
        const texts: string[] = [];
        for (let i = 0; i < takers; i++) {
          try {
            texts.push(await Deno.readTextFile(join(dir, `res-${r}-${i}`)));
          } catch {
            return null;
          }
        }
        return texts;
      }, 60_000);
      holders.push(results.filter((t) => t === "held").length);
      await Deno.writeTextFile(join(dir, `stop-${r}`), "");
      await waitFor(`round ${r} done`, async () => {
        for (let i = 0; i < takers; i++) {
          try {
            await Deno.lstat(join(dir, `done-${r}-${i}`));
          } catch {
            return false;
          }
        }
        return true;
      }, 60_000);
    }
    for (const child of children) {
      const [status, stderr] = await Promise.all([
        child.status,
        readAll(child.stderr),
      ]);
      assert.equal(status.code, 0, stderr);
    }
    assert.deepEqual(holders, Array(rounds).fill(1));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("temporary files a killed runner left are cleaned when the run resumes", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(10, 30) },
  });
  await killMidAttempt(startRun(packet.dir));
  const control = join(packet.stateRoot, "control");
  const planted = [
    join(control, ".snapshot.json.0badf00d.tmp"),
    join(
      control,
      "outcomes",
      ".20261130T000000000Z-aaaaaaaaaa.json.1234abcd.tmp",
    ),
    join(packet.stateRoot, ".state.json.deadbeef.tmp"),
  ];
  for (const path of planted) await Deno.writeTextFile(path, "{");
  const done = await startRun(packet.dir, ["--resume"]).finish();
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(await tempFiles(packet.stateRoot), []);
});

Deno.test("a 300-character --run-id is refused with exit 2 before the state root is touched, and the killed run still resumes with seq continuing", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(10, 30) },
  });
  const run = startRun(packet.dir);
  const started = await killMidAttempt(run);
  const events = join(packet.stateRoot, "control", "events.jsonl");
  const before = await Deno.readTextFile(events);
  const refused = await runCli([
    "run",
    packet.dir,
    "--run-id",
    "r".repeat(300),
  ]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(
    refused.stderr,
    /^error: Invalid run id "r+…" \(300 characters\)/m,
  );
  assert.equal(await Deno.readTextFile(events), before);
  assert.deepEqual(
    await listDir(join(packet.stateRoot, "control", "events")),
    [],
  );
  const resumed = await startRun(packet.dir, ["--resume"]).finish();
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.events[0]?.run_id, started.run_id);
  const all = await readJsonl(events);
  assert.deepEqual(all.map((e) => e.seq), all.map((_, i) => i + 1));
});

Deno.test("SIGHUP (a closed terminal) ends the run as interrupted with exit 129, run_finished written and the lock released", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(200, 30) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "tool_call_started");
  run.child.kill("SIGHUP");
  const done = await run.finish();
  assert.equal(done.code, 129, done.stderr);
  assert.equal(done.events.at(-1)?.type, "run_finished");
  assert.equal(
    (done.events.at(-1)?.data as Record<string, unknown>).status,
    "interrupted",
  );
  await assert.rejects(
    Deno.lstat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]!.status, "interrupted");
});

/**
 * Starts a slow run under nohup (with `path` first on PATH, if given), sends
 * it SIGHUP once it streams, and checks that it went on to complete.
 */
async function assertNohupSurvivesHangup(
  packet: { dir: string; stateRoot: string },
  path?: string,
): Promise<void> {
  const child = new Deno.Command("nohup", {
    args: [Deno.execPath(), ...cliArgs(["run", packet.dir, "--json"])],
    cwd: ROOT,
    env: {
      NO_COLOR: "1",
      ...(path ? { PATH: `${path}:${Deno.env.get("PATH")}` } : {}),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = readAll(child.stdout);
  const stderr = readAll(child.stderr);
  await waitFor("the run to stream", async () => {
    const snapshot = await readSnapshot(packet.stateRoot);
    return snapshot !== null && Number(snapshot.tool_count) >= 1;
  });
  child.kill("SIGHUP");
  const status = await child.status;
  assert.equal(status.code, 0, await stderr);
  const last = (await stdout).trimEnd().split("\n").at(-1)!;
  assert.equal(JSON.parse(last).data.status, "completed");
}

Deno.test("a runner started under nohup keeps running through SIGHUP and completes", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(25, 30) },
  });
  await assertNohupSurvivesHangup(packet);
});

Deno.test("a runner started under nohup on a machine so loaded that reading /proc takes seconds still keeps running through SIGHUP", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(25, 30) },
  });
  // A `cat` that answers after 6 s, as one did under a load average of 38.
  const bin = join(packet.root, "slowbin");
  await Deno.mkdir(bin);
  const realCat = new TextDecoder().decode(
    (await new Deno.Command("sh", {
      args: ["-c", "command -v cat"],
      stdout: "piped",
    }).output()).stdout,
  ).trim();
  await writeExecutable(
    join(bin, "cat"),
    `#!/bin/sh\nsleep 6\nexec ${realCat} "$@"\n`,
  );
  await assertNohupSurvivesHangup(packet, bin);
});

Deno.test("control commands and run treat odd state files as refused by state (4) or not found (3), never as a bug (70)", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  const control = join(packet.stateRoot, "control");
  const snapshotPath = join(control, "snapshot.json");
  const good = JSON.parse(await Deno.readTextFile(snapshotPath));

  for (const view of [undefined, null, "compact", { log_mode: 7 }]) {
    const odd = { ...good };
    if (view === undefined) delete odd.view;
    else odd.view = view;
    await Deno.writeTextFile(snapshotPath, JSON.stringify(odd));
    const status = await runCli(["control", "status", packet.dir, "--json"]);
    assert.equal(
      status.code,
      0,
      `view ${JSON.stringify(view)}: ${status.stderr}`,
    );
    assert.deepEqual(JSON.parse(status.stdout).view, {
      log_mode: "compact",
      tool_output: "summary",
      thinking: "show",
      diff: "stat",
    });
    assert.equal((await runCli(["control", "status", packet.dir])).code, 0);
  }

  await Deno.remove(snapshotPath);
  await Deno.mkdir(snapshotPath);
  for (
    const args of [["control", "status"], ["control", "events"], [
      "control",
      "log",
    ]]
  ) {
    const result = await runCli([...args, packet.dir]);
    assert.equal(result.code, 4, `${args.join(" ")}: ${result.stderr}`);
    assert.match(
      result.stderr,
      /^error: Cannot read snapshot ".*snapshot\.json"/m,
    );
  }
  await Deno.remove(snapshotPath);
  await Deno.writeTextFile(snapshotPath, JSON.stringify(good));

  const eventsPath = join(control, "events.jsonl");
  await Deno.remove(eventsPath);
  await Deno.mkdir(eventsPath);
  const events = await runCli(["control", "events", packet.dir]);
  assert.equal(events.code, 4, events.stderr);
  assert.match(events.stderr, /^error: Cannot read the events of run/m);
  await Deno.remove(eventsPath);

  const statePath = join(packet.stateRoot, "state.json");
  await Deno.rename(statePath, `${statePath}.bak`);
  await Deno.mkdir(statePath);
  for (const args of [["run"], ["status"]]) {
    const result = await runCli([...args, packet.dir]);
    assert.equal(result.code, 4, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, /^error: Cannot read state ".*state\.json"/m);
  }
  await Deno.remove(statePath);

  const file = join(packet.root, "a-file");
  await Deno.writeTextFile(file, "not a directory\n");
  const onFile = await runCli(["run", packet.dir, "--state-root", file]);
  assert.equal(onFile.code, 4, onFile.stderr);
  assert.match(
    onFile.stderr,
    /^error: Cannot use state root ".*a-file": it is not a directory/m,
  );
  const statusOnFile = await runCli([
    "control",
    "status",
    "--state-root",
    file,
  ]);
  assert.ok([3, 4].includes(statusOnFile.code), statusOnFile.stderr);
  assert.match(statusOnFile.stderr, /^error: /m);

  const long = join(packet.root, "x".repeat(5000));
  for (
    const args of [["run", long], ["status", long], ["control", "status", long]]
  ) {
    const result = await runCli(args);
    assert.ok(
      [2, 3].includes(result.code),
      `${args[0]} ${args[1]}: ${result.code} ${result.stderr}`,
    );
    assert.doesNotMatch(result.stderr, /internal error/);
    assert.ok(
      result.stderr.length < 1000,
      "the path is shortened in the message",
    );
  }
});

/** A tmpfs of `size` mounted at `dir` for the length of `fn`. */
async function withTmpfs(
  dir: string,
  size: string,
  fn: (remount: (size: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const mount = async (args: string[]) => {
    const out = await new Deno.Command("mount", { args, stderr: "piped" })
      .output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
  };
  await mount(["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir]);
  try {
    await fn((next) => mount(["-o", `remount,size=${next}`, dir]));
  } finally {
    await new Deno.Command("umount", { args: ["-l", dir] }).output();
  }
}

Deno.test(
  "a state root on a disk that fills up mid-run: exit 1 naming the path, the lock released, and --resume completes once there is room",
  {
    ignore: !IS_ROOT,
  },
  async () => {
    await using packet = await makePacket({
      prompts: {
        "01_big.prompt.md": longPrompt(
          400,
          2,
          "verify: {files_exist: [README.md]}",
        ),
      },
    });
    const stateRoot = join(packet.root, "state");
    await withTmpfs(stateRoot, "96k", async (remount) => {
      const run = startRun(packet.dir, ["--state-root", stateRoot]);
      const done = await run.finish();
      assert.equal(done.code, 1, done.stderr);
      assert.match(
        done.stderr,
        /^error: Cannot write "[^"]+": No space left on device/m,
      );
      assert.doesNotMatch(done.stderr, /internal error|this is a bug/i);
      assert.match(done.stderr, /^hint: .*--resume/m);
      await assert.rejects(
        Deno.lstat(join(stateRoot, "run.lock")),
        Deno.errors.NotFound,
      );
      JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")));
      await remount("16m");
      const resumed = await startRun(packet.dir, [
        "--state-root",
        stateRoot,
        "--resume",
      ]).finish();
      assert.equal(resumed.code, 0, resumed.stderr);
      const state = await readState(stateRoot);
      const attempts = state.prompts["01"]!.attempts;
      assert.equal(state.prompts["01"]!.status, "completed");
      assert.deepEqual(attempts.map((a) => a.status), [
        "interrupted",
        "completed",
      ]);
    });
  },
);

Deno.test(
  "starting on a full disk exits 4 naming the lock, and leaves no empty run.lock behind",
  {
    ignore: !IS_ROOT,
  },
  async () => {
    await using packet = await makePacket({
      prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
    });
    const stateRoot = join(packet.root, "state");
    await withTmpfs(stateRoot, "64k", async () => {
      // Inside a directory the runner makes: a state root holding someone
      // else's file is refused before the lock is tried.
      await Deno.mkdir(join(stateRoot, "tmp"));
      const filler = await Deno.open(join(stateRoot, "tmp", "filler"), {
        write: true,
        create: true,
      });
      try {
        await filler.write(new Uint8Array(1 << 20));
      } catch {
        // Full.
      } finally {
        filler.close();
      }
      const result = await runCli([
        "run",
        packet.dir,
        "--state-root",
        stateRoot,
      ]);
      assert.equal(result.code, 4, result.stderr);
      assert.match(
        result.stderr,
        /^error: Cannot start a run: cannot write the lock ".*run\.lock": No space left on device/m,
      );
      await assert.rejects(
        Deno.lstat(join(stateRoot, "run.lock")),
        Deno.errors.NotFound,
      );
    });
  },
);

Deno.test("run with stdout on a full device (/dev/full) exits 1 saying so, and records the run as interrupted", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(5, 10) },
  });
  const command = [Deno.execPath(), ...cliArgs(["run", packet.dir])]
    .map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(" ");
  const output = await new Deno.Command("bash", {
    args: ["-c", `${command} > /dev/full`],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 1, stderr);
  assert.match(
    stderr,
    /^error: Cannot write the run's output to standard output: No space left on device/m,
  );
  assert.doesNotMatch(stderr, /internal error/);
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]!.status, "interrupted");
  assert.equal((await readSnapshot(packet.stateRoot))?.status, "interrupted");
  await assert.rejects(
    Deno.lstat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
});

Deno.test("requests racing the end of a run: every acknowledged one gets exactly one receipt and one final log entry", async () => {
  await using packet = await makePacket({
    prompts: { "01_short.prompt.md": longPrompt(8, 40) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  let finished = false;
  const acked: string[] = [];
  const settled: string[] = [];
  const sender = async (n: number) => {
    for (let i = 0; !finished || i < 2; i++) {
      const result = await runCli([
        "control",
        "view",
        packet.dir,
        "--diff",
        (n + i) % 2 === 0 ? "full" : "none",
      ]);
      if (result.code === 0) {
        acked.push(/\(request (\S+)\)/.exec(result.stdout)![1]!);
      } else if (/before the request could be applied/.test(result.stderr)) {
        settled.push(/Request (\S+) is recorded/.exec(result.stderr)![1]!);
      } else {
        assert.equal(result.code, 4, result.stderr);
      }
      if (finished && i > 50) break;
    }
  };
  const senders = [0, 1, 2, 3].map(sender);
  const done = await run.finish();
  finished = true;
  await Promise.all(senders);
  assert.equal(done.code, 0, done.stderr);
  assert.ok(acked.length > 0);
  const control = join(packet.stateRoot, "control");
  assert.deepEqual(await listDir(join(control, "requests")), []);
  const log = await readJsonl(join(control, "log.jsonl"));
  const receipts = await listDir(join(control, "outcomes"));
  for (const id of [...acked, ...settled]) {
    const entries = log.filter((e) => e.request_id === id);
    assert.equal(entries.length, 1, `${id}: ${JSON.stringify(entries)}`);
    assert.ok(["applied", "rejected"].includes(String(entries[0]!.outcome)));
    assert.equal(receipts.filter((r) => r === `${id}.json`).length, 1, id);
  }
  for (const id of settled) {
    assert.equal(log.find((e) => e.request_id === id)?.outcome, "rejected");
  }
});

Deno.test("control status polled while runs hand the state root to one another never fails as stale", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  let done = false;
  const failures: string[] = [];
  let polls = 0;
  const poller = async () => {
    while (!done) {
      const result = await runCli(["control", "status", packet.dir, "--json"]);
      polls++;
      if (result.code !== 0) failures.push(`${result.code}: ${result.stderr}`);
      else JSON.parse(result.stdout);
    }
  };
  const pollers = [poller(), poller()];
  for (let run = 0; run < 25; run++) {
    const result = await runCli(["run", packet.dir]);
    assert.equal(result.code, 0, result.stderr);
  }
  done = true;
  await Promise.all(pollers);
  assert.ok(polls > 10, `${polls} polls`);
  assert.deepEqual(failures, []);
});
