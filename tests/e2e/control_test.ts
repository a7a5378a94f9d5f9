/**
 * The control plane across processes: a runner process, and separate CLI
 * processes that watch it, change its view and steer it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readAll } from "../_helpers/lines.ts";
import {
  listDir,
  readJsonl,
  readSnapshot,
  startRun,
  waitForSnapshot,
} from "../_helpers/live_run.ts";
import { pipeToHead, runCli, spawnCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

/** Strips what differs between two runs of the same packet. */
function normalize(events: Record<string, unknown>[]): unknown[] {
  return events.map(({ type, prompt_id, attempt, seq, data }) => ({
    type,
    prompt_id,
    attempt,
    seq,
    data,
  }));
}

Deno.test("control status --json mid-run reports the live prompt, attempt, mode, tokens and view; 50 polls leave the run unchanged", async () => {
  const prompts = { "01_long.prompt.md": longPrompt(40, 35) };
  await using polled = await makePacket({ prompts });
  await using quiet = await makePacket({ prompts });
  const a = startRun(polled.dir);
  const b = startRun(quiet.dir);
  await waitForSnapshot(
    polled.stateRoot,
    "tokens",
    (s) => Number(s.input_tokens) > 0,
  );
  const polls = [];
  for (let i = 0; i < 50; i++) {
    const result = await runCli(["control", "status", polled.dir, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    polls.push(JSON.parse(result.stdout));
  }
  const first = polls[0];
  assert.equal(first.status, "running");
  assert.equal(first.prompt_id, "01");
  assert.equal(first.prompt_name, "Long");
  assert.equal(first.attempt, 1);
  assert.equal(first.mode, "run");
  assert.equal(first.provider, "simulated");
  assert.ok(first.input_tokens >= 100 && first.output_tokens >= 10);
  assert.ok(first.tool_count >= 1);
  assert.deepEqual(first.view, {
    log_mode: "compact",
    tool_output: "summary",
    thinking: "show",
    diff: "stat",
  });
  assert.ok(
    polls.every((p) => p.status === "running" || p.status === "completed"),
  );
  const [ra, rb] = [await a.finish(), await b.finish()];
  assert.equal(ra.code, 0, ra.stderr);
  assert.equal(rb.code, 0, rb.stderr);
  assert.equal(ra.stderr, "");
  assert.deepEqual(normalize(ra.events), normalize(rb.events));
  const stored = await readJsonl(
    join(polled.stateRoot, "control", "events.jsonl"),
  );
  assert.deepEqual(normalize(stored), normalize(ra.events));
});

Deno.test("control events --from current delivers only later events, byte for byte, and exits 0 after run_finished; a replay delivers every event once in order", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(12, 40) },
  });
  const run = startRun(packet.dir);
  const before = await waitForSnapshot(
    packet.stateRoot,
    "a few events",
    (s) => Number(s.last_seq) >= 5,
  );
  const current = runCli([
    "control",
    "events",
    packet.dir,
    "--from",
    "current",
    "--json",
  ]);
  const replay = runCli(["control", "events", packet.dir, "--json"]);
  const [later, all, runner] = await Promise.all([
    current,
    replay,
    run.finish(),
  ]);
  assert.equal(runner.code, 0, runner.stderr);
  assert.equal(later.code, 0, later.stderr);
  assert.equal(all.code, 0, all.stderr);
  const file = await Deno.readTextFile(
    join(packet.stateRoot, "control", "events.jsonl"),
  );
  // The replay is the stored file, byte for byte.
  assert.equal(all.stdout, file);
  const seqs = all.stdout.trimEnd().split("\n").map((l) => JSON.parse(l).seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  const laterLines = later.stdout.trimEnd().split("\n");
  const laterEvents = laterLines.map((l) => JSON.parse(l));
  assert.ok(laterEvents[0].seq > Number(before.last_seq));
  assert.equal(laterEvents.at(-1).type, "run_finished");
  assert.ok(
    file.endsWith(laterLines.join("\n") + "\n"),
    "later lines are the file's tail, unchanged",
  );
  assert.deepEqual(
    laterEvents.map((e) => e.seq),
    laterEvents.map((_, i) => laterEvents[0].seq + i),
  );
});

