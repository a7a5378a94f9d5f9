import assert from "node:assert/strict";
import { join } from "node:path";
import { listDir, readJsonl, startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** A prompt whose simulated agent writes NOTES.md, so `files_exist: [NOTES.md]` passes. */
const NOTES = promptFile(`verify:
  files_exist: [NOTES.md]
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: done}]`);

/** Like NOTES, but its contract also needs a command that fails. */
const FAILING = promptFile(`verify:
  files_exist: [NOTES.md]
  commands: [{exec: "false"}]
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: done}]`);

async function state(
  stateRoot: string,
): Promise<Record<string, Record<string, unknown>>> {
  return JSON.parse(await Deno.readTextFile(join(stateRoot, "state.json")))
    .prompts;
}

async function nothingRecorded(stateRoot: string): Promise<void> {
  assert.deepEqual(await listDir(join(stateRoot, "amendments")), []);
  assert.deepEqual(
    await readJsonl(join(stateRoot, "control", "log.jsonl")),
    [],
  );
}

Deno.test("control amend without --reason exits 2 and records nothing", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const result = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "lib/foo.ts",
  ]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^error: An amendment needs a reason: --reason is mandatory\nhint: .*never defaulted/,
  );
  const blank = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "x",
    "--reason",
    "  ",
  ]);
  assert.equal(blank.code, 2);
  await nothingRecorded(packet.stateRoot);
});

Deno.test("control relax without --confirm exits 2 and records nothing", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": FAILING },
  });
  const result = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--drop",
    "commands",
    "--reason",
    "flaky",
  ]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /^error: Relaxing a contract needs confirmation: pass --confirm\nhint: /,
  );
  const noReason = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--drop",
    "commands",
    "--confirm",
  ]);
  assert.equal(noReason.code, 2);
  assert.match(noReason.stderr, /--reason is mandatory/);
  const noDrop = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--reason",
    "r",
    "--confirm",
  ]);
  assert.equal(noDrop.code, 2);
  assert.match(noDrop.stderr, /Name the clause to drop/);
  await nothingRecorded(packet.stateRoot);
});

Deno.test("control amend and relax with an unknown clause exit 2 naming the known ones", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const result = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--drop",
    "file_exists",
    "--reason",
    "r",
    "--confirm",
  ]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /^error: Unknown clause "file_exists": known clauses are files_exist, files_absent, contains, matches, commands, changed_paths_only\n/,
  );
  const two = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "a",
    "--add-path",
    "b",
    "--reason",
    "r",
  ]);
  assert.equal(two.code, 2);
  assert.match(
    two.stderr,
    /Give exactly one addition per amend, found --add-file and --add-path/,
  );
  const none = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--reason",
    "r",
  ]);
  assert.equal(none.code, 2);
  assert.match(
    none.stderr,
    /Name what to add: one of --add-file, --add-path, --add-command, --add-contains/,
  );
  const contains = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-contains",
    "NOTES.md",
    "--reason",
    "r",
  ]);
  assert.equal(contains.code, 2);
  assert.match(contains.stderr, /expected PATH=TEXT/);
  await nothingRecorded(packet.stateRoot);
});

Deno.test("control amend on an unknown prompt exits 3; a prompt id with path tricks exits 2", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const unknown = await runCli([
    "control",
    "amend",
    packet.dir,
    "07",
    "--add-file",
    "x",
    "--reason",
    "r",
  ]);
  assert.equal(unknown.code, 3);
  assert.match(
    unknown.stderr,
    /^error: Unknown prompt id "07" in packet ".*": the packet has 01\n/,
  );
  const tricky = await runCli([
    "control",
    "amend",
    packet.dir,
    "../../etc/passwd",
    "--add-file",
    "x",
    "--reason",
    "r",
  ]);
  assert.equal(tricky.code, 2);
  assert.match(
    tricky.stderr,
    /Invalid prompt id "\.\.\/\.\.\/etc\/passwd": expected digits/,
  );
  const contract = await runCli(["control", "contract", packet.dir, "42"]);
  assert.equal(contract.code, 3);
  await nothingRecorded(packet.stateRoot);
});

