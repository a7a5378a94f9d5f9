/**
 * Control commands confined to the state root (DESIGN §11): a path that
 * escapes by name is stopped by the runtime (`NotCapable`, exit 4), and a
 * link planted in the state root is refused by our code (exit 4); either
 * way a canary outside the root stays untouched, and nothing exits 70.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { processStartTime } from "../../lib/shared/run_lock.ts";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { startRun } from "../_helpers/live_run.ts";
import { MAIN, runCli, spawnCli } from "../_helpers/run_cli.ts";
import {
  longPrompt,
  makePacket,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

/** Every control command, with arguments that are valid for `dir`. */
function controlCommands(dir: string): string[][] {
  return [
    ["status", dir, "--json"],
    ["events", dir, "--json"],
    ["log", dir, "--json"],
    ["view", dir, "--tool-output", "full"],
    ["steer", dir, "keep", "going"],
    ["contract", dir, "01", "--json"],
    ["amend", dir, "01", "--add-file", "NOTES.md", "--reason", "needed"],
    [
      "relax",
      dir,
      "01",
      "--drop",
      "files_exist",
      "--reason",
      "not needed",
      "--confirm",
    ],
  ];
}

/** A directory's entries with every file's content, to compare. */
async function inventory(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      found.push(
        `${entry.name}/`,
        ...(await inventory(path)).map((e) => `${entry.name}/${e}`),
      );
    } else found.push(`${entry.name}=${await Deno.readTextFile(path)}`);
  }
  return found.sort();
}

/** A packet whose one prompt ran to completion, and a canary beside it. */
async function ranPacket(): Promise<TempPacket & { canary: string }> {
  const packet = await makePacket({
    prompts: {
      "01_quick.prompt.md": longPrompt(
        1,
        0,
        "verify: {files_exist: [README.md]}",
      ),
    },
    files: { "README.md": "hello\n" },
  });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 0, run.stderr);
  const canary = join(packet.root, "canary");
  await Deno.mkdir(join(canary, "inner"), { recursive: true });
  await Deno.writeTextFile(join(canary, "bait.txt"), "untouched\n");
  await Deno.writeTextFile(join(canary, "inner", "01.jsonl"), "");
  return Object.assign(packet, { canary });
}

/**
 * Makes the finished run look live to a client: its snapshot says running
 * and this process holds its lock, so view and steer get as far as writing
 * their request.
 */
async function lookLive(stateRoot: string): Promise<AsyncDisposable> {
  const snapshotPath = join(stateRoot, "control", "snapshot.json");
  const snapshot = JSON.parse(await Deno.readTextFile(snapshotPath));
  await Deno.writeTextFile(
    snapshotPath,
    JSON.stringify({ ...snapshot, status: "running", pid: Deno.pid }),
  );
  const lock = await Deno.open(join(stateRoot, "run.lock"), {
    write: true,
    create: true,
    truncate: true,
    mode: 0o600,
  });
  await lock.lock(true);
  await lock.write(new TextEncoder().encode(JSON.stringify({
    pid: Deno.pid,
    pid_start: await processStartTime(Deno.pid),
    host: Deno.hostname(),
    run_id: snapshot.run_id,
    started_at: new Date().toISOString(),
  })));
  return {
    async [Symbol.asyncDispose](): Promise<void> {
      await lock.unlock();
      lock.close();
    },
  };
}

Deno.test("a control command made to write outside its state root by name is stopped by the runtime: exit 4 with a clear error, the canary untouched", async () => {
  await using packet = await ranPacket();
  const before = await inventory(packet.canary);
  // The state root is PACKET/.prompt_runner: ../../canary leaves it by name.
  const escape = "../../canary/escaped.txt";
  for (const args of controlCommands(packet.dir)) {
    const result = await runCli(["control", ...args], {
      fault: `control_escape:${escape}`,
    });
    assert.equal(result.code, 4, `${args[0]}: ${result.stderr}`);
    assert.match(
      result.stderr,
      /^error: Refused to reach a path outside the run's state root and packet: Requires write access to ".*\/canary\/escaped\.txt"/m,
      args[0],
    );
    assert.match(
      result.stderr,
      /^hint: A control command reads and writes only inside the state root/m,
    );
    assert.doesNotMatch(result.stderr, /internal error/);
  }
  assert.deepEqual(await inventory(packet.canary), before);
});

Deno.test("the production main.ts ignores PROMPT_RUNNER_TEST_FAULT: a control command given it writes nothing outside its state root", async () => {
  await using packet = await ranPacket();
  const before = await inventory(packet.canary);
  for (const args of controlCommands(packet.dir)) {
    const result = await runCli(["control", ...args], {
      env: { PROMPT_RUNNER_TEST_FAULT: "control_escape:../../canary/x.txt" },
    });
    assert.doesNotMatch(result.stderr, /Refused to reach a path/, args[0]);
    if (["status", "events", "log", "contract", "amend"].includes(args[0]!)) {
      assert.equal(result.code, 0, `${args[0]}: ${result.stderr}`);
    }
  }
  assert.deepEqual(await inventory(packet.canary), before);
});

