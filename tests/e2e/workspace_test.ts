/**
 * Operator workspaces across processes: prepare, run by id, watch, steer and
 * amend through the workspace's state root, while the packet's checkout
 * stays exactly as its author committed it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { readJsonl, waitForSnapshot } from "../_helpers/live_run.ts";
import { runCli, spawnCli, waitFor } from "../_helpers/run_cli.ts";
import { git, makeRepo, promptFile } from "../_helpers/temp_packet.ts";

/** A packet in its own git repo, a checkout to run it on, a state home. */
interface Setup extends AsyncDisposable {
  root: string;
  packet: string;
  checkout: string;
  env: Record<string, string>;
  /** The default state root of workspace `id`. */
  stateRootOf(id: string): string;
  /** Runs the CLI in `cwd` (default: root) with the test's state home. */
  cli(
    args: string[],
    cwd?: string,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
}

const SLOW = promptFile(`
name: Notes
verify: {files_exist: [NOTES.md]}
recovery: {max_steers: 3}
simulate:
  attempts:
    - delay_ms: 40
      repeat: 45
      writes: [{path: NOTES.md, text: "notes"}]
      messages: ["working on it"]
      tools: [{name: Bash, input: {command: ls}, output: a.md}]`);

const QUICK = promptFile(`
name: Quick
verify: {files_exist: [QUICK.md]}
simulate:
  attempts:
    - writes: [{path: QUICK.md, text: "quick"}]`);

async function setup(prompt: string): Promise<Setup> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "prompt_runner_ws_e2e_" }),
  );
  const packet = join(root, "packet");
  await makeRepo(packet, {
    "prompt_runner_packet.md": [
      "---",
      "name: authored",
      "provider: simulated",
      "repos:",
      "  app: {path: app, default: true}",
      "recovery:",
      "  retry: {base_delay_ms: 0, max_delay_ms: 0}",
      "---",
      "",
    ].join("\n"),
    "prompts/01_notes.prompt.md": prompt,
    "app/README.md": "the author's copy\n",
  });
  const checkout = join(root, "checkout");
  await makeRepo(checkout, { "README.md": "the operator's copy\n" });
  await Deno.mkdir(join(checkout, "sub"));
  const env = { XDG_STATE_HOME: join(root, "state") };
  return {
    root,
    packet,
    checkout,
    env,
    stateRootOf: (id) => join(root, "state", "prompt_runner", "workspaces", id),
    cli: (args, cwd = root) => runCli(args, { cwd, env }),
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** The packet's checkout is as committed: nothing written, no state root. */
async function assertPacketUntouched(packet: string): Promise<void> {
  assert.equal(await git(packet, ["status", "--porcelain", "--ignored"]), "");
  await assert.rejects(
    Deno.stat(join(packet, ".prompt_runner")),
    Deno.errors.NotFound,
  );
}

Deno.test("prepare → run by id → status, control status|events|steer|amend by id all use the workspace's state root; the packet stays untouched", async () => {
  await using s = await setup(SLOW);
  await Deno.writeTextFile(
    join(s.root, "ws.yml"),
    "id: ops\npacket: packet\nrepos:\n  app: checkout\n",
  );
  const prepared = await s.cli(["workspace", "prepare", "ws.yml"]);
  assert.equal(prepared.code, 0, prepared.stderr);
  const stateRoot = s.stateRootOf("ops");
  assert.equal(
    prepared.stdout,
    `Prepared workspace ops: state root ${stateRoot}\n`,
  );

  let runId = "";
  const child = spawnCli(["run", "ops", "--json"], { cwd: s.root, env: s.env });
  const lines = new LineReader(child.stdout);
  const stderr = readAll(child.stderr);
  try {
    await waitForSnapshot(
      stateRoot,
      "the run",
      (snap) => snap.status === "running" && Number(snap.tool_count) > 0,
    );
    const status = await s.cli(["control", "status", "ops", "--json"]);
    assert.equal(status.code, 0, status.stderr);
    const live = JSON.parse(status.stdout);
    assert.equal(live.status, "running");
    assert.equal(live.packet_dir, s.packet);
    runId = live.run_id;

    const steer = await s.cli([
      "control",
      "steer",
      "ops",
      "keep",
      "it",
      "short",
    ]);
    assert.equal(steer.code, 0, steer.stderr);
    const delivered = await waitFor("the steer's delivery", async () => {
      const lines = await readJsonl(
        join(stateRoot, "interventions", "01.jsonl"),
      );
      return lines.length > 0 ? lines : null;
    });
    assert.equal(delivered[0]!.text, "keep it short");
  } catch (error) {
    // Never leave the runner behind a failed assertion.
    child.kill("SIGKILL");
    await lines.rest();
    await child.status;
    await stderr;
    throw error;
  }
  await lines.rest();
  const exit = await child.status;
  assert.equal(exit.code, 0, await stderr);
  // The operator's checkout got the work, the author's did not.
  assert.equal(await Deno.readTextFile(join(s.checkout, "NOTES.md")), "notes");
  await assert.rejects(
    Deno.stat(join(s.packet, "app", "NOTES.md")),
    Deno.errors.NotFound,
  );

  const rollup = await s.cli(["status", "ops"]);
  assert.equal(rollup.code, 0, rollup.stderr);
  assert.match(rollup.stdout, /^\S+ +completed$/m);
  assert.ok(
    rollup.stdout.includes(`  state root  ${stateRoot}\n`),
    rollup.stdout,
  );
  assert.ok(rollup.stdout.includes(`  run         ${runId}, `), rollup.stdout);
  const rollupJson = await s.cli(["status", "ops", "--json"]);
  const rolled = JSON.parse(rollupJson.stdout);
  assert.equal(rolled.workspace_id, "ops");
  assert.equal(rolled.state_root, stateRoot);
  assert.equal(rolled.run.id, runId);
  assert.equal(rolled.steers.count, 1);
  // The same report from the workspace file, and from a repo with no TARGET.
  const byFile = await s.cli(["status", "--workspace", "ws.yml"]);
  assert.equal(byFile.code, 0, byFile.stderr);
  const fromRepo = await s.cli(["status"], join(s.checkout, "sub"));
  assert.equal(fromRepo.code, 0, fromRepo.stderr);
  const withoutAges = (text: string) =>
    text.replace(/\d+(\.\d+)?(ms|s|m|h)\b/g, "<d>");
  assert.equal(withoutAges(byFile.stdout), withoutAges(rollup.stdout));
  assert.equal(withoutAges(fromRepo.stdout), withoutAges(rollup.stdout));

  const events = await s.cli(["control", "events", "ops", "--json"]);
  assert.equal(events.code, 0, events.stderr);
  const types = events.stdout.trim().split("\n").map((l) => JSON.parse(l).type);
  assert.ok(types.includes("prompt_steered"), types.join(" "));
  assert.equal(types.at(-1), "run_finished");

  const amend = await s.cli([
    "control",
    "amend",
    "ops",
    "01",
    "--add-file",
    "EXTRA.md",
    "--reason",
    "the operator wants it",
  ]);
  assert.equal(amend.code, 0, amend.stderr);
  const amendments = await readJsonl(join(stateRoot, "amendments", "01.jsonl"));
  assert.equal(amendments.length, 1);
  assert.deepEqual(amendments[0]!.entries, ["EXTRA.md"]);
  const contract = await s.cli(["control", "contract", "ops", "01", "--json"]);
  assert.equal(contract.code, 0, contract.stderr);
  assert.deepEqual(JSON.parse(contract.stdout).enforced.files_exist, [
    "NOTES.md",
    "EXTRA.md",
  ]);

  // With no TARGET, the workspace is found from its packet or its repos.
  for (const cwd of [s.packet, s.checkout, join(s.checkout, "sub")]) {
    const found = await s.cli(["control", "status", "--json"], cwd);
    assert.equal(found.code, 0, `${cwd}: ${found.stderr}`);
    assert.equal(JSON.parse(found.stdout).run_id, runId);
  }
  await assertPacketUntouched(s.packet);

  const listed = await s.cli(["workspace", "list", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const entry = JSON.parse(listed.stdout);
  assert.equal(entry.id, "ops");
  assert.equal(entry.last_run.run_id, runId);
  assert.equal(entry.last_run.status, "completed");

  // A second workspace on the same packet makes the packet ambiguous.
  await Deno.writeTextFile(
    join(s.root, "ws2.yml"),
    "id: ops2\npacket: packet\n",
  );
  assert.equal((await s.cli(["workspace", "prepare", "ws2.yml"])).code, 0);
  const ambiguous = await s.cli(["control", "status"], s.packet);
  assert.equal(ambiguous.code, 2);
  assert.match(
    ambiguous.stderr,
    /^error: Several workspaces relate to .*: ops, ops2$/m,
  );
  // The checkout relates to ops only.
  assert.equal((await s.cli(["control", "status"], s.checkout)).code, 0);

  const forgot = await s.cli(["workspace", "forget", "ops2"]);
  assert.equal(forgot.code, 0, forgot.stderr);
  assert.ok((await Deno.stat(s.stateRootOf("ops2"))).isDirectory);
  const gone = await s.cli(["control", "status", "ops2"]);
  assert.equal(gone.code, 3);
  assert.equal((await s.cli(["workspace", "forget", "ops2"])).code, 3);

  const deleted = await s.cli(["workspace", "forget", "ops", "--delete"]);
  assert.equal(deleted.code, 0, deleted.stderr);
  await assert.rejects(Deno.stat(stateRoot), Deno.errors.NotFound);
  assert.equal((await s.cli(["run", "ops"])).code, 3);
  await assertPacketUntouched(s.packet);
});

Deno.test("run --workspace FILE --packet DIR runs an unbound workspace; contract commands on its id say to name the packet", async () => {
  await using s = await setup(QUICK);
  await Deno.writeTextFile(
    join(s.root, "bare.yml"),
    "id: bare\nrepos:\n  app: checkout\n",
  );
  const unbound = await s.cli(["run", "--workspace", "bare.yml"]);
  assert.equal(unbound.code, 2);
  assert.match(
    unbound.stderr,
    /^error: Workspace "bare" has no packet binding/m,
  );
  const run = await s.cli([
    "run",
    "--workspace",
    "bare.yml",
    "--packet",
    "packet",
    "--json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(await Deno.readTextFile(join(s.checkout, "QUICK.md")), "quick");
  const stateRoot = s.stateRootOf("bare");
  assert.ok((await Deno.stat(join(stateRoot, "state.json"))).isFile);

  const contract = await s.cli(["control", "contract", "bare", "01"]);
  assert.equal(contract.code, 2);
  assert.match(
    contract.stderr,
    /^hint: Use 'prompt_runner control contract --workspace WORKSPACE_YML --packet DIR \.\.\.'/m,
  );
  const relax = await s.cli([
    "control",
    "relax",
    "--workspace",
    "bare.yml",
    "--packet",
    "packet",
    "01",
    "--drop",
    "files_exist",
    "--reason",
    "not needed here",
    "--confirm",
  ]);
  assert.equal(relax.code, 0, relax.stderr);
  assert.equal(
    (await readJsonl(join(stateRoot, "amendments", "01.jsonl"))).length,
    1,
  );
  const status = await s.cli(["control", "status", "bare", "--json"]);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).status, "completed");
  await assertPacketUntouched(s.packet);
});
