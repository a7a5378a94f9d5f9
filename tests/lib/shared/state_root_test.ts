import assert from "node:assert/strict";
import { join } from "node:path";
import { StateError } from "../../../lib/shared/errors.ts";
import {
  openStateRoot,
  systemDirectory,
} from "../../../lib/shared/state_root.ts";
import {
  clearStateRoot,
  isStateRootEntry,
  madeByPromptRunner,
  readStateRootContents,
  STATE_ROOT_ENTRIES,
} from "../../../lib/shared/state_root_entries.ts";
import { LOCK_FILE } from "../../../lib/shared/run_lock.ts";
import { STATE_FILE } from "../../../lib/status/state_file.ts";
import { STATE_ROOT_TAG } from "../../../lib/workspace/registry.ts";
import { controlPaths } from "../../../lib/control/paths.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

async function mode(path: string): Promise<number> {
  return (await Deno.lstat(path)).mode! & 0o7777;
}

async function names(dir: string): Promise<string[]> {
  return (await readStateRootContents(dir)).names;
}

Deno.test("openStateRoot() refuses a sticky shared directory (mode 1777) and leaves its mode alone, even with repair", async () => {
  await withTempDir(async (dir) => {
    const shared = join(dir, "shared");
    await Deno.mkdir(shared);
    await Deno.chmod(shared, 0o1777);
    await assert.rejects(
      openStateRoot(shared, { create: true, repair: true }),
      (error: unknown) =>
        error instanceof StateError && error.code === "STATE_ROOT_SHARED" &&
        error.exitCode === 4 &&
        /it is a shared directory \(mode 1777/.test(error.message),
    );
    assert.equal(await mode(shared), 0o1777);
    assert.deepEqual(await names(shared), []);
  });
});

Deno.test("openStateRoot() with repair refuses, and never changes, a writable directory it cannot tell it made: empty, or holding someone's files", async () => {
  await withTempDir(async (dir) => {
    const empty = join(dir, "empty");
    await Deno.mkdir(empty);
    await Deno.chmod(empty, 0o775);
    const theirs = join(dir, "theirs");
    await Deno.mkdir(theirs);
    await Deno.writeTextFile(join(theirs, "notes.txt"), "mine\n");
    await Deno.mkdir(join(theirs, "logs"));
    await Deno.chmod(theirs, 0o777);
    for (
      const [path, before, holds] of [
        [empty, 0o775, "it is empty"],
        [theirs, 0o777, 'it holds "notes.txt"'],
      ] as const
    ) {
      await assert.rejects(
        openStateRoot(path, { create: true, repair: true }),
        (error: unknown) =>
          error instanceof StateError &&
          error.code === "STATE_ROOT_NOT_PRIVATE" &&
          error.message.includes("prompt_runner cannot tell it made it") &&
          error.message.includes(holds),
      );
      assert.equal(await mode(path), before);
    }
  });
});

Deno.test("openStateRoot() leaves the mode of a directory readable by others alone: it changes no mode it does not have to", async () => {
  await withTempDir(async (dir) => {
    const open = join(dir, "open");
    await Deno.mkdir(open);
    await Deno.chmod(open, 0o755);
    assert.equal(
      await openStateRoot(open, { repair: true }),
      await Deno.realPath(open),
    );
    assert.equal(await mode(open), 0o755);
  });
});

Deno.test("openStateRoot() with repair makes a writable root holding only what prompt_runner makes private again, and warns", async () => {
  await withTempDir(async (dir) => {
    for (
      const [name, entries] of [
        ["run", [
          "state.json",
          "logs/",
          "control/",
          ".state.json.0a1b2c3d.tmp",
        ]],
        ["tagged", ["state_root.json", "operator-notes.txt"]],
      ] as const
    ) {
      const root = join(dir, name);
      await Deno.mkdir(root);
      for (const entry of entries) {
        if (entry.endsWith("/")) await Deno.mkdir(join(root, entry));
        else await Deno.writeTextFile(join(root, entry), "{}");
      }
      await Deno.chmod(root, 0o777);
      const warnings: string[] = [];
      await openStateRoot(root, {
        repair: true,
        warn: (message) => {
          warnings.push(message);
        },
      });
      assert.equal(await mode(root), 0o700, name);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /\(mode 777\); it is private again \(700\)/);
    }
  });
});

