import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

const GOOD = promptFile(`verify: {files_exist: [NOTES.md]}
simulate:
  attempts:
    - messages: ["writing notes"]
      writes: [{path: NOTES.md, text: done}]`);

Deno.test("run on a passing packet exits 0 and prints one line per event", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, "");
  const lines = result.stdout.trimEnd().split("\n");
  assert.equal(lines[0], "▶ 01 Notes · attempt 1 (run) · simulated/simulated");
  assert.equal(lines.at(-2), "■ run completed");
  assert.match(lines.at(-1)!, /^--- \d+ events, 0 tools ---$/);
  assert.ok(lines.includes(">> writing notes"));
  assert.ok(!result.stdout.includes("\x1b["), "no ANSI escapes");
});

Deno.test("run --json prints canonical events as NDJSON and nothing else", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const result = await runCli(["run", packet.dir, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split("\n");
  const events = lines.map((line) => JSON.parse(line));
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  for (const event of events) {
    assert.deepEqual(Object.keys(event), [
      "v",
      "seq",
      "at",
      "run_id",
      "prompt_id",
      "attempt",
      "type",
      "data",
    ]);
  }
  assert.equal(events.at(-1).type, "run_finished");
  assert.equal(events.at(-1).data.status, "completed");
});

Deno.test("run on a failing packet exits 1 and says why on stderr", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{}]}`),
    },
  });
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /^error: the run failed: prompt 01 verification_failed: verification failed: files_exist NOTES\.md: missing/,
  );
  assert.match(
    result.stderr,
    /\nhint: 'prompt_runner status .*' shows each prompt's attempts/,
  );
});

Deno.test("run on a blocked prompt exits 1", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile("simulate: {attempts: [{}]}"),
      "02_b.prompt.md": promptFile(
        "depends_on: [1]\nsimulate: {attempts: [{}]}",
      ),
    },
  });
  const result = await runCli(["run", packet.dir, "02"]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /the run blocked: prompt 02 is blocked: waiting for 01/,
  );
});

Deno.test("run without a packet exits 2 with a hint", async () => {
  const result = await runCli(["run"]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /^error: Missing the packet directory\nhint: /);
});

Deno.test("run with an unknown flag exits 2 and points at --help", async () => {
  const result = await runCli(["run", "x", "--frobnicate"]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^error: Invalid arguments for "run": Unknown option '--frobnicate'\nhint: Run 'prompt_runner run --help'\n$/,
  );
});

Deno.test("run --tool-output everything exits 2 naming the allowed values", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const result = await runCli([
    "run",
    packet.dir,
    "--tool-output",
    "everything",
  ]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /Invalid tool_output "everything": expected one of none, summary, preview, full/,
  );
  await assert.rejects(Deno.stat(packet.stateRoot), Deno.errors.NotFound);
});

Deno.test("run on a missing packet directory exits 3", async () => {
  const result = await runCli(["run", "/nonexistent/packet"]);
  assert.equal(result.code, 3);
  assert.match(
    result.stderr,
    /^error: Cannot find packet "\/nonexistent\/packet": no such directory/,
  );
});

Deno.test("run on a directory without a manifest exits 3", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const result = await runCli(["run", dir]);
    assert.equal(result.code, 3);
    assert.match(result.stderr, /it has no prompt_runner_packet\.md/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run with an unknown prompt id exits 3 listing the ids", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const result = await runCli(["run", packet.dir, "07"]);
  assert.equal(result.code, 3);
  assert.match(result.stderr, /Unknown prompt id "07": the packet has 01/);
});

const MALFORMED: [string, string, Record<string, string>, RegExp][] = [
  [
    "bad YAML",
    "01_bad.prompt.md",
    { "01_bad.prompt.md": "---\nverify: [unclosed\n---\nbody\n" },
    /Invalid YAML front matter in ".*01_bad\.prompt\.md": line \d+/,
  ],
  [
    "an unknown clause",
    "01_bad.prompt.md",
    { "01_bad.prompt.md": promptFile("verify: {file_exists: [a.md]}") },
    /Unknown verify clause "file_exists" in ".*01_bad\.prompt\.md": known clauses are files_exist, files_absent, contains, matches, commands, changed_paths_only/,
  ],
  [
    "a duplicate id",
    "02_b.prompt.md",
    {
      "01_a.prompt.md": promptFile("name: a"),
      "02_b.prompt.md": promptFile("name: b"),
      "1_c.prompt.md": promptFile("name: c"),
    },
    /duplicate prompt id "01" \(also used by ".*01_a\.prompt\.md"\)/,
  ],
  [
    "an id that does not match the file name",
    "03_c.prompt.md",
    { "03_c.prompt.md": promptFile('id: "04"') },
    /Invalid packet file ".*03_c\.prompt\.md": id "04" does not match the file name, which starts with "03"/,
  ],
  [
    "front matter that is not a mapping",
    "01_list.prompt.md",
    { "01_list.prompt.md": "---\n- one\n- two\n---\nbody\n" },
    /Invalid front matter in ".*01_list\.prompt\.md": expected a mapping of keys, found a list/,
  ],
];

for (const [what, file, prompts, message] of MALFORMED) {
  Deno.test(`run on a packet with ${what} exits 2 naming ${file}`, async () => {
    await using packet = await makePacket({ prompts });
    const result = await runCli(["run", packet.dir]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /^error: /);
    assert.match(result.stderr, message);
    assert.doesNotMatch(result.stderr, / {4}at /, "no stack trace");
    await assert.rejects(
      Deno.stat(join(packet.stateRoot, "state.json")),
      Deno.errors.NotFound,
    );
  });
}

Deno.test("run --provider cursor exits 2 saying the adapter is not available", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const result = await runCli(["run", packet.dir, "--provider", "cursor"]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /Provider "cursor" is not available in this version/,
  );
});

Deno.test("run --state-root keeps state outside the packet", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
  });
  const stateRoot = join(packet.root, "elsewhere");
  const result = await runCli(["run", packet.dir, "--state-root", stateRoot]);
  assert.equal(result.code, 0, result.stderr);
  const state = JSON.parse(
    await Deno.readTextFile(join(stateRoot, "state.json")),
  );
  assert.equal(state.prompts["01"].status, "completed");
  await assert.rejects(Deno.stat(packet.stateRoot), Deno.errors.NotFound);
  assert.equal((await Deno.stat(stateRoot)).mode! & 0o777, 0o700);
  assert.equal(
    (await Deno.stat(join(stateRoot, "state.json"))).mode! & 0o777,
    0o600,
  );
});

Deno.test("run refuses a packet with an unknown key before any agent runs (exit 2), naming the file, the key and the key it most likely meant", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": GOOD },
    manifest: "recovry: {max_steers: 1}",
  });
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^error: Invalid packet file ".*prompt_runner_packet\.md": unknown key "recovry"\nhint: Did you mean "recovery"\? Known keys: name, provider, /,
  );
  // Nothing ran: no state root, no notes written.
  await assert.rejects(Deno.stat(packet.stateRoot), Deno.errors.NotFound);
  await assert.rejects(
    Deno.stat(join(packet.workspace, "NOTES.md")),
    Deno.errors.NotFound,
  );
  await Deno.writeTextFile(
    join(packet.dir, "prompt_runner_packet.md"),
    "---\nprovider: simulated\nmax_steer: 5\n---\n",
  );
  const top = await runCli(["run", packet.dir]);
  assert.equal(top.code, 2, top.stderr);
  assert.match(
    top.stderr,
    /unknown key "max_steer"\nhint: Did you mean "recovery\.max_steers"\?/,
  );
});

Deno.test({
  name:
    "run as root refuses Claude's bypassPermissions before starting, saying why and what to use instead (exit 2)",
  ignore: Deno.uid() !== 0,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: {
        "01_notes.prompt.md": promptFile(
          "provider: claude\nagent: {permission_mode: bypassPermissions}\nverify: {files_exist: [NOTES.md]}",
        ),
      },
    });
    const result = await runCli(["run", packet.dir], {
      unsetEnv: ["IS_SANDBOX"],
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /Cannot run prompt 01 as root: agent\.permission_mode bypassPermissions .* which it refuses as root; use acceptEdits with agent\.allowed_tools, or set agent\.env\.IS_SANDBOX: "1"/,
    );
    await assert.rejects(Deno.stat(join(packet.stateRoot, "state.json")));
  },
});

Deno.test("run refuses an agent option that does not apply to the prompt's provider (exit 2, naming the file)", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(
        "agent: {sandbox: read-only}\nverify: {files_exist: [NOTES.md]}",
      ),
    },
  });
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /01_notes\.prompt\.md": agent\.sandbox does not apply to provider "simulated" \(it is for codex\)/,
  );
});
