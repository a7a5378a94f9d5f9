import assert from "node:assert/strict";
import { join } from "node:path";
import { NotFoundError, UsageError } from "../../../lib/shared/errors.ts";
import {
  defaultWorkspaceRoot,
  loadWorkspaceFile,
  stateHome,
} from "../../../lib/workspace/mod.ts";
import { withWorkspaceDirs } from "./_fixture.ts";

Deno.test("loadWorkspaceFile() resolves the packet, repos and state root relative to the file", async () => {
  await withWorkspaceDirs(async ({ root, env, packet, checkout, write }) => {
    await Deno.mkdir(join(root, "ops"));
    const file = await write(
      "ops/workspace.yml",
      "id: operator-packet\npacket: ../packet\nrepos:\n  app: ../checkout\n",
    );
    const loaded = await loadWorkspaceFile("ops/workspace.yml", {
      cwd: root,
      env,
    });
    assert.deepEqual(loaded, {
      id: "operator-packet",
      file,
      packet,
      repos: { app: checkout },
      state_root: join(
        root,
        "state",
        "prompt_runner",
        "workspaces",
        "operator-packet",
      ),
      fleet: null,
      notify: [],
    });
    await write(
      "ops/workspace.yml",
      "id: bare\nstate_root: ../roots/bare\nfleet: nats://ops:pw@fleet.example:4222\n",
    );
    const bare = await loadWorkspaceFile(file, { cwd: "/", env });
    assert.equal(bare.fleet, "nats://ops:pw@fleet.example:4222");
    assert.equal(bare.packet, null);
    assert.deepEqual(bare.repos, {});
    assert.equal(bare.state_root, join(root, "roots", "bare"));
  });
});

Deno.test("loadWorkspaceFile() resolves a symlinked file's paths beside the file it links to, and names the link as the file", async () => {
  await withWorkspaceDirs(async ({ root, env, packet, checkout, write }) => {
    // ops/workspace.yml is the real file; elsewhere/ has a different packet.
    await Deno.mkdir(join(root, "ops"));
    await write(
      "ops/workspace.yml",
      "id: linked\npacket: ../packet\nrepos:\n  app: ../checkout\nstate_root: ../roots/linked\n",
    );
    await Deno.mkdir(join(root, "elsewhere", "deeper"), { recursive: true });
    const link = join(root, "elsewhere", "deeper", "workspace.yml");
    await Deno.symlink(join(root, "ops", "workspace.yml"), link);
    const loaded = await loadWorkspaceFile(link, { cwd: "/", env });
    assert.deepEqual(loaded, {
      id: "linked",
      file: link,
      packet,
      repos: { app: checkout },
      state_root: join(root, "roots", "linked"),
      fleet: null,
      notify: [],
    });
  });
});

Deno.test("the default state root is under XDG_STATE_HOME, else ~/.local/state", () => {
  assert.equal(
    defaultWorkspaceRoot("x", { env: { XDG_STATE_HOME: "/s", HOME: "/h" } }),
    "/s/prompt_runner/workspaces/x",
  );
  for (const xdg of [undefined, "", "relative/dir"]) {
    assert.equal(
      defaultWorkspaceRoot("x", { env: { XDG_STATE_HOME: xdg, HOME: "/h" } }),
      "/h/.local/state/prompt_runner/workspaces/x",
    );
  }
  assert.throws(() => stateHome({ env: {} }), UsageError);
});

/** Loads `text` as a workspace file and returns the error it raises. */
async function refusal(
  text: string,
  kind: typeof UsageError | typeof NotFoundError = UsageError,
): Promise<{ message: string; file: string }> {
  let result: { message: string; file: string } | null = null;
  await withWorkspaceDirs(async ({ root, env, write }) => {
    const file = await write("workspace.yml", text);
    try {
      await loadWorkspaceFile(file, { cwd: root, env });
    } catch (error) {
      assert.ok(error instanceof kind, String(error));
      assert.equal(error.exitCode, kind === UsageError ? 2 : 3);
      result = { message: error.message, file };
      return;
    }
    assert.fail(`expected ${kind.name} for ${JSON.stringify(text)}`);
  });
  return result!;
}

Deno.test("every refused workspace file is named with the key and its line", async () => {
  const cases: [string, string, string, typeof UsageError][] = [
    ["id: ok\nprovider: claude\n", "2", "provider", UsageError],
    ["# a comment\n\nid: Bad_Id\n", "3", "id", UsageError],
    ["id: ok\npacket: 12\n", "2", "packet", UsageError],
    ["id: ok\nrepos: [a, b]\n", "2", "repos", UsageError],
    [
      "id: ok\nrepos:\n  app: checkout\n  'bad name': y\n",
      "4",
      "repos.bad name",
      UsageError,
    ],
    ["id: ok\nstate_root: ''\n", "2", "state_root", UsageError],
    ["id: ok\nfleet: http://x:1\n", "2", "fleet", UsageError],
    ["id: ok\npacket: ./nowhere\n", "2", "packet", NotFoundError],
    ["id: ok\nrepos:\n  app: ../gone\n", "3", "repos.app", NotFoundError],
    ["packet: .\n", "1", "id", UsageError],
    ["id: " + "a".repeat(65) + "\n", "1", "id", UsageError],
  ];
  for (const [text, line, key, kind] of cases) {
    const { message, file } = await refusal(text, kind);
    assert.ok(
      message.startsWith(
        `Invalid workspace file "${file}", line ${line}, key "${key}": `,
      ),
      `${JSON.stringify(text)} → ${message}`,
    );
  }
});

Deno.test("a workspace file that is not YAML, not a mapping, or binds a non-packet is refused (exit 2)", async () => {
  let { message, file } = await refusal("id: ok\nid: again\n");
  assert.match(
    message,
    new RegExp(`^Invalid workspace file "${file}", line 2: `),
  );
  ({ message, file } = await refusal("- id: ok\n"));
  assert.equal(
    message,
    `Invalid workspace file "${file}", line 1: expected a mapping with an id, found a list`,
  );
  ({ message, file } = await refusal("id: ok\npacket: .\n"));
  assert.match(message, /line 2, key "packet": ".*" is not a packet directory/);
});

Deno.test("a missing workspace file is not found (exit 3)", async () => {
  await withWorkspaceDirs(async ({ root, env }) => {
    await assert.rejects(
      loadWorkspaceFile("nope.yml", { cwd: root, env }),
      (error: unknown) =>
        error instanceof NotFoundError &&
        error.code === "WORKSPACE_NOT_FOUND" &&
        error.message ===
          `Cannot find workspace file "${join(root, "nope.yml")}"`,
    );
  });
});
