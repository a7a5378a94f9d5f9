/**
 * `prompt_runner status`: the human rollup in each state of a run, compared
 * with goldens (`tests/testdata/status/`), and `--json` checked against the
 * documented schema in the same states. Run with UPDATE_GOLDENS=1 to
 * rewrite the goldens after a deliberate change, then read the diff.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, runCli, waitFor } from "../_helpers/run_cli.ts";
import { readJsonl, startRun, waitForSnapshot } from "../_helpers/live_run.ts";
import {
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";
import { makeFakeCli } from "../_helpers/fake_cli/mod.ts";

const DATA = join(import.meta.dirname!, "..", "testdata", "status");
// UPDATE_GOLDENS as in the render goldens; UPDATE_GOLDEN too.
const UPDATE = Deno.env.get("UPDATE_GOLDENS") === "1" ||
  Deno.env.get("UPDATE_GOLDEN") === "1";
/** Who runs and steers, so `started_by` and authors are fixed. */
const ADA = { env: { USER: "ada" } };

const NOTES = promptFile(
  `name: Notes
verify: {contains: [{path: NOTES.md, text: done}]}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: draft}]
      usage: {input_tokens: 1200, output_tokens: 340}
    - writes: [{path: NOTES.md, text: done}]
      usage: {input_tokens: 800, output_tokens: 90}`,
);
const MORE = promptFile(
  `name: More
simulate: {attempts: [{usage: {input_tokens: 10, output_tokens: 5}}]}`,
);
/** Never meets its contract: every repair writes a draft again. */
const STUCK = promptFile(
  `name: Stuck
verify: {contains: [{path: NOTES.md, text: done}], files_exist: [PLAN.md]}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: draft}]`,
);
/** Plays for minutes, with no token counts that change while it runs. */
const SLOW = promptFile(
  `name: Slow
simulate:
  attempts:
    - delay_ms: 40
      repeat: 2000
      messages: ["working on it"]
      tools: [{name: Bash, input: {command: ls}, output: a.md}]`,
);

/** Replaces what changes from run to run: paths, ids, times, pids, the host. */
function normalise(text: string, packet: TempPacket): string {
  let host = "";
  try {
    host = Deno.hostname();
  } catch {
    // Without --allow-sys=hostname the host is shown as it is.
  }
  return text
    .replaceAll(packet.root, "<tmp>")
    .replaceAll(`on ${host},`, "on <host>,")
    .replace(/\d{8}T\d{9}Z-[a-z0-9]{10}/g, "<run-id>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<time>")
    .replace(/pid \d+/g, "pid <pid>")
    .replace(/\b(\d+h\d\dm|\d+m\d\ds|\d+(\.\d)?s|\d+ms)\b/g, "<duration>");
}

async function compareGolden(
  name: string,
  result: CliResult,
  packet: TempPacket,
): Promise<void> {
  const actual = normalise(
    `${result.stdout}${
      result.stderr ? `--- stderr\n${result.stderr}` : ""
    }--- exit ${result.code}\n`,
    packet,
  );
  const path = join(DATA, name);
  if (UPDATE) {
    await Deno.mkdir(DATA, { recursive: true });
    await Deno.writeTextFile(path, actual);
    return;
  }
  const expected = await Deno.readTextFile(path).catch(() => {
    throw new Error(`No golden ${path}: run the test with UPDATE_GOLDENS=1`);
  });
  assert.equal(actual, expected, `${name} differs from its golden`);
}

// The documented schema (README, "status --json"): a type per field.
type Kind = "string" | "number" | "boolean" | "object" | "array" | "null";
type Schema = { [key: string]: Kind[] | Schema };
const S: Kind[] = ["string"];
const S0: Kind[] = ["string", "null"];
const N: Kind[] = ["number"];
const N0: Kind[] = ["number", "null"];
/**
 * The schema as the README's `status --json` table documents it: each row's
 * dotted field and its types (`string \| null`).
 */