Deno.test("control events --from SEQ starts at that seq; a bad --from exits 2", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(2, 0) },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  const result = await runCli([
    "control",
    "events",
    packet.dir,
    "--from",
    "4",
    "--json",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout.split("\n")[0]!).seq, 4);
  const bad = await runCli([
    "control",
    "events",
    packet.dir,
    "--from",
    "yesterday",
  ]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /Invalid --from "yesterday": expected start, current, or a seq number/,
  );
  const human = await runCli(["control", "events", packet.dir]);
  assert.equal(human.code, 0);
  assert.match(
    human.stdout,
    /^▶ 01 Quick · attempt 1 \(run\) · simulated\/simulated$/m,
  );
  assert.match(
    human.stdout,
    /^■ run completed\n--- \d+ events, \d+ tools ---\n$/m,
  );
});

Deno.test("control view --tool-output full is applied at a boundary and shows in control log and the snapshot", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(60) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const result = await runCli([
    "control",
    "view",
    packet.dir,
    "--tool-output",
    "full",
    "--thinking",
    "hide",
    "--author",
    "ada",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^Requested thinking=hide, tool_output=full for run \S+ \(request \S+\); it applies at the next event boundary\n$/,
  );
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the new view",
    (s) => (s.view as Record<string, string>).tool_output === "full",
  );
  assert.equal((snapshot.view as Record<string, string>).thinking, "hide");
  const log = await runCli(["control", "log", packet.dir, "--json"]);
  assert.equal(log.code, 0);
  const entries = log.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(entries.length, 1);
  const [entry] = entries;
  assert.equal(entry.command, "set_view");
  assert.equal(entry.outcome, "applied");
  assert.equal(entry.author, "ada");
  assert.deepEqual(entry.params, { tool_output: "full", thinking: "hide" });
  assert.equal(entry.prompt_id, "01");
  assert.equal(entry.attempt, 1);
  assert.equal(entry.run_id, snapshot.run_id);
  const human = await runCli(["control", "log", packet.dir]);
  assert.match(
    human.stdout,
    /^\S+Z {2}applied {3}set_view \{"tool_output":"full","thinking":"hide"\} {2}by ada on 01\/1\n$/,
  );
  const receipt = JSON.parse(
    await Deno.readTextFile(
      join(packet.stateRoot, "control", "outcomes", `${entry.request_id}.json`),
    ),
  );
  assert.deepEqual(Object.keys(receipt).sort(), [
    "command",
    "outcome",
    "reason",
    "recorded_at",
    "request_id",
    "run_id",
  ]);
  assert.equal(receipt.outcome, "applied");
  assert.deepEqual(
    await listDir(join(packet.stateRoot, "control", "requests")),
    [],
  );
  run.child.kill("SIGTERM");
  assert.equal((await run.finish()).code, 143);
});

Deno.test("control view --tool-output everything exits 2 naming the allowed values and writes nothing; a raw request with it is rejected naming it", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(60) },
  });
  await using run = startRun(packet.dir);
  const started = await run.until((e) => e.type === "run_started");
  const result = await runCli([
    "control",
    "view",
    packet.dir,
    "--tool-output",
    "everything",
  ]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^error: Invalid tool_output "everything": expected one of none, summary, preview, full\n/,
  );
  const requests = join(packet.stateRoot, "control", "requests");
  assert.deepEqual(await listDir(requests), []);
  assert.deepEqual(
    await readJsonl(join(packet.stateRoot, "control", "log.jsonl")),
    [],
  );
  const raw = {
    v: 1,
    id: "20261130T000000000Z-rawrequest",
    command: "set_view",
    params: { tool_output: "everything" },
    run_id: started.run_id,
    author: "script",
    issued_at: new Date().toISOString(),
  };
  await Deno.writeTextFile(
    join(requests, `${raw.id}.json`),
    JSON.stringify(raw),
  );
  const entry = await waitFor(
    "the rejection",
    async () =>
      (await readJsonl(join(packet.stateRoot, "control", "log.jsonl")))[0],
  );
  assert.equal(entry.outcome, "rejected");
  assert.equal(entry.request_id, raw.id);
  assert.match(
    String(entry.reason),
    /"everything".*none, summary, preview, full/,
  );
  const snapshot = await readSnapshot(packet.stateRoot);
  assert.equal(
    (snapshot!.view as Record<string, string>).tool_output,
    "summary",
  );
  run.child.kill("SIGTERM");
  await run.finish();
});

