/**
 * Planning a confined control command: what its worker may touch, and the
 * arguments it runs with.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { planScope } from "../../commands/control/_scope.ts";
import { makePacket } from "../_helpers/temp_packet.ts";

Deno.test("planScope() narrows a control command to its state root and packet, with TARGET and --state-root made absolute", async () => {
  await using packet = await makePacket({ git: false });
  await Deno.mkdir(join(packet.stateRoot, "control"), { recursive: true });
  const status = await planScope("status", ["packet", "--json"], packet.root);
  assert.deepEqual(status.argv, [
    "--json",
    `--state-root=${packet.stateRoot}`,
    "--",
  ]);
  assert.deepEqual(
    (status.read as string[]).filter((p) => p !== "/etc/passwd"),
    [packet.stateRoot, packet.dir],
  );
  assert.deepEqual(status.write, [packet.stateRoot]);

  const steer = await planScope("steer", ["packet", "-x", "y"], packet.root);
  // "-x" is not a steer flag: the command itself reports it, reading only.
  assert.equal(steer.location, null);
  assert.equal(steer.read, true);
  assert.deepEqual(steer.write, []);

  const words = await planScope(
    "steer",
    ["packet", "--", "-1", "more"],
    packet.root,
  );
  assert.deepEqual(words.argv, [
    `--state-root=${packet.stateRoot}`,
    "--",
    "-1",
    "more",
  ]);
});

Deno.test("planScope() lets amend --persist write the packet's prompts/ only, and keeps a default state root implicit", async () => {
  await using packet = await makePacket({ git: false });
  const plan = await planScope(
    "amend",
    ["01", "--add-file", "a.md", "--reason", "why", "--persist"],
    packet.dir,
  );
  assert.deepEqual(plan.write, [packet.stateRoot, join(packet.dir, "prompts")]);
  assert.deepEqual(plan.argv, [
    "--add-file=a.md",
    "--reason=why",
    "--persist",
    "--",
    packet.dir,
    "01",
  ]);
  const other = join(packet.root, "elsewhere");
  const relax = await planScope(
    "relax",
    ["packet", "01", "--drop", "commands", "--state-root", "elsewhere"],
    packet.root,
  );
  assert.deepEqual(relax.write, [other]);
  assert.ok(relax.argv.includes(`--state-root=${other}`));
});

Deno.test("planScope() of a run that cannot be found reads only, and writes nothing", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const plan = await planScope("view", ["--log-mode", "verbose"], cwd);
    assert.equal(plan.location, null);
    assert.equal(plan.read, true);
    assert.deepEqual(plan.write, []);
    assert.deepEqual(plan.argv, ["--log-mode", "verbose"]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
