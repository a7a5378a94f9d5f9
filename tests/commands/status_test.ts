import assert from "node:assert/strict";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

const PROMPTS = {
  "01_notes.prompt.md": promptFile(
    `verify: {contains: [{path: NOTES.md, text: done}]}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: draft}]
    - writes: [{path: NOTES.md, text: done}]`,
  ),
  "02_more.prompt.md": promptFile("simulate: {attempts: [{}]}"),
};

Deno.test("status before any run lists the prompts as not run", async () => {
  await using packet = await makePacket({ prompts: PROMPTS });
  const result = await runCli(["status", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /run {5}no run yet/);
  assert.match(result.stdout, / {2}01 {2}not run +Notes/);
  assert.match(result.stdout, / {2}02 {2}not run +More/);
});

Deno.test("status shows each prompt's attempts and last verifier result", async () => {
  await using packet = await makePacket({ prompts: PROMPTS });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  const result = await runCli(["status", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    / {2}01 {2}completed +Notes +2 attempts: run, repair +verify: pass 1\/1/,
  );
  assert.match(
    result.stdout,
    / {2}02 {2}completed +More +1 attempt: run +verify: pass 0\/0/,
  );
  assert.match(result.stdout, /not running/);
});

Deno.test("status --json prints one NDJSON line with the prompts and their attempts", async () => {
  await using packet = await makePacket({ prompts: PROMPTS });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  const result = await runCli(["status", packet.dir, "--json"]);
  assert.equal(result.code, 0);
  const lines = result.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1);
  const status = JSON.parse(lines[0]!);
  assert.equal(status.packet.name, "test-packet");
  assert.equal(status.lock, null);
  assert.deepEqual(
    status.prompts[0].attempts.map((
      a: { mode: string; status: string },
    ) => [a.mode, a.status]),
    [["run", "verification_failed"], ["repair", "completed"]],
  );
  assert.equal(status.prompts[0].last_verifier.passed, true);
});

Deno.test("status defaults to the current directory", async () => {
  await using packet = await makePacket({ prompts: PROMPTS });
  const result = await runCli(["status"], { cwd: packet.dir });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /packet {2}test-packet/);
});

Deno.test("status outside a packet exits 3 with a hint", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const result = await runCli(["status"], { cwd: dir });
    assert.equal(result.code, 3);
    assert.match(
      result.stderr,
      /it has no prompt_runner_packet\.md\nhint: Name the packet directory/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("status on a corrupt state.json exits 4 naming the file", async () => {
  await using packet = await makePacket({ prompts: PROMPTS });
  await Deno.mkdir(packet.stateRoot);
  await Deno.writeTextFile(`${packet.stateRoot}/state.json`, "{ torn");
  const result = await runCli(["status", packet.dir]);
  assert.equal(result.code, 4);
  assert.match(result.stderr, /^error: Cannot read state ".*state\.json": /);
});