Deno.test("four steers against a budget of 3: three are delivered, the fourth is logged rejected with 'budget spent'", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(25, 40) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  for (const word of ["one", "two", "three", "four"]) {
    const result = await runCli([
      "control",
      "steer",
      packet.dir,
      "please",
      "mind",
      word,
      "--author",
      "ada",
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Queued steer for run /);
  }
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const interventions = await readJsonl(
    join(packet.stateRoot, "interventions", "01.jsonl"),
  );
  assert.equal(interventions.length, 3);
  assert.deepEqual(interventions.map((i) => i.text), [
    "please mind one",
    "please mind two",
    "please mind three",
  ]);
  for (const record of interventions) {
    assert.equal(record.prompt, "01");
    assert.equal(record.attempt, 1);
    assert.equal(record.author, "ada");
    assert.equal(record.lane, "simulated");
    assert.equal(record.delivery, "interrupt_and_resume");
    assert.ok(
      typeof record.at === "string" && typeof record.run_id === "string",
    );
  }
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  const outcomes = log.map((e) =>
    `${(e.params as { text: string }).text}:${e.outcome}`
  );
  assert.deepEqual(outcomes.filter((o) => o.endsWith(":applied")).length, 3);
  const rejected = log.filter((e) => e.outcome === "rejected");
  assert.equal(rejected.length, 1);
  assert.equal(
    (rejected[0]!.params as { text: string }).text,
    "please mind four",
  );
  assert.match(String(rejected[0]!.reason), /budget spent: 3\/3 for prompt 01/);
  const steered = done.events.filter((e) => e.type === "prompt_steered");
  assert.equal(steered.length, 3);
  const quotes = done.events.filter((e) =>
    e.type === "message_received" &&
    String((e.data as { content: string }).content).includes("please mind")
  );
  assert.equal(quotes.length, 3);
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  const result = state.prompts["01"];
  assert.equal(result.status, "completed");
  assert.equal(result.steered, true);
  assert.equal(result.steer_count, 3);
  assert.equal(result.interventions_file, "interventions/01.jsonl");
  assert.deepEqual(result.attempts.map((a: { mode: string }) => a.mode), [
    "run",
  ]);
  // The whole scripted stream was played: a steer carries on, it does not restart.
  assert.equal(
    done.events.filter((e) => e.type === "tool_call_started").length,
    25,
  );
});

Deno.test("the stdin lane delivers a steer into the live session without interrupting it", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_long.prompt.md": longPrompt(15, 40).replace(
        "simulate:\n",
        "simulate:\n  lane: stdin\n",
      ),
    },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const result = await runCli([
    "control",
    "steer",
    packet.dir,
    "keep",
    "it",
    "short",
    "--prompt",
    "1",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  const [record] = await readJsonl(
    join(packet.stateRoot, "interventions", "01.jsonl"),
  );
  assert.equal(record?.delivery, "send_input");
  assert.equal(record?.text, "keep it short");
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.deepEqual(log.map((e) => e.outcome), ["accepted", "applied"]);
  assert.deepEqual(log[1]!.params, {
    text: "keep it short",
    delivery: "send_input",
    mechanism: "simulated",
  });
  assert.equal(record?.mechanism, "simulated");
  assert.ok(
    Date.parse(String(record?.acknowledged_at)) <=
      Date.parse(String(log[1]!.at)),
    "acknowledged before it was applied",
  );
  assert.equal(
    done.events.filter((e) => e.type === "run_started").length,
    1,
    "no resume",
  );
  assert.ok(done.events.some((e) =>
    e.type === "message_received" &&
    String((e.data as { content: string }).content).includes('"keep it short"')
  ));
  assert.equal(
    done.events.filter((e) => e.type === "prompt_steered").length,
    1,
  );
});