Deno.test("an amendment's phase is pre_verify, post_failure or post_success from the prompt's last verification", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES, "02_failing.prompt.md": FAILING },
  });
  const amendJson = async (id: string) => {
    const result = await runCli([
      "control",
      "amend",
      packet.dir,
      id,
      "--add-path",
      "NOTES.md",
      "--reason",
      "scope",
      "--json",
    ]);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };
  assert.equal((await amendJson("01")).phase, "pre_verify");
  assert.equal((await runCli(["run", packet.dir, "01"])).code, 0);
  assert.equal((await amendJson("01")).phase, "post_success");
  assert.equal((await runCli(["run", packet.dir, "02"])).code, 1);
  assert.equal((await amendJson("02")).phase, "post_failure");
  const records = await readJsonl(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  assert.deepEqual(records.map((r) => r.phase), ["pre_verify", "post_success"]);
  for (const record of records) {
    assert.deepEqual(Object.keys(record).sort(), [
      "at",
      "author",
      "clause",
      "direction",
      "entries",
      "operation",
      "persisted",
      "phase",
      "prev",
      "prompt",
      "reason",
      "run_id",
    ]);
  }
  assert.equal(records[0]!.run_id, null);
  assert.equal(
    typeof records[1]!.run_id,
    "string",
    "the run current when it was made",
  );
});

Deno.test("an added files_exist makes an otherwise passing prompt fail, naming that path", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const amend = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "lib/foo.ts",
    "--reason",
    "the notes promise it",
    "--author",
    "ada",
  ]);
  assert.equal(amend.code, 0, amend.stderr);
  assert.match(
    amend.stdout,
    /^Amended prompt 01 \(pre_verify\): added files_exist: lib\/foo\.ts\n/,
  );
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 1);
  assert.match(
    run.stderr,
    /verification failed: files_exist lib\/foo\.ts: missing: .*lib\/foo\.ts/,
  );
  const prompt = (await state(packet.stateRoot))["01"]!;
  assert.equal(prompt.status, "verification_failed");
  assert.equal(prompt.amended, true);
  assert.equal(prompt.amendments_file, "amendments/01.jsonl");
  const [amendment] = prompt.amendments as Record<string, unknown>[];
  assert.equal(amendment?.reason, "the notes promise it");
  assert.equal(amendment?.phase, "pre_verify");
  assert.equal(amendment?.author, "ada");
});

Deno.test("a dropped clause makes an otherwise failing prompt pass", async () => {
  await using packet = await makePacket({
    prompts: { "01_failing.prompt.md": FAILING },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 1);
  const relax = await runCli([
    "control",
    "relax",
    packet.dir,
    "01",
    "--drop",
    "commands",
    "--reason",
    "the check is broken upstream",
    "--confirm",
  ]);
  assert.equal(relax.code, 0, relax.stderr);
  assert.match(
    relax.stdout,
    /^Relaxed prompt 01 \(post_failure\): dropped commands\n/,
  );
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 0, run.stderr);
  const prompt = (await state(packet.stateRoot))["01"]!;
  assert.equal(prompt.status, "completed");
  assert.equal(prompt.amended, true);
  // The packet's own contract is untouched.
  const file = await Deno.readTextFile(
    join(packet.dir, "prompts", "01_failing.prompt.md"),
  );
  assert.match(file, /commands: \[\{exec: "false"\}\]/);
});

Deno.test("a re-run after an amendment enforces it, and a re-run from a clean state root does not", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  assert.equal(
    (await runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-file",
      "MISSING.md",
      "--reason",
      "needed",
    ])).code,
    0,
  );
  assert.equal(
    (await runCli(["run", packet.dir])).code,
    1,
    "enforced on the re-run",
  );
  const clean = join(packet.root, "clean-state");
  const fresh = await runCli(["run", packet.dir, "--state-root", clean]);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal((await state(clean))["01"]!.amended, false);
  assert.equal("amendments_file" in (await state(clean))["01"]!, false);
});

Deno.test("--persist writes the packet, survives deleting the state root, and is not applied twice", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  const before = await Deno.readTextFile(file);
  const result = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "MORE.md",
    "--reason",
    "keep it",
    "--persist",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /written into the prompt file: commit it/);
  const after = await Deno.readTextFile(file);
  const body = before.slice(before.indexOf("\n---\n"));
  assert.ok(
    after.endsWith(body.slice(body.indexOf("---\n") + 4)),
    "the body is unchanged",
  );
  assert.match(
    after,
    /verify:\n {2}files_exist:\n {4}- NOTES\.md\n {4}- MORE\.md\n/,
  );
  assert.match(
    after,
    /recovery: \{repair: \{enabled: false\}\}/,
    "other keys keep their bytes",
  );
  const view = JSON.parse(
    (await runCli(["control", "contract", packet.dir, "01", "--json"])).stdout,
  );
  assert.deepEqual(
    view.enforced.files_exist,
    ["NOTES.md", "MORE.md"],
    "not doubled",
  );
  assert.deepEqual(
    view.diff.filter((d: { change: string }) => d.change !== "same"),
    [],
  );
  assert.equal(view.amendments[0].persisted, true);
  await Deno.remove(packet.stateRoot, { recursive: true });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /files_exist MORE\.md: missing/);
  const again = JSON.parse(
    (await runCli(["control", "contract", packet.dir, "01", "--json"])).stdout,
  );
  assert.deepEqual(again.enforced.files_exist, ["NOTES.md", "MORE.md"]);
});

