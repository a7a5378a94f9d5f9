import assert from "node:assert/strict";
import { join } from "node:path";
import { LinkRefusedError } from "../../../lib/shared/errors.ts";
import {
  appendLine,
  checkPath,
  createNewFile,
  ensurePrivateDir,
  isEnvironmentError,
  moveLinkAside,
  readTextIfExists,
  removeStaleTemps,
  repairTornTail,
  writeFileAtomic,
  writeFileNoReplace,
} from "../../../lib/shared/files.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

/** A state root and, beside it, a canary directory a planted link points into. */
async function rootAndCanary(
  dir: string,
): Promise<{ root: string; canary: string; bait: string }> {
  const root = join(dir, "state");
  const canary = join(dir, "canary");
  await Deno.mkdir(join(root, "control"), { recursive: true, mode: 0o700 });
  await Deno.mkdir(canary);
  const bait = join(canary, "bait.txt");
  await Deno.writeTextFile(bait, "untouched\n");
  return { root, canary, bait };
}

Deno.test("appendLine() within a state root refuses a link at the file and leaves its target untouched", async () => {
  await withTempDir(async (dir) => {
    const { root, bait } = await rootAndCanary(dir);
    const log = join(root, "control", "log.jsonl");
    await Deno.symlink(bait, log);
    await assert.rejects(
      appendLine(log, "{}", { within: root }),
      (error) => error instanceof LinkRefusedError && error.path === log,
    );
    assert.equal(await Deno.readTextFile(bait), "untouched\n");
  });
});

Deno.test("appendLine() within a state root refuses a directory link on the way", async () => {
  await withTempDir(async (dir) => {
    const { root, canary } = await rootAndCanary(dir);
    const interventions = join(root, "interventions");
    await Deno.symlink(canary, interventions);
    await assert.rejects(
      appendLine(join(interventions, "01.jsonl"), "{}", { within: root }),
      (error) =>
        error instanceof LinkRefusedError && error.path === interventions,
    );
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(canary))).map((e) => e.name),
      ["bait.txt"],
    );
  });
});

Deno.test("writeFileNoReplace() and writeFileAtomic() refuse a directory link among the parents", async () => {
  await withTempDir(async (dir) => {
    const { root, canary } = await rootAndCanary(dir);
    await Deno.symlink(canary, join(root, "control", "outcomes"));
    await assert.rejects(
      writeFileNoReplace(join(root, "control", "outcomes", "r.json"), "{}", {
        within: root,
      }),
      LinkRefusedError,
    );
    await Deno.remove(join(root, "control"), { recursive: true });
    await Deno.symlink(canary, join(root, "control"));
    await assert.rejects(
      writeFileAtomic(join(root, "control", "snapshot.json"), "{}", {
        within: root,
      }),
      LinkRefusedError,
    );
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(canary))).map((e) => e.name),
      ["bait.txt"],
    );
  });
});

Deno.test("writeFileAtomic() refuses a symbolic link at the target (to be reported), never writing through it", async () => {
  await withTempDir(async (dir) => {
    const { root, bait } = await rootAndCanary(dir);
    const snapshot = join(root, "control", "snapshot.json");
    await Deno.symlink(bait, snapshot);
    await assert.rejects(
      writeFileAtomic(snapshot, "{}\n", { within: root }),
      (error) => error instanceof LinkRefusedError && error.path === snapshot,
    );
    assert.equal(await Deno.readTextFile(bait), "untouched\n");
    assert.ok((await Deno.lstat(snapshot)).isSymlink);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(join(root, "control"))))
        .map((e) => e.name),
      ["snapshot.json"],
      "no temp file left behind",
    );
  });
});

Deno.test("appendLine() refuses a hard link to a file named elsewhere, which a write would change there too", async () => {
  await withTempDir(async (dir) => {
    const { root, bait } = await rootAndCanary(dir);
    const log = join(root, "control", "log.jsonl");
    await Deno.link(bait, log);
    await assert.rejects(
      appendLine(log, "{}", { within: root }),
      LinkRefusedError,
    );
    assert.equal(await Deno.readTextFile(bait), "untouched\n");
    // Reading is no write: a hard-linked file may be read.
    assert.equal(
      await readTextIfExists(log, { within: root }),
      "untouched\n",
    );
  });
});

Deno.test("createNewFile() never follows a link (O_EXCL), and readTextIfExists() refuses one", async () => {
  await withTempDir(async (dir) => {
    const { root, bait } = await rootAndCanary(dir);
    const transcript = join(root, "control", "t.log");
    await Deno.symlink(bait, transcript);
    await assert.rejects(
      createNewFile(transcript, { within: root }),
      Deno.errors.AlreadyExists,
    );
    await assert.rejects(
      readTextIfExists(transcript, { within: root }),
      LinkRefusedError,
    );
    assert.equal(await Deno.readTextFile(bait), "untouched\n");
  });
});

