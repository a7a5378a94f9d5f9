import assert from "node:assert/strict";
import { join } from "node:path";
import { NotFoundError, UsageError } from "../../../lib/shared/errors.ts";
import {
  forgetWorkspace,
  prepareWorkspace,
  resolveRunLocation,
} from "../../../lib/workspace/mod.ts";
import { withWorkspaceDirs, type WorkspaceDirs } from "./_fixture.ts";

/** Prepares `NAME.yml` (binding the packet, overriding `app`) as id NAME. */
async function prepared(
  dirs: WorkspaceDirs,
  id: string,
  text = `id: ${id}\npacket: packet\nrepos:\n  app: checkout\n`,
): Promise<{ file: string; stateRoot: string }> {
  const file = await dirs.write(`${id}.yml`, text);
  const { state_root } = await prepareWorkspace(file, {
    cwd: dirs.root,
    env: dirs.env,
  });
  return { file, stateRoot: state_root };
}

Deno.test("a workspace id as TARGET resolves to its state root, packet and repo overrides", async () => {
  await withWorkspaceDirs(async (dirs) => {
    const { root, env, packet, checkout } = dirs;
    const { file, stateRoot } = await prepared(dirs, "ops");
    // The id comes first, even where a directory has its name.
    await Deno.mkdir(join(root, "ops"));
    for (const needs of ["packet", "packet_and_state_root"] as const) {
      assert.deepEqual(
        await resolveRunLocation("ops", { needs, cwd: root, env }),
        {
          packet_dir: packet,
          state_root: stateRoot,
          default_state_root: false,
          workspace_id: "ops",
          workspace_file: file,
          repo_overrides: { app: checkout },
        },
      );
    }
    const control = await resolveRunLocation("ops", {
      needs: "state_root",
      cwd: "/",
      env,
    });
    assert.equal(control.state_root, stateRoot);
    assert.equal(control.workspace_id, "ops");
    // A control command needs only the root: the file may have moved.
    await Deno.remove(file);
    assert.equal(
      (await resolveRunLocation("ops", { needs: "state_root", cwd: root, env }))
        .state_root,
      stateRoot,
    );
    await assert.rejects(
      resolveRunLocation("ops", { needs: "packet", cwd: root, env }),
      (error: unknown) =>
        error instanceof NotFoundError && error.message.includes(file),
    );
  });
});

Deno.test("a workspace's state root named as a path resolves to the workspace", async () => {
  await withWorkspaceDirs(async (dirs) => {
    const { stateRoot } = await prepared(dirs, "ops");
    const location = await resolveRunLocation(stateRoot, {
      needs: "packet",
      cwd: "/",
      env: dirs.env,
    });
    assert.equal(location.workspace_id, "ops");
    assert.equal(location.packet_dir, dirs.packet);
    assert.equal(location.state_root, stateRoot);
  });
});

Deno.test("--workspace FILE resolves without a TARGET; a TARGET or --state-root with it is a usage error", async () => {
  await withWorkspaceDirs(async (dirs) => {
    const { root, env } = dirs;
    const file = await dirs.write(
      "loose.yml",
      "id: loose\npacket: packet\nstate_root: roots/loose\n",
    );
    const location = await resolveRunLocation(undefined, {
      needs: "packet",
      cwd: root,
      env,
      workspace: "loose.yml",
    });
    assert.equal(location.workspace_id, "loose");
    assert.equal(location.workspace_file, file);
    assert.equal(location.state_root, join(root, "roots", "loose"));
    for (
      const [target, stateRoot] of [["packet", undefined], [undefined, "x"]]
    ) {
      await assert.rejects(
        resolveRunLocation(target, {
          needs: "state_root",
          cwd: root,
          env,
          workspace: "loose.yml",
          stateRoot,
        }),
        UsageError,
      );
    }
    await assert.rejects(
      resolveRunLocation("packet", {
        needs: "packet",
        cwd: root,
        env,
        packet: "packet",
      }),
      /--packet DIR goes with --workspace FILE or a workspace id/,
    );
  });
});