Deno.test("control contract shows the amendments and '+ files_exist: lib/foo.ts' after an amend", async () => {
  await using packet = await makePacket({
    prompts: { "01_failing.prompt.md": FAILING },
  });
  assert.equal(
    (await runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-file",
      "lib/foo.ts",
      "--reason",
      "promised",
      "--author",
      "ada",
    ])).code,
    0,
  );
  assert.equal(
    (await runCli([
      "control",
      "relax",
      packet.dir,
      "01",
      "--drop",
      "commands",
      "--reason",
      "broken",
      "--confirm",
      "--author",
      "bob",
    ])).code,
    0,
  );
  const result = await runCli(["control", "contract", packet.dir, "01"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    [
      "",
      "  contract for 01",
      "",
      '  pre_verify    add files_exist ["lib/foo.ts"]  by ada — promised',
      "  pre_verify    drop commands  by bob — broken",
      "",
      "  - commands: exec=false",
      "    files_exist: NOTES.md",
      "  + files_exist: lib/foo.ts",
      "",
      "",
    ].join("\n"),
  );
  const json = JSON.parse(
    (await runCli(["control", "contract", packet.dir, "01", "--json"])).stdout,
  );
  assert.deepEqual(Object.keys(json), [
    "prompt_id",
    "packet",
    "enforced",
    "amendments",
    "diff",
  ]);
  assert.deepEqual(json.diff, [
    { change: "removed", clause: "commands", entry: "exec=false" },
    { change: "same", clause: "files_exist", entry: "NOTES.md" },
    { change: "added", clause: "files_exist", entry: "lib/foo.ts" },
  ]);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(
    log.map((e) => [e.command, e.outcome, e.author, e.reason, e.prompt_id]),
    [
      ["amend", "applied", "ada", "promised", "01"],
      ["relax", "applied", "bob", "broken", "01"],
    ],
  );
});

Deno.test("a hand-corrupted amendments line stops verification with a message naming the file and line", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  assert.equal(
    (await runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-path",
      "NOTES.md",
      "--reason",
      "ok",
    ])).code,
    0,
  );
  const file = join(packet.stateRoot, "amendments", "01.jsonl");
  packet.audit = false; // The amendment is overwritten below, on purpose.
  await Deno.writeTextFile(file, '{"at": "torn', { append: true });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 1);
  assert.match(
    run.stderr,
    new RegExp(
      `prompt 01 verifier_fault: cannot verify: Cannot read amendments "${
        file.replaceAll("/", "\\/")
      }" line 2: the line is torn`,
    ),
  );
  const prompt = (await state(packet.stateRoot))["01"]!;
  assert.equal(prompt.status, "verifier_fault");
  const contract = await runCli(["control", "contract", packet.dir, "01"]);
  assert.equal(contract.code, 4);
  assert.match(contract.stderr, /line 2: the line is torn/);
  await Deno.writeTextFile(file, "not json\n");
  const bad = await runCli(["run", packet.dir]);
  assert.match(bad.stderr, /line 1: not JSON/);
  const amend = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-path",
    "x",
    "--reason",
    "r",
  ]);
  assert.equal(amend.code, 4, "no amendment on top of a corrupt file");
});

Deno.test("an amendment made mid-run applies to the verification of the attempt under way", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_long.prompt.md": promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - delay_ms: 40
      repeat: 25
      messages: ["working"]
      writes: [{path: NOTES.md, text: done}]`),
    },
  });
  const run = startRun(packet.dir);
  const started = await run.until((e) => e.type === "run_started");
  const amend = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-contains",
    "NOTES.md=signed off",
    "--reason",
    "needs a sign-off",
  ]);
  assert.equal(amend.code, 0, amend.stderr);
  const done = await run.finish();
  assert.equal(done.code, 1);
  const verified = done.events.find((e) => e.type === "verification_finished")!;
  const items =
    (verified.data as { items: { clause: string; status: string }[] }).items;
  assert.deepEqual(items.map((i) => [i.clause, i.status]), [[
    "files_exist",
    "pass",
  ], ["contains", "fail"]]);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.equal(log[0]?.command, "amend");
  assert.equal(log[0]?.run_id, started.run_id, "logged against the live run");
  const logged = await runCli(["control", "log", packet.dir, "--json"]);
  assert.match(logged.stdout, /"command":"amend"/);
});

Deno.test("control amend --add-command splits into argv without a shell", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const result = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-command",
    `git grep -q "two words" -- NOTES.md`,
    "--reason",
    "r",
    "--json",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout).entries, [
    { exec: "git", args: ["grep", "-q", "two words", "--", "NOTES.md"] },
  ]);
});
