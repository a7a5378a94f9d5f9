import assert from "node:assert/strict";
import { join } from "node:path";
import {
  acquireRunLock,
  processStartTime,
  readRunLock,
} from "../../../lib/shared/run_lock.ts";
import { StateError } from "../../../lib/shared/mod.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("acquireRunLock() refuses a second run while the first holds the lock, naming it", async () => {
  await withTempDir(async (dir) => {
    const lock = await acquireRunLock(dir, "run-a");
    try {
      await assert.rejects(
        acquireRunLock(dir, "run-b"),
        (error: unknown) =>
          error instanceof StateError && error.exitCode === 4 &&
          error.message.includes("run-a") &&
          error.message.includes(`pid ${Deno.pid}`),
      );
    } finally {
      await lock.release();
    }
    await assert.rejects(
      Deno.stat(join(dir, "run.lock")),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("acquireRunLock() takes over a lock left by a dead process", async () => {
  await withTempDir(async (dir) => {
    const pid = await deadPid();
    await Deno.writeTextFile(
      join(dir, "run.lock"),
      JSON.stringify({
        pid,
        pid_start: "1",
        host: Deno.hostname(),
        run_id: "old",
        started_at: "x",
      }),
    );
    assert.equal((await readRunLock(dir))?.alive, false);
    const lock = await acquireRunLock(dir, "new");
    assert.equal(lock.info.run_id, "new");
    assert.equal((await readRunLock(dir))?.alive, true);
    await lock.release();
  });
});

Deno.test("acquireRunLock() treats a live pid with another start time as a reused pid", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "run.lock"),
      JSON.stringify({
        pid: Deno.pid,
        pid_start: "0",
        host: Deno.hostname(),
        run_id: "old",
        started_at: "x",
      }),
    );
    const lock = await acquireRunLock(dir, "new");
    assert.equal(lock.info.pid_start, await processStartTime(Deno.pid));
    await lock.release();
  });
});

Deno.test("acquireRunLock() takes over a lock file holding garbage", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "run.lock"), "not json at all");
    const lock = await acquireRunLock(dir, "new");
    await lock.release();
  });
});

Deno.test("RunLock.release() leaves a successor's lock alone", async () => {
  await withTempDir(async (dir) => {
    const lock = await acquireRunLock(dir, "mine");
    const successor = JSON.stringify({
      pid: 1,
      pid_start: null,
      host: "other",
      run_id: "theirs",
      started_at: "x",
    });
    await Deno.writeTextFile(join(dir, "run.lock"), successor);
    await lock.release();
    assert.equal(await Deno.readTextFile(join(dir, "run.lock")), successor);
  });
});

Deno.test("readRunLock() calls a lock whose record names a live process but whose kernel lock is free dead", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "run.lock"),
      JSON.stringify({
        pid: Deno.pid,
        pid_start: await processStartTime(Deno.pid),
        host: Deno.hostname(),
        run_id: "old",
        started_at: "x",
      }),
    );
    assert.equal((await readRunLock(dir))?.alive, false);
  });
});

Deno.test("readRunLock() tells a held lock alive, and a released one dead, without starting a process", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "root");
    await Deno.mkdir(root);
    const script = join(dir, "read.ts");
    await Deno.writeTextFile(
      script,
      `import { readRunLock } from ${
        JSON.stringify(
          new URL("../../../lib/shared/run_lock.ts", import.meta.url).pathname,
        )
      };
const lock = await readRunLock(Deno.args[0]!);
console.log(JSON.stringify({ alive: lock?.alive, run: lock?.info?.run_id }));
`,
    );
    const read = async (): Promise<unknown> => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          "--allow-read",
          "--deny-run",
          "--allow-sys=hostname",
          script,
          root,
        ],
        stdin: "null",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert.equal(output.code, 0, stderr);
      return JSON.parse(new TextDecoder().decode(output.stdout));
    };
    const lock = await acquireRunLock(root, "run-a");
    try {
      assert.deepEqual(await read(), { alive: true, run: "run-a" });
    } finally {
      await lock.release();
    }
    await Deno.writeTextFile(
      join(root, "run.lock"),
      JSON.stringify({ ...lock.info }),
    );
    assert.deepEqual(await read(), { alive: false, run: "run-a" });
  });
});
