import assert from "node:assert/strict";
import { join } from "node:path";
import {
  NotFoundError,
  StateError,
  UsageError,
} from "../../../lib/shared/errors.ts";
import {
  forgetWorkspace,
  listWorkspaces,
  lookupWorkspace,
  prepareWorkspace,
  readRegistry,
  readStateRootTag,
  registryFile,
} from "../../../lib/workspace/mod.ts";
import { withWorkspaceDirs } from "./_fixture.ts";

Deno.test("prepareWorkspace() makes a private, tagged state root and registers the id", async () => {
  await withWorkspaceDirs(async ({ root, env, packet, write }) => {
    const file = await write("ws.yml", "id: ops\npacket: packet\n");
    const prepared = await prepareWorkspace("ws.yml", { cwd: root, env });
    const stateRoot = join(root, "state", "prompt_runner", "workspaces", "ops");
    assert.equal(prepared.state_root, stateRoot);
    assert.equal((await Deno.stat(stateRoot)).mode! & 0o777, 0o700);
    assert.deepEqual(await readStateRootTag(stateRoot), {
      v: 1,
      kind: "workspace",
      id: "ops",
      manifest: file,
      packet,
    });
    assert.deepEqual(await readRegistry({ env }), { ops: stateRoot });
    assert.equal((await Deno.stat(registryFile({ env }))).mode! & 0o777, 0o600);
    // Preparing again changes nothing.
    await prepareWorkspace(file, { cwd: "/", env });
    assert.deepEqual(await readRegistry({ env }), { ops: stateRoot });
    assert.equal(await lookupWorkspace("ops", { env }), stateRoot);
    assert.equal(await lookupWorkspace("other", { env }), null);
  });
});

Deno.test("prepareWorkspace() moves an id whose state_root changed, and refuses another workspace's root", async () => {
  await withWorkspaceDirs(async ({ root, env, write }) => {
    await write("a.yml", "id: a\nstate_root: roots/shared\n");
    await prepareWorkspace("a.yml", { cwd: root, env });
    await write("b.yml", "id: b\nstate_root: roots/shared\n");
    await assert.rejects(
      prepareWorkspace("b.yml", { cwd: root, env }),
      (error: unknown) =>
        error instanceof StateError &&
        /belongs to workspace "a"/.test(error.message),
    );
    await write("a.yml", "id: a\nstate_root: roots/moved\n");
    const moved = await prepareWorkspace("a.yml", { cwd: root, env });
    assert.equal(moved.moved_from, join(root, "roots", "shared"));
    assert.deepEqual(await readRegistry({ env }), {
      a: join(root, "roots", "moved"),
    });
  });
});

Deno.test("prepareWorkspace() refuses a state root inside the packet", async () => {
  await withWorkspaceDirs(async ({ root, env, packet, write }) => {
    await write(
      "ws.yml",
      "id: ops\npacket: packet\nstate_root: packet/.state\n",
    );
    await assert.rejects(
      prepareWorkspace("ws.yml", { cwd: root, env }),
      UsageError,
    );
    await assert.rejects(
      Deno.stat(join(packet, ".state")),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("listWorkspaces() shows each workspace and its last run", async () => {
  await withWorkspaceDirs(async ({ root, env, write }) => {
    assert.deepEqual(await listWorkspaces({ env }), []);
    await write("b.yml", "id: b\npacket: packet\n");
    await write("a.yml", "id: a\n");
    await prepareWorkspace("b.yml", { cwd: root, env });
    const a = await prepareWorkspace("a.yml", { cwd: root, env });
    await Deno.mkdir(join(a.state_root, "control"));
    await Deno.writeTextFile(
      join(a.state_root, "control", "snapshot.json"),
      JSON.stringify({
        v: 1,
        run_id: "r1",
        status: "completed",
        run_started_at: "2026-11-30T00:00:00.000Z",
        updated_at: "2026-11-30T00:01:00.000Z",
      }),
    );
    const listed = await listWorkspaces({ env });
    assert.deepEqual(listed.map((w) => w.id), ["a", "b"]);
    assert.deepEqual(listed[0]!.last_run, {
      run_id: "r1",
      status: "completed",
      started_at: "2026-11-30T00:00:00.000Z",
      updated_at: "2026-11-30T00:01:00.000Z",
    });
    assert.equal(listed[0]!.packet, null);
    assert.equal(listed[1]!.last_run, null);
    assert.equal(listed[1]!.packet, join(root, "packet"));
    await Deno.remove(a.state_root, { recursive: true });
    assert.equal(
      (await listWorkspaces({ env }))[0]!.problem,
      "state root missing or untagged",
    );
  });
});

Deno.test("forgetWorkspace() keeps the run data unless asked to delete it; an unknown id is not found", async () => {
  await withWorkspaceDirs(async ({ root, env, write }) => {
    await write("a.yml", "id: a\n");
    await write("b.yml", "id: b\n");
    const a = await prepareWorkspace("a.yml", { cwd: root, env });
    const b = await prepareWorkspace("b.yml", { cwd: root, env });
    assert.equal(
      (await forgetWorkspace("a", { env })).state_root,
      a.state_root,
    );
    assert.ok((await Deno.stat(join(a.state_root, "state_root.json"))).isFile);
    assert.deepEqual(Object.keys(await readRegistry({ env })), ["b"]);
    await assert.rejects(forgetWorkspace("a", { env }), NotFoundError);
    await forgetWorkspace("b", { env, remove: true });
    await assert.rejects(Deno.stat(b.state_root), Deno.errors.NotFound);
    assert.deepEqual(await readRegistry({ env }), {});
  });
});

Deno.test("a corrupt registry is a state error naming the file", async () => {
  await withWorkspaceDirs(async ({ env }) => {
    const file = registryFile({ env });
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, "[1]");
    await assert.rejects(
      readRegistry({ env }),
      (error: unknown) =>
        error instanceof StateError && error.message.includes(file),
    );
  });
});
