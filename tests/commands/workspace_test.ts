import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/run_cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** Runs the CLI in `dir` with a state home inside it. */
function cli(
  dir: string,
  args: string[],
): ReturnType<typeof runCli> {
  return runCli(args, {
    cwd: dir,
    env: { XDG_STATE_HOME: join(dir, "state") },
  });
}

async function packetIn(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, "packet", "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "packet", "prompt_runner_packet.md"),
    "---\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(dir, "packet", "prompts", "01_a.prompt.md"),
    "---\nname: A\n---\nDo it.\n",
  );
}

Deno.test("workspace --help and every subcommand's --help exit 0; a bare or unknown subcommand is a usage error", async () => {
  await withTempDir(async (dir) => {
    const help = await cli(dir, ["workspace", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: prompt_runner workspace COMMAND/);
    for (const sub of ["prepare", "list", "forget"]) {
      const result = await cli(dir, ["workspace", sub, "--help"]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        new RegExp(`^Usage: prompt_runner workspace ${sub}`),
      );
    }
    const bare = await cli(dir, ["workspace"]);
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, "");
    const unknown = await cli(dir, ["workspace", "delete", "x"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: Unknown workspace command "delete"/);
    const flag = await cli(dir, ["workspace", "list", "--yaml"]);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /workspace list --help/);
    const extra = await cli(dir, ["workspace", "forget"]);
    assert.equal(extra.code, 2);
  });
});

Deno.test("workspace prepare exits 2 naming the file, line and key of a bad value, 3 for a path that does not exist", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "bad.yml"), "id: ok\nstate: x\n");
    const bad = await cli(dir, ["workspace", "prepare", "bad.yml"]);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      `error: Invalid workspace file "${
        join(await Deno.realPath(dir), "bad.yml")
      }", line 2, key "state": unknown key (allowed: id, packet, repos, state_root, fleet, notify)\n`,
    );
    await Deno.writeTextFile(join(dir, "gone.yml"), "id: ok\npacket: ./gone\n");
    const gone = await cli(dir, ["workspace", "prepare", "gone.yml"]);
    assert.equal(gone.code, 3);
    assert.match(
      gone.stderr,
      /line 2, key "packet": the packet ".*gone" does not exist/,
    );
    const missing = await cli(dir, ["workspace", "prepare", "nope.yml"]);
    assert.equal(missing.code, 3);
    // Nothing was registered.
    await assert.rejects(
      Deno.stat(join(dir, "state", "prompt_runner", "workspaces.json")),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("workspace list prints a table, or NDJSON with --json; forget keeps the state root", async () => {
  await withTempDir(async (dir) => {
    await packetIn(dir);
    const empty = await cli(dir, ["workspace", "list", "--json"]);
    assert.equal(empty.code, 0);
    assert.equal(empty.stdout, "");
    await Deno.writeTextFile(join(dir, "b.yml"), "id: b\npacket: packet\n");
    await Deno.writeTextFile(join(dir, "a.yml"), "id: a\n");
    for (const file of ["a.yml", "b.yml"]) {
      const prepared = await cli(dir, ["workspace", "prepare", file]);
      assert.equal(prepared.code, 0, prepared.stderr);
    }
    const root = join(
      await Deno.realPath(dir),
      "state",
      "prompt_runner",
      "workspaces",
    );
    const table = await cli(dir, ["workspace", "list"]);
    assert.equal(table.code, 0, table.stderr);
    assert.deepEqual(table.stdout.split("\n"), [
      "ID  LAST RUN   STATE ROOT",
      `a   never run  ${join(root, "a")}`,
      `b   never run  ${join(root, "b")}`,
      "",
    ]);
    const json = await cli(dir, ["workspace", "list", "--json"]);
    const lines = json.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.id, l.packet]), [
      ["a", null],
      ["b", join(await Deno.realPath(dir), "packet")],
    ]);
    const forgot = await cli(dir, ["workspace", "forget", "a"]);
    assert.equal(forgot.code, 0, forgot.stderr);
    assert.match(
      forgot.stdout,
      /^Forgot workspace a; its state root .* is kept\n$/,
    );
    assert.ok((await Deno.stat(join(root, "a", "state_root.json"))).isFile);
    const again = await cli(dir, ["workspace", "forget", "a"]);
    assert.equal(again.code, 3);
    assert.match(
      again.stderr,
      /^error: Unknown workspace "a": it is not prepared$/m,
    );
  });
});