Deno.test("control steer on a finished run exits 4 with the run's status; an empty steer exits 2", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  assert.equal((await runCli(["run", packet.dir])).code, 0);
  const result = await runCli(["control", "steer", packet.dir, "too", "late"]);
  assert.equal(result.code, 4);
  assert.match(result.stderr, /^error: Run \S+ is completed, not running\n/);
  const view = await runCli(["control", "view", packet.dir, "--diff", "full"]);
  assert.equal(view.code, 4);
  const empty = await runCli(["control", "steer", packet.dir, " "]);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /A steer needs something to say/);
  assert.deepEqual(
    await listDir(join(packet.stateRoot, "control", "requests")),
    [],
  );
});

Deno.test("control commands on a packet that never ran exit 3 with a hint", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  for (const sub of ["status", "events", "log"]) {
    const result = await runCli(["control", sub, packet.dir]);
    assert.equal(result.code, 3, sub);
    assert.match(
      result.stderr,
      /^error: No run recorded in state root ".*"\nhint: Start one with/,
    );
  }
});

Deno.test("garbage in requests/ is rejected, logged and removed while the run completes normally", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(12, 40) },
  });
  const run = startRun(packet.dir);
  const started = await run.until((e) => e.type === "run_started");
  const requests = join(packet.stateRoot, "control", "requests");
  const valid = (command: string, runId: string) =>
    JSON.stringify({
      v: 1,
      id: "x",
      command,
      params: {},
      run_id: runId,
      author: "t",
      issued_at: "",
    });
  await Deno.writeTextFile(join(requests, "a-not-json.json"), "{ not json");
  await Deno.writeTextFile(join(requests, "b-array.json"), "[1, 2, 3]");
  await Deno.writeTextFile(join(requests, "c-empty.json"), "");
  await Deno.writeTextFile(join(requests, "d-huge.json"), "x".repeat(1 << 20));
  await Deno.symlink("/etc/hostname", join(requests, "e-symlink.json"));
  await Deno.mkdir(join(requests, "f-directory.json"));
  await Deno.writeTextFile(
    join(requests, "g-unknown.json"),
    valid("self_destruct", String(started.run_id)),
  );
  await Deno.writeTextFile(
    join(requests, "h-other-run.json"),
    valid("set_view", "some-other-run"),
  );
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.events.at(-1)?.type, "run_finished");
  assert.equal(
    (done.events.at(-1)?.data as { status: string }).status,
    "completed",
  );
  assert.deepEqual(await listDir(requests), []);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  const byId = Object.fromEntries(log.map((e) => [e.request_id, e]));
  const expect: Record<string, RegExp> = {
    "a-not-json": /not JSON/,
    "b-array": /not a JSON object \(an array\)/,
    "c-empty": /not JSON/,
    "d-huge": /too large: 1048576 bytes/,
    "e-symlink": /not a regular file \(a symbolic link\)/,
    "f-directory": /not a regular file \(a directory\)/,
    "g-unknown": /unknown command "self_destruct"/,
    "h-other-run": /targets run some-other-run/,
  };
  assert.equal(log.length, Object.keys(expect).length);
  for (const [id, reason] of Object.entries(expect)) {
    assert.equal(byId[id]?.outcome, "rejected", id);
    assert.match(String(byId[id]?.reason), reason, id);
  }
  const outcomes = await listDir(join(packet.stateRoot, "control", "outcomes"));
  assert.equal(outcomes.length, Object.keys(expect).length);
  // The symlink's target was not touched.
  await Deno.stat("/etc/hostname");
});

Deno.test("the production main.ts ignores PROMPT_RUNNER_TEST_FAULT: a runner given a fault step applies requests and finishes", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(10, 50) },
  });
  const run = startRun(packet.dir, [], {
    env: { PROMPT_RUNNER_TEST_FAULT: "request_decided" },
  });
  await run.until((e) => e.type === "run_started");
  const sent = await runCli([
    "control",
    "view",
    packet.dir,
    "--tool-output",
    "full",
  ]);
  assert.equal(sent.code, 0, sent.stderr);
  const finished = await run.finish();
  assert.equal(finished.signal, null, finished.stderr);
  assert.equal(finished.code, 0, finished.stderr);
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.ok(
    log.some((entry) => entry.outcome === "applied"),
    JSON.stringify(log),
  );
});