Deno.test("a workspace without a packet binding needs --packet for a command that reads the packet", async () => {
  await withWorkspaceDirs(async (dirs) => {
    const { root, env, packet } = dirs;
    const { stateRoot } = await prepared(dirs, "bare", "id: bare\n");
    await assert.rejects(
      resolveRunLocation("bare", {
        needs: "packet_and_state_root",
        cwd: root,
        env,
        command: "control amend",
      }),
      (error: unknown) =>
        error instanceof UsageError && error.exitCode === 2 &&
        error.code === "NO_PACKET_BINDING" &&
        error.hint ===
          "Use 'prompt_runner control amend --workspace WORKSPACE_YML --packet DIR ...', or add 'packet:' to the workspace file",
    );
    assert.equal(
      (await resolveRunLocation("bare", {
        needs: "state_root",
        cwd: root,
        env,
      }))
        .state_root,
      stateRoot,
    );
    const given = await resolveRunLocation(undefined, {
      needs: "packet_and_state_root",
      cwd: root,
      env,
      workspace: "bare.yml",
      packet: "packet",
    });
    assert.equal(given.packet_dir, packet);
    assert.equal(given.state_root, stateRoot);
  });
});

Deno.test("with no TARGET, the workspace related to the current directory is found: its packet, a repo, a subdirectory", async () => {
  await withWorkspaceDirs(async (dirs) => {
    const { root, env, packet, checkout } = dirs;
    const { stateRoot } = await prepared(dirs, "ops");
    for (
      const cwd of [
        packet,
        join(packet, "prompts"),
        checkout,
        join(checkout, "src"),
      ]
    ) {
      const location = await resolveRunLocation(undefined, {
        needs: "state_root",
        cwd,
        env,
      });
      assert.equal(location.workspace_id, "ops", cwd);
      assert.equal(location.state_root, stateRoot, cwd);
    }
    // A packet with local state is its own TARGET.
    await Deno.mkdir(join(packet, ".prompt_runner"));
    const local = await resolveRunLocation(undefined, {
      needs: "state_root",
      cwd: packet,
      env,
    });
    assert.equal(local.workspace_id, null);
    assert.equal(local.state_root, join(packet, ".prompt_runner"));
    // Elsewhere, nothing relates: not found (exit 3).
    await Deno.mkdir(join(root, "elsewhere"));
    await assert.rejects(
      resolveRunLocation(undefined, {
        needs: "state_root",
        cwd: join(root, "elsewhere"),
        env,
      }),
      (error: unknown) =>
        error instanceof NotFoundError && error.exitCode === 3,
    );
  });
});

Deno.test("several related workspaces are an ambiguity (exit 2) that lists their ids", async () => {
  await withWorkspaceDirs(async (dirs) => {
    await prepared(dirs, "ops-a");
    await prepared(dirs, "ops-b", "id: ops-b\nrepos:\n  app: checkout\n");
    await assert.rejects(
      resolveRunLocation(undefined, {
        needs: "state_root",
        cwd: join(dirs.checkout, "src"),
        env: dirs.env,
        command: "control status",
      }),
      (error: unknown) =>
        error instanceof UsageError && error.exitCode === 2 &&
        error.code === "AMBIGUOUS_WORKSPACE" &&
        /: ops-a, ops-b$/.test(error.message) &&
        error.hint === "Name one: 'prompt_runner control status ops-a'",
    );
    // Only ops-a relates to the packet.
    const location = await resolveRunLocation(undefined, {
      needs: "state_root",
      cwd: dirs.packet,
      env: dirs.env,
    });
    assert.equal(location.workspace_id, "ops-a");
  });
});

Deno.test("a forgotten workspace id is not found (exit 3) and says no workspace is prepared", async () => {
  await withWorkspaceDirs(async (dirs) => {
    await prepared(dirs, "ops");
    await forgetWorkspace("ops", { env: dirs.env });
    await assert.rejects(
      resolveRunLocation("ops", {
        needs: "state_root",
        cwd: dirs.root,
        env: dirs.env,
      }),
      (error: unknown) =>
        error instanceof NotFoundError && error.exitCode === 3 &&
        /No workspace "ops" is prepared/.test(error.hint ?? ""),
    );
  });
});