async function documentedSchema(): Promise<Schema> {
  const readme = await Deno.readTextFile(
    join(import.meta.dirname!, "..", "..", "README.md"),
  );
  const section = readme.split("### `status --json`")[1]!.split("\n## ")[0]!;
  const schema: Schema = {};
  for (
    const [, path, types] of section.matchAll(
      /^\| `([a-z_.]+)` +\| ([a-z \\|]+?) +\|/gm,
    )
  ) {
    const keys = path!.split(".");
    let at = schema;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Schema;
    at[keys.at(-1)!] = types!.split(/ *\\\| */) as Kind[];
  }
  return schema;
}

// Written out, as DESIGN §10 pins it; the README must document the same.
const PINNED: Schema = {
  v: N,
  target: S,
  workspace_id: S0,
  state_root: S,
  run: { id: S0, status: S, started_at: S0, elapsed_ms: N0, started_by: S0 },
  progress: {
    selected: N0,
    completed: N0,
    failed: N0,
    current: { id: S0, name: S0 },
  },
  attempt: { number: N0, mode: S0, detail: S0 },
  verifier: { passed: ["boolean", "null"], unmet: ["array"] },
  provider: {
    name: S0,
    model: S0,
    last_event_age_ms: N0,
    input_tokens: N0,
    output_tokens: N0,
    cost_usd: N0,
  },
  steers: { count: N, last: ["object", "null"] },
  amendments: { count: N, last: ["object", "null"] },
  service: { agent_pid: N0, alive: ["boolean", "null"] },
  lease: { state: S, pid: N0, host: S0 },
  // Issue 23: what needs a person, and spend against budget.
  attention: ["object", "null"],
  budget: ["array", "null"],
};
const SCHEMA: Schema = await documentedSchema();

Deno.test("the README documents every field DESIGN §10 pins for status --json, with its types", () => {
  assert.deepEqual(SCHEMA, PINNED);
});

const LAST_STEER: Schema = {
  at: S,
  author: S0,
  text: S0,
  prompt_id: S0,
  outcome: S,
  reason: S0,
};
const LAST_AMENDMENT: Schema = {
  at: S,
  author: S,
  prompt_id: S,
  direction: S,
  clause: S,
  operation: S,
  reason: S,
};
const UNMET: Schema = { clause: S, label: S, status: S, reason: S };

function kindOf(value: unknown): Kind {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value as Kind;
}

function checkShape(value: unknown, schema: Schema, at: string): void {
  assert.equal(kindOf(value), "object", `${at} is an object`);
  const object = value as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(object).sort(),
    Object.keys(schema).sort(),
    `${at} has exactly the documented fields`,
  );
  for (const [key, kinds] of Object.entries(schema)) {
    if (Array.isArray(kinds)) {
      assert.ok(
        kinds.includes(kindOf(object[key])),
        `${at}.${key} is ${kinds.join(" or ")}, not ${kindOf(object[key])}`,
      );
    } else {
      checkShape(object[key], kinds, `${at}.${key}`);
    }
  }
}

/** Runs `status --json` and checks it against the schema; returns the object. */
async function statusJson(
  packet: TempPacket,
): Promise<Record<string, Record<string, unknown>>> {
  const result = await runCli(["status", packet.dir, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, "one NDJSON line");
  const value = JSON.parse(lines[0]!);
  checkShape(value, SCHEMA, "status");
  assert.ok(
    [
      "never_run",
      "running",
      "completed",
      "failed",
      "interrupted",
      "runner_gone",
    ].includes(value.run.status),
  );
  assert.ok(
    ["alive", "gone", "other_host", "none"].includes(value.lease.state),
  );
  if (value.steers.last !== null) {
    checkShape(value.steers.last, LAST_STEER, "steers.last");
  }
  if (value.amendments.last !== null) {
    checkShape(value.amendments.last, LAST_AMENDMENT, "amendments.last");
  }
  for (const item of value.verifier.unmet) checkShape(item, UNMET, "unmet");
  return value;
}

Deno.test("status of a packet never run says 'never run' and exits 0", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES, "02_more.prompt.md": MORE },
  });
  await compareGolden(
    "never_run.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "never_run");
  assert.equal(json.run!.id, null);
  assert.equal(json.lease!.state, "none");
});