Deno.test("without --unstable-worker-options a control command refuses with exit 4 naming the flag, instead of running unconfined", async () => {
  await using packet = await ranPacket();
  const child = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      "--allow-sys=hostname,uid",
      MAIN,
      "control",
      "status",
      packet.dir,
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const stderr = new TextDecoder().decode(child.stderr);
  assert.equal(child.code, 4, stderr);
  assert.match(
    stderr,
    /^error: Cannot confine "control status" to its state root: the runtime was started without --unstable-worker-options/m,
  );
  assert.equal(child.stdout.length, 0);
});

const PLANTED = [
  "control/requests",
  "control/outcomes",
  "control/log.jsonl",
  "control/snapshot.json",
  "amendments",
] as const;

/** What each command must do with a link at each place: `4`, or `[0, 4]` when it never touches it. */
const WRITERS: Record<string, readonly string[]> = {
  "control/requests": ["view", "steer"],
  "control/outcomes": [],
  "control/log.jsonl": ["log", "amend", "relax"],
  "control/snapshot.json": ["status", "events", "log", "view", "steer"],
  amendments: ["contract", "amend", "relax"],
};

for (const planted of PLANTED) {
  Deno.test(`a link planted at ${planted} is refused by every control command that uses it (exit 4) and by the runner, never followed: the canary outside is untouched and nothing exits 70`, async () => {
    await using packet = await ranPacket();
    packet.audit = false; // A link stands in the trail, on purpose.
    const live = await lookLive(packet.stateRoot);
    const path = join(packet.stateRoot, planted);
    await Deno.mkdir(join(packet.stateRoot, "control", "requests"), {
      recursive: true,
    });
    await Deno.mkdir(join(packet.stateRoot, "control", "outcomes"), {
      recursive: true,
    });
    await Deno.remove(path, { recursive: true }).catch(() => {});
    const isDir = !planted.endsWith(".json") && !planted.endsWith(".jsonl");
    await Deno.symlink(
      isDir ? join(packet.canary, "inner") : join(packet.canary, "bait.txt"),
      path,
    );
    const before = await inventory(packet.canary);
    for (const args of controlCommands(packet.dir)) {
      const result = await runCli(["control", ...args]);
      const name = args[0]!;
      const where = `${name} with ${planted}: ${result.code} ${result.stderr}`;
      assert.doesNotMatch(result.stderr, /internal error/, where);
      if (WRITERS[planted]!.includes(name)) {
        assert.equal(result.code, 4, where);
        assert.match(
          result.stderr,
          new RegExp(
            `^error: .*Refused to use ".*/${planted}": it is a link`,
            "m",
          ),
          where,
        );
      } else {
        assert.ok([0, 4].includes(result.code), where);
      }
      assert.deepEqual(await inventory(packet.canary), before, where);
      assert.ok(
        (await Deno.lstat(path)).isSymlink,
        `${where}: the link was replaced`,
      );
    }
    // The runner: a control file's link is moved aside with a warning and
    // the run goes on; amendments behind a link are refused, so the prompt
    // cannot be verified (exit 1).
    await live[Symbol.asyncDispose]();
    const run = await runCli(["run", packet.dir]);
    if (planted === "amendments") {
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /verifier_fault: cannot verify: Refused to use ".*\/amendments": it is a link/,
      );
    } else {
      assert.equal(run.code, 0, run.stderr);
      const name = planted.split("/")[1]!;
      assert.match(
        run.stderr,
        new RegExp(
          `^warning: control plane: "${planted}" was a symbolic link to ".*"; .*moved aside to "${name}\\.link-refused-`,
          "m",
        ),
      );
    }
    assert.deepEqual(await inventory(packet.canary), before, run.stderr);
  });
}

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`control events --follow in its confined worker streams as the run goes and stops on ${signal} with ${code}`, async () => {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(200, 30) },
    });
    await using run = startRun(packet.dir);
    await run.until((event) => event.type === "prompt_started");
    const follower = spawnCli(["control", "events", packet.dir, "--json"]);
    const lines = new LineReader(follower.stdout);
    const first = JSON.parse((await lines.next())!);
    assert.equal(first.seq, 1);
    follower.kill(signal);
    await lines.rest();
    const status = await follower.status;
    const stderr = await readAll(follower.stderr);
    assert.equal(status.code, code, stderr);
    assert.equal(stderr, "");
  });
}
