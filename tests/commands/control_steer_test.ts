/**
 * `control steer` (and the author of `control view`): what is checked before
 * the run is looked for, steers read from standard input, and who is
 * recorded as asking.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { listDir, readJsonl, startRun } from "../_helpers/live_run.ts";
import { cliArgs, ROOT, runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** The largest steer, in bytes (the 64 KiB request limit less 4 KiB). */
const LIMIT = 61440;

/** A prompt that plays `rounds` rounds of events 40 ms apart. */
function longPrompt(rounds: number): string {
  return promptFile(`simulate:
  attempts:
    - delay_ms: 40
      repeat: ${rounds}
      messages: ["working on it"]
      tools: [{name: Bash, input: {command: ls}, output: a.md}]`);
}

const QUICK = promptFile("simulate: {attempts: [{}]}");

async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The environment variables an author is read from. */
const USER_VARIABLES = ["USER", "LOGNAME", "USERNAME"];

Deno.test("control steer over the size limit exits 2 naming the limit in bytes before it looks for the run, and writes nothing to a live one", async () => {
  await using packet = await makePacket({
    prompts: { "01_q.prompt.md": QUICK },
  });
  const huge = "x".repeat(LIMIT + 1);
  // No run was ever recorded here: the size is refused first, not the target.
  const early = await runCli(["control", "steer", packet.dir, huge]);
  assert.equal(early.code, 2, early.stderr);
  assert.equal(early.stdout, "");
  assert.match(
    early.stderr,
    /^error: The steer is too large: 61441 bytes, the limit is 61440 bytes\nhint: /,
  );
  assert.equal(await pathExists(packet.stateRoot), false);

  await using live = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(20) },
  });
  const run = startRun(live.dir);
  await run.until((e) => e.type === "run_started");
  const refused = await runCli(["control", "steer", live.dir, huge]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /the limit is 61440 bytes/);
  // A steer of exactly the limit is a request the runner takes.
  const most = await runCli([
    "control",
    "steer",
    live.dir,
    "y".repeat(LIMIT),
  ]);
  assert.equal(most.code, 0, most.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const log = await readJsonl(join(live.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(log.map((e) => e.outcome), ["accepted", "applied"]);
  assert.equal((log[0]!.params as { text: string }).text.length, LIMIT);
  assert.deepEqual(
    await listDir(join(live.stateRoot, "control", "requests")),
    [],
  );
});

Deno.test("control steer TARGET - reads the steer from standard input", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(15) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const result = await runCli(["control", "steer", packet.dir, "-"], {
    input: "keep it short\nand tidy\n",
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^Queued steer for run /);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const [record] = await readJsonl(
    join(packet.stateRoot, "interventions", "01.jsonl"),
  );
  assert.equal(record?.text, "keep it short\nand tidy");
});

Deno.test("control steer - with an empty standard input is an empty steer: exit 2 before it looks for the run", async () => {
  await using packet = await makePacket({
    prompts: { "01_q.prompt.md": QUICK },
  });
  for (const input of ["", " \n\t\n"]) {
    const result = await runCli(["control", "steer", packet.dir, "-"], {
      input,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^error: A steer needs something to say: standard input was empty\n/,
    );
  }
  assert.equal(await pathExists(packet.stateRoot), false);
});

Deno.test("control steer - refuses an endless standard input once it passes the limit, without reading it to the end", async () => {
  await using packet = await makePacket({
    prompts: { "01_q.prompt.md": QUICK },
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: cliArgs(["control", "steer", packet.dir, "-"]),
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = child.status.finally(() => {
    exited = true;
  });
  // Writes until the reader is gone: far more than the limit, with no end.
  const writer = child.stdin.getWriter();
  const chunk = new TextEncoder().encode("z".repeat(64 * 1024));
  const cap = 256 * 1024 * 1024;
  let written = 0;
  try {
    while (!exited && written < cap) {
      await writer.write(chunk);
      written += chunk.length;
    }
  } catch {
    // The CLI stopped reading and exited: the pipe is broken.
  }
  await writer.close().catch(() => {});
  const [code, stdout, stderr] = await Promise.all([
    status.then((s) => s.code),
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  assert.ok(written < cap, "the CLI stopped reading long before the end");
  assert.equal(code, 2, stderr);
  assert.equal(stdout, "");
  assert.match(
    stderr,
    /^error: The steer on standard input is too large: it passes the limit of 61440 bytes\n/,
  );
  assert.equal(await pathExists(packet.stateRoot), false);
});

/** The account name of this process's uid, from /etc/passwd. */
async function accountName(): Promise<string> {
  const uid = String(Deno.uid());
  const line = (await Deno.readTextFile("/etc/passwd")).split("\n").find((l) =>
    l.split(":")[2] === uid
  );
  assert.ok(line, `no /etc/passwd entry for uid ${uid}`);
  return line.split(":")[0]!;
}

/** Steers and changes the view of a live run as `options` say; returns the log. */
async function requestsWithout(
  options: { denoFlags?: string[] },
): Promise<{ entries: Record<string, unknown>[]; human: string }> {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(15) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const client = { unsetEnv: USER_VARIABLES, ...options };
  const steer = await runCli(
    ["control", "steer", packet.dir, "mind", "the", "gap"],
    client,
  );
  assert.equal(steer.code, 0, steer.stderr);
  const view = await runCli(
    ["control", "view", packet.dir, "--tool-output", "full"],
    client,
  );
  assert.equal(view.code, 0, view.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const human = await runCli(["control", "log", packet.dir]);
  assert.equal(human.code, 0, human.stderr);
  return {
    entries: await readJsonl(join(packet.stateRoot, "control", "log.jsonl")),
    human: human.stdout,
  };
}

Deno.test("control steer and control view with USER, LOGNAME and USERNAME unset record the process's account name as author", async () => {
  const expected = await accountName();
  const { entries, human } = await requestsWithout({});
  assert.deepEqual(
    entries.map((e) => `${e.command}:${e.outcome}:${e.author}`).sort(),
    [
      `set_view:applied:${expected}`,
      `steer:accepted:${expected}`,
      `steer:applied:${expected}`,
    ],
  );
  assert.equal(
    human.trimEnd().split("\n").filter((line) =>
      line.includes(` by ${expected}`)
    ).length,
    3,
    human,
  );
});

Deno.test("control steer and control view with USER, LOGNAME and USERNAME unset record uid:N when the account database cannot be read", async () => {
  const { entries } = await requestsWithout({
    denoFlags: ["--deny-read=/etc/passwd"],
  });
  assert.equal(entries.length, 3);
  for (const entry of entries) {
    assert.equal(entry.author, `uid:${Deno.uid()}`, JSON.stringify(entry));
  }
});
