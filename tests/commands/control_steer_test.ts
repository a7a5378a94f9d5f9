/**
 * `control steer`: what is checked before the run is looked for, and steers
 * read from standard input.
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
    /^error: The steer on standard input is too large: more than 61440 bytes/,
  );
  assert.equal(await pathExists(packet.stateRoot), false);
});
