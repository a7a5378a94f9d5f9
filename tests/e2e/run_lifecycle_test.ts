import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { pipeToHead, runCli, spawnCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

// Long enough that only an early stop ends it before a test gives up.
const SLOW = promptFile(`simulate:
  attempts:
    - delay_ms: 100
      repeat: 600
      messages: ["still working on it"]`);

Deno.test("a second run on a locked state root exits 4 naming the holder", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const first = spawnCli(["run", packet.dir, "--json"]);
  const lines = new LineReader(first.stdout);
  try {
    const started = JSON.parse(
      await lines.until((l) => l.includes('"run_started"')),
    );
    const second = await runCli(["run", packet.dir]);
    assert.equal(second.code, 4);
    assert.equal(second.stdout, "");
    assert.match(
      second.stderr,
      new RegExp(
        `^error: Cannot start a run: state root ".*" is locked by run ${started.run_id} \\(pid ${first.pid} on `,
      ),
    );
    assert.match(second.stderr, /\nhint: Wait for that run to finish/);
  } finally {
    first.kill("SIGTERM");
    await lines.rest();
    await readAll(first.stderr);
    await first.status;
  }
});

Deno.test("a run takes over a lock left by a dead runner", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": promptFile("simulate: {attempts: [{}]}") },
  });
  const dead = new Deno.Command("true").spawn();
  await dead.status;
  await Deno.mkdir(packet.stateRoot);
  await Deno.writeTextFile(
    join(packet.stateRoot, "run.lock"),
    JSON.stringify({
      pid: dead.pid,
      pid_start: "1",
      host: Deno.hostname(),
      run_id: "gone",
      started_at: "2026-11-30T00:00:00.000Z",
    }),
  );
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  await assert.rejects(
    Deno.stat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
});

Deno.test("SIGTERM mid-run exits 143, marks the run interrupted and leaves state.json valid", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const child = spawnCli(["run", packet.dir, "--json"]);
  const lines = new LineReader(child.stdout);
  await lines.until((l) => l.includes('"message_received"'));
  child.kill("SIGTERM");
  const rest = await lines.rest();
  const stderr = await readAll(child.stderr);
  const status = await child.status;
  assert.equal(status.code, 143, stderr);
  const last = JSON.parse(rest.at(-1)!);
  assert.equal(last.type, "run_finished");
  assert.equal(last.data.status, "interrupted");
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  assert.equal(state.prompts["01"].status, "interrupted");
  assert.equal(state.prompts["01"].attempts[0].status, "interrupted");
  await assert.rejects(
    Deno.stat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
  // The state root is usable again at once.
  const again = await runCli(["status", packet.dir, "--json"]);
  assert.equal(JSON.parse(again.stdout).run.status, "interrupted");
});

Deno.test("SIGINT mid-run exits 130 and marks the run interrupted", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const child = spawnCli(["run", packet.dir]);
  const lines = new LineReader(child.stdout);
  await lines.until((l) => l.startsWith(">> "));
  child.kill("SIGINT");
  const rest = await lines.rest();
  await readAll(child.stderr);
  assert.equal((await child.status).code, 130);
  assert.ok(
    rest.includes("■ run interrupted: interrupted during prompt 01"),
    rest.join("\n"),
  );
});

Deno.test("run --json | head -1 exits promptly and quietly, stopping the run", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const child = spawnCli(["run", packet.dir, "--json"]);
  const lines = new LineReader(child.stdout);
  const first = JSON.parse((await lines.next())!);
  assert.equal(first.seq, 1);
  await lines.cancel();
  const stderr = await readAll(child.stderr);
  const status = await child.status;
  assert.equal(status.code, 0);
  assert.equal(stderr, "");
  // It stopped early (the script would run for a minute) and recorded why.
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  assert.equal(state.prompts["01"].status, "interrupted");
  await assert.rejects(
    Deno.stat(join(packet.stateRoot, "run.lock")),
    Deno.errors.NotFound,
  );
});

Deno.test("run --json piped into a real `head -1` ends with status 0 and no stderr", async () => {
  await using packet = await makePacket({
    prompts: { "01_slow.prompt.md": SLOW },
  });
  const head = await pipeToHead(["run", packet.dir, "--json"], 1);
  assert.equal(head.lines.length, 1);
  assert.equal(JSON.parse(head.lines[0]!).seq, 1);
  assert.equal(head.code, 0);
  assert.equal(head.stderr, "");
});