for (
  const step of [
    "request_decided",
    "receipt_written",
    "log_written",
    "request_deleted",
    "steer_recorded",
  ]
) {
  Deno.test(`a runner killed at ${step} and resumed under the same run id leaves one receipt and one final log entry per request, none applied twice`, async () => {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(10, 50) },
    });
    const first = startRun(packet.dir, [], {
      fault: step,
    });
    const started = await first.until((e) => e.type === "run_started");
    const sent = step === "steer_recorded"
      ? await runCli(["control", "steer", packet.dir, "mind", "the", "gap"])
      : await runCli(["control", "view", packet.dir, "--tool-output", "full"]);
    assert.equal(sent.code, 0, sent.stderr);
    const requestId = /\(request (\S+)\)/.exec(sent.stdout)![1]!;
    const killed = await first.finish();
    assert.equal(killed.signal, "SIGKILL", killed.stderr);
    const left = await readSnapshot(packet.stateRoot);
    assert.equal(left?.status, "running");
    assert.equal(left?.prompt_id, "01");

    const second = startRun(packet.dir, ["--resume"]);
    const done = await second.finish();
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.events[0]?.run_id, started.run_id, "same run id");
    assert.ok(
      Number(done.events[0]?.seq) > Number(started.seq),
      "seq continues",
    );

    assert.deepEqual(
      await listDir(join(packet.stateRoot, "control", "requests")),
      [],
    );
    const receipts =
      (await listDir(join(packet.stateRoot, "control", "outcomes")))
        .filter((name) => name.startsWith(requestId));
    assert.deepEqual(receipts, [`${requestId}.json`]);
    const entries =
      (await readJsonl(join(packet.stateRoot, "control", "log.jsonl")))
        .filter((e) => e.request_id === requestId);
    if (step === "steer_recorded") {
      assert.deepEqual(entries.map((e) => e.outcome), ["accepted", "applied"]);
      const delivered =
        (await readJsonl(join(packet.stateRoot, "interventions", "01.jsonl")))
          .filter((r) => r.request_id === requestId);
      assert.equal(delivered.length, 1, "delivered once, never again");
      assert.equal(
        done.events.filter((e) => e.type === "prompt_steered").length,
        0,
        "the resumed runner does not deliver it again",
      );
    } else {
      assert.deepEqual(entries.map((e) => e.outcome), ["applied"]);
      const snapshot = await readSnapshot(packet.stateRoot);
      assert.equal(
        (snapshot!.view as Record<string, string>).tool_output,
        "full",
      );
    }
    const events = await readJsonl(
      join(packet.stateRoot, "control", "events.jsonl"),
    );
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  });
}

Deno.test("a runner killed with SIGKILL leaves a valid snapshot naming its prompt, and followers exit 5 saying it is gone", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(200) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "tool_call_started");
  const early = spawnCli([
    "control",
    "events",
    packet.dir,
    "--from",
    "current",
  ]);
  const earlyLog = spawnCli(["control", "log", packet.dir, "--follow"]);
  await waitForSnapshot(
    packet.stateRoot,
    "a written snapshot",
    (s) => Number(s.tool_count) >= 1,
  );
  run.child.kill("SIGKILL");
  const killed = await run.finish();
  assert.equal(killed.signal, "SIGKILL");
  const snapshot = await readSnapshot(packet.stateRoot);
  assert.equal(snapshot?.status, "running");
  assert.equal(snapshot?.prompt_id, "01");
  assert.equal(snapshot?.prompt_name, "Long");
  const late = await runCli(["control", "events", packet.dir]);
  assert.equal(late.code, 5);
  assert.match(
    late.stderr,
    /^error: The runner of run \S+ \(pid \d+\) is gone: it stopped without finishing the run\n$/,
  );
  assert.ok(late.stdout.includes("▶ 01 Long"), "the replay came first");
  for (const follower of [early, earlyLog]) {
    const [status, stderr] = await Promise.all([
      follower.status,
      readAll(follower.stderr),
    ]);
    await readAll(follower.stdout);
    assert.equal(status.code, 5, stderr);
    assert.match(stderr, /is gone/);
  }
  const status = await runCli(["control", "status", packet.dir]);
  assert.equal(status.code, 0);
  assert.match(status.stdout, /running, but its runner \(pid \d+\) is gone/);
});