Deno.test("status of a completed run names its starter, the prompts done, the tokens and the last amendment", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES, "02_more.prompt.md": MORE },
  });
  const amend = await runCli([
    "control",
    "amend",
    packet.dir,
    "02",
    "--add-file",
    "NOTES.md",
    "--reason",
    "the notes must stay",
  ], ADA);
  assert.equal(amend.code, 0, amend.stderr);
  assert.equal((await runCli(["run", packet.dir], ADA)).code, 0);
  await compareGolden(
    "completed.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "completed");
  assert.equal(json.run!.started_by, "ada");
  assert.deepEqual(json.progress, {
    selected: 2,
    completed: 2,
    failed: 0,
    current: { id: "02", name: "More" },
  });
  assert.equal(json.provider!.input_tokens, 1200 + 800 + 10);
  assert.equal(json.amendments!.count, 1);
  assert.equal(
    (json.amendments!.last as Record<string, unknown>).reason,
    "the notes must stay",
  );
});

Deno.test("status of a failed run names the unmet items, the repair and the selected prompts", async () => {
  await using packet = await makePacket({
    prompts: { "01_stuck.prompt.md": STUCK, "02_more.prompt.md": MORE },
  });
  assert.equal((await runCli(["run", packet.dir, "01"], ADA)).code, 1);
  await compareGolden(
    "failed.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "failed");
  assert.equal(json.progress!.selected, 1, "only 01 was selected");
  assert.equal(json.progress!.failed, 1);
  assert.equal(json.attempt!.mode, "repair");
  assert.equal(json.verifier!.passed, false);
  assert.deepEqual(
    (json.verifier!.unmet as { clause: string }[]).map((i) => i.clause).sort(),
    ["contains", "files_exist"],
  );
});

/** Starts the slow prompt and waits until its snapshot shows it working. */
async function slowRun(
  packet: TempPacket,
): Promise<ReturnType<typeof startRun>> {
  const run = startRun(packet.dir, [], ADA);
  await run.until((e) => e.type === "tool_call_started");
  await waitForSnapshot(
    packet.stateRoot,
    "a snapshot of the working prompt",
    (s) => Number(s.tool_count) >= 1,
  );
  return run;
}

Deno.test("status of a running run shows the live lease and the last steer with its author", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  await using run = await slowRun(packet);
  const steer = await runCli(
    ["control", "steer", packet.dir, "mind", "the", "gap"],
    { env: { USER: "bob" } },
  );
  assert.equal(steer.code, 0, steer.stderr);
  await waitFor("the steer delivered", async () => {
    const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
    return log.some((e) => e.command === "steer" && e.outcome === "applied");
  });
  await compareGolden(
    "running.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "running");
  assert.equal(json.lease!.state, "alive");
  assert.equal(json.lease!.pid, run.child.pid);
  assert.equal(json.steers!.count, 1);
  assert.equal((json.steers!.last as Record<string, unknown>).author, "bob");
  assert.equal(
    (json.steers!.last as Record<string, unknown>).text,
    "mind the gap",
  );
});

Deno.test("status of an interrupted run says 'interrupted', with the hint that continues it", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const run = await slowRun(packet);
  run.child.kill("SIGINT");
  assert.equal((await run.finish()).code, 130);
  await compareGolden(
    "interrupted.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "interrupted");
  assert.equal(json.lease!.state, "none");
});

Deno.test("status after a SIGKILLed runner says 'runner gone' with the resume hint; a lock from another host reads as running there", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const run = await slowRun(packet);
  run.child.kill("SIGKILL");
  await run.finish();
  const gone = await runCli(["status", packet.dir]);
  assert.equal(
    gone.stderr,
    `hint: prompt_runner run ${packet.dir} --resume\n`,
  );
  await compareGolden("runner_gone.txt", gone, packet);
  const byRoot = await runCli(["status", packet.stateRoot]);
  assert.equal(
    byRoot.stderr,
    gone.stderr,
    "its own state root: no --state-root",
  );
  const json = await statusJson(packet);
  assert.equal(json.run!.status, "runner_gone");
  assert.equal(json.lease!.state, "gone");
  assert.equal(json.lease!.pid, run.child.pid);

  const lockPath = join(packet.stateRoot, "run.lock");
  const lock = JSON.parse(await Deno.readTextFile(lockPath));
  await Deno.writeTextFile(
    lockPath,
    JSON.stringify({ ...lock, host: "elsewhere.invalid" }) + "\n",
  );
  await compareGolden(
    "other_host.txt",
    await runCli(["status", packet.dir]),
    packet,
  );
  const there = await statusJson(packet);
  assert.equal(there.run!.status, "running");
  assert.deepEqual(there.lease, {
    state: "other_host",
    pid: lock.pid,
    host: "elsewhere.invalid",
  });
  assert.equal(there.service!.alive, null, "not checkable from here");
});

