/**
 * Planning a confined control command: what its worker may touch, and the
 * arguments it runs with.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { planScope } from "../../commands/control/_scope.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { Writer } from "../../commands/_output.ts";
import { main } from "../../main.ts";

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

/** A writer over a buffer, or over a reader that has gone away. */
function capture(closed = false): { writer: Writer; text: () => string } {
  const chunks: Uint8Array[] = [];
  const writer = new Writer({
    write(bytes: Uint8Array): Promise<number> {
      if (closed) return Promise.reject(new Deno.errors.BrokenPipe("gone"));
      chunks.push(bytes.slice());
      return Promise.resolve(bytes.length);
    },
  });
  return {
    writer,
    text: () => new TextDecoder().decode(concat(chunks)),
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

Deno.test("main() with writers of its own gets a confined control command's output through them, and a closed one ends it with 0", async () => {
  await using packet = await makePacket({
    git: false,
    prompts: { "01_a.prompt.md": longPrompt(2, 0) },
  });
  const ran = await runCli(["run", packet.dir]);
  assert.equal(ran.code, 0, ran.stderr);
  const out = capture();
  const err = capture();
  const code = await main(["control", "status", packet.dir, "--json"], {
    stdout: out.writer,
    stderr: err.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(code, 0, err.text());
  assert.equal(JSON.parse(out.text()).status, "completed");
  assert.equal(err.text(), "");

  const refused = capture();
  const missing = await main(["control", "status", join(packet.root, "nope")], {
    stdout: capture().writer,
    stderr: refused.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(missing, 3);
  assert.match(refused.text(), /^error: Cannot find packet /);

  const gone = capture(true);
  const events = await main(["control", "events", packet.dir, "--json"], {
    stdout: gone.writer,
    stderr: err.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(events, 0);
  assert.equal(err.text(), "");
});