Deno.test("openStateRoot() refuses the home directory, whatever it holds", async () => {
  await withTempDir(async (dir) => {
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const saved = Deno.env.get("HOME");
    Deno.env.set("HOME", home);
    try {
      await assert.rejects(
        openStateRoot(home, { create: true, repair: true }),
        (error: unknown) =>
          error instanceof StateError && error.code === "STATE_ROOT_SYSTEM" &&
          /it is the home directory/.test(error.message),
      );
    } finally {
      if (saved === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", saved);
    }
  });
});

Deno.test("systemDirectory() names /, the system and shared directories and the home directory, and nothing below them", () => {
  assert.equal(systemDirectory("/"), "the root directory");
  assert.equal(systemDirectory("/./"), "the root directory");
  for (
    const dir of [
      "/tmp",
      "/usr",
      "/usr/local",
      "/etc",
      "/var",
      "/var/tmp",
      "/var/lib",
      "/home",
      "/root",
      "/lib64",
      "/dev/shm",
      "/tmp/../usr/",
    ]
  ) {
    assert.equal(systemDirectory(dir, null), "a system directory", dir);
  }
  assert.equal(systemDirectory("/home/me", "/home/me"), "the home directory");
  for (
    const dir of ["/tmp/mine", "/var/lib/pr/ops", "/home/me/state", "/srv/x"]
  ) {
    assert.equal(systemDirectory(dir, "/home/me"), null, dir);
  }
});

Deno.test("STATE_ROOT_ENTRIES names what the runner, the control plane and a workspace make at the top of a state root", () => {
  const paths = controlPaths("/r");
  const made = [
    LOCK_FILE,
    STATE_FILE,
    STATE_ROOT_TAG,
    ...[paths.dir, paths.interventions, paths.amendments].map((p) =>
      p.slice(3)
    ),
    "logs",
    "tmp",
  ];
  assert.deepEqual(Object.keys(STATE_ROOT_ENTRIES).sort(), made.sort());
  assert.ok(isStateRootEntry(".state.json.0a1b2c3d.tmp"));
  assert.ok(isStateRootEntry("control.link-refused-20261201T182815826Z"));
  assert.ok(!isStateRootEntry("notes.txt"));
  assert.ok(!isStateRootEntry(".git"));
});

Deno.test("madeByPromptRunner() is true for a root of its entries or with its tag, false for an empty directory or someone's files", async () => {
  await withTempDir(async (dir) => {
    assert.equal(madeByPromptRunner(await readStateRootContents(dir)), false);
    await Deno.writeTextFile(join(dir, "state.json"), "{}");
    assert.equal(madeByPromptRunner(await readStateRootContents(dir)), true);
    await Deno.writeTextFile(join(dir, "README.md"), "mine");
    const contents = await readStateRootContents(dir);
    assert.deepEqual(contents.foreign, ["README.md"]);
    assert.equal(madeByPromptRunner(contents), false);
    await Deno.writeTextFile(join(dir, "state_root.json"), "{}");
    assert.equal(madeByPromptRunner(await readStateRootContents(dir)), true);
  });
});

Deno.test("clearStateRoot() deletes only what prompt_runner makes, the tag last, and keeps the rest; links are never followed", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "root");
    const outside = join(dir, "outside");
    await Deno.mkdir(join(outside, "sub"), { recursive: true });
    await Deno.writeTextFile(join(outside, "sub", "precious"), "keep");
    await Deno.mkdir(join(root, "logs", "run-1"), { recursive: true });
    await Deno.writeTextFile(
      join(root, "logs", "run-1", "01-attempt-1.log"),
      "",
    );
    await Deno.symlink(outside, join(root, "logs", "planted"));
    await Deno.mkdir(join(root, "control"));
    await Deno.writeTextFile(join(root, "state.json"), "{}");
    await Deno.writeTextFile(join(root, "state_root.json"), "{}");
    await Deno.writeTextFile(join(root, "run.lock"), "{}");
    await Deno.writeTextFile(join(root, ".state.json.0a1b2c3d.tmp"), "");
    await Deno.writeTextFile(join(root, "notes.txt"), "mine");
    await Deno.mkdir(join(root, "src"));
    // Our names, but links or of the wrong kind: kept.
    await Deno.symlink(outside, join(root, "amendments"));
    await Deno.symlink(join(outside, "sub", "precious"), join(root, "tmp"));
    await Deno.mkdir(
      join(root, "interventions.link-refused-20261201T182815826Z"),
    );
    const cleared = await clearStateRoot(root, { except: ["run.lock"] });
    assert.deepEqual(cleared.deleted, [
      ".state.json.0a1b2c3d.tmp",
      "control/",
      "logs/",
      "state.json",
      "state_root.json",
    ]);
    assert.deepEqual(cleared.kept, [
      "amendments (a link, not followed)",
      "interventions.link-refused-20261201T182815826Z/",
      "notes.txt",
      "src/",
      "tmp (a link, not followed)",
    ]);
    assert.deepEqual(await names(root), [
      "amendments",
      "interventions.link-refused-20261201T182815826Z",
      "notes.txt",
      "run.lock",
      "src",
      "tmp",
    ]);
    assert.equal(
      await Deno.readTextFile(join(outside, "sub", "precious")),
      "keep",
    );
  });
});
