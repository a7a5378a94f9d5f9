import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPacket } from "../../../lib/packet/mod.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import { applyRepoOverrides } from "../../../lib/workspace/mod.ts";
import { withWorkspaceDirs } from "./_fixture.ts";

Deno.test("applyRepoOverrides() points the packet's repo and its prompts' working directory at the checkout", async () => {
  await withWorkspaceDirs(async ({ packet, checkout }) => {
    const loaded = await loadPacket(packet);
    assert.equal(loaded.prompts[0]!.cwd, join(packet, "workspace"));
    const moved = await applyRepoOverrides(
      loaded,
      { app: checkout },
      "/w.yml",
    );
    assert.deepEqual(moved.repos, [
      { name: "app", path: checkout, default: true },
    ]);
    assert.equal(moved.prompts[0]!.cwd, checkout);
    // The loaded packet itself is left as it was.
    assert.equal(loaded.repos[0]!.path, join(packet, "workspace"));
    assert.equal(await applyRepoOverrides(loaded, {}, "/w.yml"), loaded);
  });
});

Deno.test("applyRepoOverrides() refuses a repo the packet does not declare, naming the workspace file and key", async () => {
  await withWorkspaceDirs(async ({ packet, checkout, write }) => {
    const loaded = await loadPacket(packet);
    const file = await write(
      "w.yml",
      "id: w\nrepos:\n  app: checkout\n  api: checkout\n",
    );
    await assert.rejects(
      applyRepoOverrides(loaded, { api: checkout }, file),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          `Invalid workspace file "${file}", line 4, key "repos.api": packet "${packet}" has no repo "api" (it declares app)`,
    );
  });
});
