import assert from "node:assert/strict";
import { join } from "node:path";
import { lockFile } from "../../../lib/shared/lock_file.ts";
import { LinkRefusedError, StateError } from "../../../lib/shared/mod.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

Deno.test("lockFile() waits for the holder and takes the lock once it lets go", async () => {
  await withTempDir(async (root) => {
    const path = join(root, ".lock");
    const first = await lockFile(path, { within: root, timeoutMs: 0 });
    assert.ok(first, "a free lock is taken at once");
    assert.equal((await Deno.lstat(path)).mode! & 0o777, 0o600);
    const second = lockFile(path, { within: root, timeoutMs: 60_000 });
    assert.equal(
      await lockFile(path, { within: root, timeoutMs: 50 }),
      null,
      "held elsewhere: not taken before the timeout",
    );
    first.close();
    const taken = await second;
    assert.ok(taken, "taken once the holder let go");
    taken.close();
  });
});

Deno.test("lockFile() refuses a link or a directory in place of the lock file", async () => {
  await withTempDir(async (root) => {
    const target = join(root, "elsewhere");
    await Deno.symlink(target, join(root, ".lock"));
    await assert.rejects(
      lockFile(join(root, ".lock"), { within: root, timeoutMs: 0 }),
      LinkRefusedError,
    );
    assert.equal(await Deno.lstat(target).catch(() => null), null);
    await Deno.mkdir(join(root, "dir.lock"));
    await assert.rejects(
      lockFile(join(root, "dir.lock"), { within: root, timeoutMs: 0 }),
      (e: unknown) =>
        e instanceof StateError && /not a regular file/.test(e.message),
    );
  });
});