Deno.test("control events --json | head -3 exits promptly and quietly while the run goes on unharmed", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(10, 40) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const head = await pipeToHead(["control", "events", packet.dir, "--json"], 3);
  assert.deepEqual(head.lines.map((l) => JSON.parse(l).seq), [1, 2, 3]);
  assert.equal(head.code, 0);
  assert.equal(head.stderr, "");
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);
  assert.equal(
    (done.events.at(-1)?.data as { status: string }).status,
    "completed",
  );
});

Deno.test("control status prints an aligned table with the view including thinking", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(60) },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "token_usage_updated");
  await waitForSnapshot(
    packet.stateRoot,
    "tokens",
    (s) => Number(s.input_tokens) > 0,
  );
  const result = await runCli(["control", "status", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  for (
    const row of [
      /^ {2}test-packet {2}\S+$/m,
      /^ {2}status {4}running$/m,
      /^ {2}prompt {4}01 — Long$/m,
      /^ {2}attempt {3}1 \(run\)$/m,
      /^ {2}provider {2}simulated \/ simulated$/m,
      /^ {2}elapsed {3}\S+ run, \S+ this prompt$/m,
      /^ {2}tools {5}\d+$/m,
      /^ {2}tokens {4}\d+ in \/ \d+ out$/m,
      /^ {2}events {4}\d+ \(last seq \d+\)$/m,
      /^ {2}steers {4}0\/3 for this prompt$/m,
      /^ {2}view {6}log_mode=compact tool_output=summary thinking=show diff=stat$/m,
      /^ {2}updated {3}\S+Z \(\S+ ago\)$/m,
    ]
  ) {
    assert.match(result.stdout, row);
  }
  run.child.kill("SIGTERM");
  await run.finish();
});

Deno.test("control --help lists the subcommands; each has --help", async () => {
  const root = await runCli(["control", "--help"]);
  assert.equal(root.code, 0);
  for (const sub of ["status", "events", "log", "view", "steer"]) {
    assert.match(root.stdout, new RegExp(`^ {2}${sub} `, "m"));
    const help = await runCli(["control", sub, "--help"]);
    assert.equal(help.code, 0, sub);
    assert.match(
      help.stdout,
      new RegExp(`^Usage: prompt_runner control ${sub}`),
    );
    assert.match(help.stdout, /Exit codes:/);
  }
  const unknown = await runCli(["control", "explode"]);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /^error: Unknown control command "explode"\nhint: /,
  );
});

Deno.test("control commands accept --state-root for a run kept outside the packet", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  const stateRoot = join(packet.root, "state");
  assert.equal(
    (await runCli(["run", packet.dir, "--state-root", stateRoot])).code,
    0,
  );
  const result = await runCli([
    "control",
    "status",
    "--state-root",
    stateRoot,
    "--json",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).status, "completed");
  const byRoot = await runCli(["control", "status", stateRoot, "--json"]);
  assert.equal(byRoot.code, 0, byRoot.stderr);
});

Deno.test("a broken control directory becomes a warning on stderr and the run completes", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(2, 0) },
  });
  await Deno.mkdir(packet.stateRoot);
  packet.audit = false; // control/ is a file, on purpose.
  await Deno.writeTextFile(
    join(packet.stateRoot, "control"),
    "not a directory",
  );
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 0);
  assert.match(
    result.stderr,
    /^warning: control plane: disabled for this run, the run goes on without it: /,
  );
  assert.match(result.stdout, /■ run completed/);
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  assert.equal(state.prompts["01"].status, "completed");
});

Deno.test("control log --follow prints entries as they come and exits 0 when the run ends", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(12, 40) },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  const follower = spawnCli([
    "control",
    "log",
    packet.dir,
    "--follow",
    "--json",
  ]);
  assert.equal(
    (await runCli(["control", "view", packet.dir, "--diff", "full"])).code,
    0,
  );
  const [status, stdout, stderr, done] = await Promise.all([
    follower.status,
    readAll(follower.stdout),
    readAll(follower.stderr),
    run.finish(),
  ]);
  assert.equal(done.code, 0);
  assert.equal(status.code, 0, stderr);
  const entries = stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(entries.map((e) => [e.command, e.outcome]), [[
    "set_view",
    "applied",
  ]]);
});