Deno.test("checkPath() refuses a path that leaves the state root", async () => {
  await withTempDir(async (dir) => {
    const { root } = await rootAndCanary(dir);
    await assert.rejects(
      checkPath(root, join(root, "..", "canary", "bait.txt")),
      /lies outside the state root/,
    );
  });
});

Deno.test("moveLinkAside() moves the link itself and reports where it pointed", async () => {
  await withTempDir(async (dir) => {
    const { root, bait } = await rootAndCanary(dir);
    const log = join(root, "control", "log.jsonl");
    await Deno.symlink(bait, log);
    const moved = await moveLinkAside(root, log);
    assert.equal(moved?.path, "control/log.jsonl");
    assert.equal(moved?.target, bait);
    assert.match(moved!.moved_to, /^control\/log\.jsonl\.link-refused-\d{8}T/);
    assert.ok((await Deno.lstat(join(root, moved!.moved_to))).isSymlink);
    assert.equal(await Deno.readTextFile(bait), "untouched\n");
    assert.equal(await moveLinkAside(root, log), null);
  });
});

Deno.test("appendLine() after a torn last line starts the new line on a line of its own", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "log.jsonl");
    await Deno.writeTextFile(path, '{"a":1}\n{"torn":');
    await appendLine(path, '{"b":2}');
    assert.equal(
      await Deno.readTextFile(path),
      '{"a":1}\n{"torn":\n{"b":2}\n',
    );
  });
});

Deno.test("repairTornTail() cuts a torn last line and leaves a clean file alone", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "log.jsonl");
    await Deno.writeTextFile(path, '{"a":1}\n{"b":2}\n{"torn":tr');
    assert.equal(await repairTornTail(path), '{"torn":tr'.length);
    assert.equal(await Deno.readTextFile(path), '{"a":1}\n{"b":2}\n');
    assert.equal(await repairTornTail(path), 0);
    assert.equal(await repairTornTail(join(dir, "missing.jsonl")), 0);
    await Deno.writeTextFile(path, "no newline at all");
    await repairTornTail(path);
    assert.equal(await Deno.readTextFile(path), "");
  });
});

Deno.test("removeStaleTemps() removes dot-temp and claimed files only, and only old ones when asked", async () => {
  await withTempDir(async (dir) => {
    const names = [
      ".snapshot.json.0a1b2c3d.tmp",
      ".r1.json.deadbeef.tmp",
      ".r3.json.claimed", // a request its client claimed back, then died
      "snapshot.json",
      ".r2.json", // a request still being written by a client
    ];
    for (const name of names) await Deno.writeTextFile(join(dir, name), "x");
    assert.equal(await removeStaleTemps(dir, { olderThanMs: 60_000 }), 0);
    assert.equal(await removeStaleTemps(dir), 3);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort(),
      [".r2.json", "snapshot.json"],
    );
  });
});

Deno.test("ensurePrivateDir() within a state root refuses a link and makes a group-writable directory of ours private", async () => {
  await withTempDir(async (dir) => {
    const { root, canary } = await rootAndCanary(dir);
    await Deno.symlink(canary, join(root, "logs"));
    await assert.rejects(
      ensurePrivateDir(join(root, "logs", "run-1"), { within: root }),
      LinkRefusedError,
    );
    await Deno.chmod(join(root, "control"), 0o777);
    await ensurePrivateDir(join(root, "control", "requests"), { within: root });
    assert.equal((await Deno.stat(join(root, "control"))).mode! & 0o777, 0o700);
    assert.equal(
      (await Deno.stat(join(root, "control", "requests"))).mode! & 0o777,
      0o700,
    );
  });
});

Deno.test(
  "ensurePrivateDir() refuses a directory that belongs to another user",
  {
    ignore: Deno.uid() !== 0,
  },
  async () => {
    await withTempDir(async (dir) => {
      const { root } = await rootAndCanary(dir);
      await Deno.chown(join(root, "control"), 65534, 65534);
      await assert.rejects(
        ensurePrivateDir(join(root, "control", "outcomes"), { within: root }),
        /belongs to user 65534/,
      );
    });
  },
);

Deno.test("isEnvironmentError() tells a full disk from a bug", () => {
  // The shape Deno gives a failed write on a full file system (seen on tmpfs
  // and /dev/full; the end-to-end tests hit the real thing).
  const full = Object.assign(
    new Error("No space left on device (os error 28): writefile '/x'"),
    { code: "ENOSPC" },
  );
  assert.ok(isEnvironmentError(full));
  assert.ok(
    isEnvironmentError(Object.assign(new Error("EIO"), { code: "EIO" })),
  );
  assert.ok(!isEnvironmentError(new TypeError("x is undefined")));
  assert.ok(!isEnvironmentError(new Deno.errors.NotFound("gone")));
  assert.ok(!isEnvironmentError("No space left on device"));
});