Deno.test("status names the state root itself as TARGET", async () => {
  await using packet = await makePacket({
    prompts: { "01_more.prompt.md": MORE },
  });
  assert.equal((await runCli(["run", packet.dir], ADA)).code, 0);
  const result = await runCli(["status", packet.stateRoot]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^test-packet {2}completed\n/);
  assert.match(result.stdout, / {2}01 {2}completed +More/);
});

Deno.test("status defaults to the current directory", async () => {
  await using packet = await makePacket({
    prompts: { "01_more.prompt.md": MORE },
  });
  const result = await runCli(["status"], { cwd: packet.dir });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^test-packet {2}never run\n/);
});

Deno.test("status outside a packet exits 3 with a hint", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const result = await runCli(["status"], { cwd: dir });
    assert.equal(result.code, 3);
    assert.match(
      result.stderr,
      /it has no prompt_runner_packet\.md and is not a state root\nhint: /,
    );
    assert.equal(result.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("status with two TARGETs exits 2", async () => {
  const result = await runCli(["status", "a", "b"]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^error: Too many arguments/);
});

Deno.test("status on a corrupt state.json exits 4 naming the file", async () => {
  await using packet = await makePacket({
    prompts: { "01_more.prompt.md": MORE },
  });
  await Deno.mkdir(packet.stateRoot);
  await Deno.writeTextFile(`${packet.stateRoot}/state.json`, "{ torn");
  const result = await runCli(["status", packet.dir]);
  assert.equal(result.code, 4);
  assert.match(result.stderr, /^error: Cannot read state ".*state\.json": /);
});

Deno.test("status checks the agent CLI's process: alive while it runs, and still alive once its runner was SIGKILLed", async () => {
  await using packet = await makePacket();
  const fake = await makeFakeCli(packet.root, "never_ends");
  await packet.writePrompt(
    "01_fake.prompt.md",
    promptFile(`provider: amp
agent: {bin: ${JSON.stringify(fake.bin)}}
recovery: {retry: {max_attempts: 0}, repair: {enabled: false}}`),
  );
  const run = startRun(packet.dir, [], ADA);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the agent's pid in the snapshot",
    (s) => typeof s.agent_pid === "number",
  );
  const agent = snapshot.agent_pid as number;
  try {
    const live = await statusJson(packet);
    assert.equal(live.run!.status, "running");
    assert.deepEqual(live.service, { agent_pid: agent, alive: true });
    run.child.kill("SIGKILL");
    await run.finish();
    const gone = await runCli(["status", packet.dir]);
    assert.match(gone.stdout, /^test-packet {2}runner gone\n/);
    assert.match(gone.stdout, new RegExp(`\n  agent +pid ${agent} alive\n`));
    const json = await statusJson(packet);
    assert.equal(json.run!.status, "runner_gone");
    assert.deepEqual(json.service, { agent_pid: agent, alive: true });
  } finally {
    // The agent runs in its own process group, which outlived the runner.
    await new Deno.Command("kill", { args: ["-KILL", "--", `-${agent}`] })
      .output();
  }
  await waitFor("the agent to end", async () => {
    const json = await statusJson(packet);
    return json.service!.alive === false;
  });
});

Deno.test("status counts the agent as gone once its pid is another process's: the snapshot's start time tells them apart", async () => {
  await using packet = await makePacket();
  const fake = await makeFakeCli(packet.root, "never_ends");
  await packet.writePrompt(
    "01_fake.prompt.md",
    promptFile(`provider: amp
agent: {bin: ${JSON.stringify(fake.bin)}}
recovery: {retry: {max_attempts: 0}, repair: {enabled: false}}`),
  );
  const run = startRun(packet.dir, [], ADA);
  let agent: number | null = null;
  const stranger = new Deno.Command("sleep", {
    args: ["300"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const snapshot = await waitForSnapshot(
      packet.stateRoot,
      "the agent's pid in the snapshot",
      (s) => typeof s.agent_pid === "number",
    );
    agent = snapshot.agent_pid as number;
    run.child.kill("SIGKILL");
    await run.finish();
    await new Deno.Command("kill", { args: ["-KILL", "--", `-${agent}`] })
      .output();
    await waitFor("the agent to end", async () => {
      const json = await statusJson(packet);
      return json.service!.alive === false;
    });
    // As if the dead agent's pid were reused: the snapshot names a live
    // process, with the start time the agent had.
    const path = join(packet.stateRoot, "control", "snapshot.json");
    const written = JSON.parse(await Deno.readTextFile(path));
    written.agent_pid = stranger.pid;
    await Deno.writeTextFile(path, JSON.stringify(written));
    const json = await statusJson(packet);
    assert.deepEqual(json.service, { agent_pid: stranger.pid, alive: false });
  } finally {
    stranger.kill("SIGKILL");
    await stranger.status;
    if (agent !== null) {
      await new Deno.Command("kill", { args: ["-KILL", "--", `-${agent}`] })
        .output();
    }
    await run[Symbol.asyncDispose]();
  }
});

Deno.test("status shows a hostile amendment author and reason without escapes or controls; --json keeps them", async () => {
  await using packet = await makePacket({
    prompts: { "01_more.prompt.md": MORE },
  });
  const author = "ev\x1b]0;pwn\x07il";
  const reason = "keep\x1b[2J it\x9b31m";
  const amend = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-file",
    "NOTES.md",
    "--reason",
    reason,
    "--author",
    author,
  ]);
  assert.equal(amend.code, 0, amend.stderr);
  const result = await runCli(["status", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(result.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  assert.match(result.stdout, /amendments {2}1 · last by ev.*il on 01/);
  const json = await statusJson(packet);
  const last = json.amendments!.last as Record<string, unknown>;
  assert.equal(last.author, author);
  assert.equal(last.reason, reason);
});

Deno.test("status of an external state root whose runner is gone hints the run with its packet and --state-root", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const root = join(packet.root, "state");
  const run = startRun(packet.dir, ["--state-root", root], ADA);
  await run.until((e) => e.type === "tool_call_started");
  await waitForSnapshot(root, "a snapshot", (s) => Number(s.tool_count) >= 1);
  run.child.kill("SIGKILL");
  await run.finish();
  const hint =
    `hint: prompt_runner run ${packet.dir} --state-root ${root} --resume\n`;
  const byRoot = await runCli(["status", root]);
  assert.equal(byRoot.code, 0);
  assert.equal(byRoot.stderr, hint);
  assert.match(byRoot.stdout, /^test-packet {2}runner gone\n/);
  assert.match(byRoot.stdout, / {2}01 {2}runner gone +Slow/);
  const byPacket = await runCli(["status", packet.dir, "--state-root", root]);
  assert.equal(byPacket.stderr, hint);
  assert.equal(
    normalise(byPacket.stdout, packet),
    normalise(byRoot.stdout, packet),
  );
});
