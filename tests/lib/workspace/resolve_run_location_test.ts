import assert from "node:assert/strict";
import { join } from "node:path";
import { NotFoundError } from "../../../lib/shared/errors.ts";
import {
  defaultStateRoot,
  locateRunTarget,
  resolveRunLocation,
  runTargetOf,
  STATE_DIR_NAME,
} from "../../../lib/workspace/mod.ts";

/** The fields of a location outside any workspace. */
const NO_WORKSPACE = {
  workspace_id: null,
  workspace_file: null,
  repo_overrides: {},
};

// Never the real home: the registry is looked up when a TARGET could be a
// workspace id, or when none is given.
Deno.env.set(
  "XDG_STATE_HOME",
  await Deno.makeTempDir({ prefix: "run_location_state_" }),
);

async function withDirs(
  body: (dirs: { root: string; packet: string; stateRoot: string }) => Promise<
    void
  >,
): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "run_location_test_" });
  try {
    const packet = join(root, "packet");
    await Deno.mkdir(packet);
    await Deno.writeTextFile(join(packet, "prompt_runner_packet.md"), "---\n");
    const stateRoot = join(root, "elsewhere");
    await Deno.mkdir(join(stateRoot, "control"), { recursive: true });
    await body({ root, packet, stateRoot });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function notFound(promise: Promise<unknown>): Promise<NotFoundError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof NotFoundError, String(error));
    assert.equal(error.code, "PACKET_NOT_FOUND");
    return error;
  }
  assert.fail("expected a NotFoundError");
}

Deno.test("defaultStateRoot() is the packet's .prompt_runner folder", () => {
  assert.equal(STATE_DIR_NAME, ".prompt_runner");
  assert.equal(defaultStateRoot("/p"), "/p/.prompt_runner");
});

Deno.test("resolveRunLocation() finds a packet's own state root, relative to cwd or the cwd itself", async () => {
  await withDirs(async ({ root, packet }) => {
    for (
      const needs of ["packet", "state_root", "packet_and_state_root"] as const
    ) {
      assert.deepEqual(
        await resolveRunLocation("packet", { needs, cwd: root }),
        {
          packet_dir: packet,
          state_root: join(packet, ".prompt_runner"),
          default_state_root: true,
          ...NO_WORKSPACE,
        },
      );
      assert.deepEqual(
        await resolveRunLocation(undefined, { needs, cwd: packet }),
        {
          packet_dir: packet,
          state_root: join(packet, ".prompt_runner"),
          default_state_root: true,
          ...NO_WORKSPACE,
        },
      );
    }
  });
});

Deno.test("resolveRunLocation() takes --state-root relative to cwd", async () => {
  await withDirs(async ({ root, packet, stateRoot }) => {
    assert.deepEqual(
      await resolveRunLocation("packet", {
        needs: "packet",
        cwd: root,
        stateRoot: "elsewhere",
      }),
      {
        packet_dir: packet,
        state_root: stateRoot,
        default_state_root: false,
        ...NO_WORKSPACE,
      },
    );
    // A control command needs only the state root: TARGET is not looked at.
    assert.deepEqual(
      await resolveRunLocation("no-such-dir", {
        needs: "state_root",
        cwd: root,
        stateRoot: "elsewhere",
      }),
      {
        packet_dir: null,
        state_root: stateRoot,
        default_state_root: false,
        ...NO_WORKSPACE,
      },
    );
  });
});

Deno.test("resolveRunLocation() takes a state root named as TARGET when a control command needs one", async () => {
  await withDirs(async ({ root, stateRoot }) => {
    assert.deepEqual(
      await resolveRunLocation("elsewhere", { needs: "state_root", cwd: root }),
      {
        packet_dir: null,
        state_root: stateRoot,
        default_state_root: false,
        ...NO_WORKSPACE,
      },
    );
    const error = await notFound(
      resolveRunLocation("elsewhere", { needs: "packet", cwd: root }),
    );
    assert.match(error.message, /it has no prompt_runner_packet\.md$/);
    assert.match(error.hint ?? "", /A packet is a directory/);
  });
});

Deno.test("resolveRunLocation() finds the packet of a state root through its snapshot", async () => {
  await withDirs(async ({ root, packet, stateRoot }) => {
    const error = await notFound(
      resolveRunLocation("elsewhere", {
        needs: "packet_and_state_root",
        cwd: root,
        command: "control amend",
      }),
    );
    assert.equal(
      error.message,
      'Cannot find packet "elsewhere": it has no prompt_runner_packet.md and is not a state root with a recorded run',
    );
    assert.equal(
      error.hint,
      "Name the packet directory: 'prompt_runner control amend PACKET PROMPT_ID'",
    );
    await Deno.writeTextFile(
      join(stateRoot, "control", "snapshot.json"),
      JSON.stringify({ packet_dir: packet }),
    );
    const location = await resolveRunLocation("elsewhere", {
      needs: "packet_and_state_root",
      cwd: root,
    });
    assert.deepEqual(location, {
      packet_dir: packet,
      state_root: stateRoot,
      default_state_root: false,
      ...NO_WORKSPACE,
    });
    assert.deepEqual(runTargetOf(location), {
      packet_dir: packet,
      state_root: stateRoot,
    });
  });
});

Deno.test("resolveRunLocation() says what is missing, as each command always has", async () => {
  await withDirs(async ({ root }) => {
    await Deno.mkdir(join(root, "plain"));
    let error = await notFound(
      resolveRunLocation("gone", { needs: "packet", cwd: root }),
    );
    assert.equal(error.message, 'Cannot find packet "gone": no such directory');
    error = await notFound(
      resolveRunLocation(undefined, {
        needs: "packet",
        cwd: join(root, "plain"),
      }),
    );
    assert.match(error.message, /it has no prompt_runner_packet\.md$/);
    assert.equal(
      error.hint,
      "Name the packet directory or a workspace id, or run the command inside the packet (no prepared workspace's packet or repos contain this directory)",
    );
    error = await notFound(
      resolveRunLocation(undefined, {
        needs: "state_root",
        cwd: join(root, "plain"),
      }),
    );
    assert.equal(
      error.hint,
      "Name a packet directory, a state root or a workspace id (no prepared workspace's packet or repos contain this directory)",
    );
    error = await notFound(
      resolveRunLocation("gone", { needs: "state_root", cwd: root }),
    );
    assert.equal(error.message, 'Cannot find packet "gone": no such directory');
    error = await notFound(
      resolveRunLocation("plain", { needs: "state_root", cwd: root }),
    );
    assert.equal(
      error.message,
      'Cannot find packet "plain": it has no prompt_runner_packet.md and is not a state root',
    );
    assert.equal(
      error.hint,
      "Name a packet directory, or pass --state-root DIR",
    );
  });
});

Deno.test("locateRunTarget() and runTargetOf() turn the library's run target into a location and back", () => {
  assert.deepEqual(locateRunTarget("/p", "/real/p"), {
    packet_dir: "/real/p",
    state_root: "/real/p/.prompt_runner",
    default_state_root: true,
    ...NO_WORKSPACE,
  });
  assert.deepEqual(
    locateRunTarget({ packet_dir: "/p", state_root: "/s" }, "/real/p"),
    {
      packet_dir: "/real/p",
      state_root: "/s",
      default_state_root: false,
      ...NO_WORKSPACE,
    },
  );
  assert.equal(
    runTargetOf({
      packet_dir: "/p",
      state_root: "/p/.prompt_runner",
      default_state_root: true,
      ...NO_WORKSPACE,
    }),
    "/p",
  );
});
