/**
 * A run stopped by SIGINT, SIGTERM, SIGHUP or a closed stdout after its
 * first prompt completed, then continued with `run --resume`, as real
 * processes: the same run id, `seq` going on in the same events.jsonl after
 * the interrupted `run_finished`, the completed prompt not run again
 * (transcripts, state, events and the file it appends to), attempt numbers
 * going on, the interrupted attempt recorded interrupted, exit 0. Followers
 * started after the resume follow the continuation.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { cliArgs, runCli, spawnCli } from "../_helpers/run_cli.ts";
import {
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

/** Three prompts; each appends its id to log.txt when its attempt starts. */
const PROMPTS: Record<string, string> = {
  "01_first.prompt.md": promptFile(
    `verify: {contains: [{path: log.txt, text: "01"}]}
simulate:
  attempts:
    - messages: ["first done"]
      writes: [{path: log.txt, text: "01\\n", append: true}]`,
  ),
  "02_second.prompt.md": promptFile(`depends_on: ["01"]
verify: {contains: [{path: log.txt, text: "02"}]}
simulate:
  attempts:
    - delay_ms: 25
      repeat: 60
      messages: ["second, still going"]
      writes: [{path: log.txt, text: "02\\n", append: true}]`),
  "03_third.prompt.md": promptFile(`depends_on: ["02"]
verify: {contains: [{path: log.txt, text: "03"}]}
simulate:
  attempts:
    - messages: ["third done"]
      writes: [{path: log.txt, text: "03\\n", append: true}]`),
};

type Event = Record<string, unknown> & {
  seq: number;
  type: string;
  run_id: string;
  prompt_id: string | null;
  attempt: number | null;
  data: Record<string, unknown>;
};

/** Prompt 02's session has started (its write is done): time to stop the run. */
const secondStarted = (e: Record<string, unknown>): boolean =>
  e.type === "run_started" && e.prompt_id === "02";

/** Runs the packet and stops it with `signal` once prompt 02 is under way. */
async function interruptBySignal(
  packet: TempPacket,
  signal: Deno.Signal,
): Promise<{ code: number; stderr: string }> {
  const run = startRun(packet.dir);
  await run.until(secondStarted);
  run.child.kill(signal);
  const { code, stderr } = await run.finish();
  return { code, stderr };
}

/**
 * Runs the packet with stdout piped into a reader that exits once prompt
 * 02's session has started (`grep -m1`, as `| head` would): the runner's
 * next write finds the pipe closed.
 */
async function interruptByClosedStdout(
  packet: TempPacket,
): Promise<{ code: number; stderr: string }> {
  const command = [Deno.execPath(), ...cliArgs(["run", packet.dir, "--json"])]
    .map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(" ");
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      `${command} 2>"$1" | grep -m1 '"prompt_id":"02","attempt":1,"type":"run_started"' >/dev/null; echo "$\{PIPESTATUS[0]}"`,
      "bash",
      join(packet.root, "stderr.txt"),
    ],
    env: { ...Deno.env.toObject(), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [out] = await Promise.all([
    readAll(child.stdout),
    readAll(child.stderr),
  ]);
  await child.status;
  return {
    code: Number(out.trim()),
    stderr: await Deno.readTextFile(join(packet.root, "stderr.txt")),
  };
}

const CASES: {
  how: string;
  stop: (packet: TempPacket) => Promise<{ code: number; stderr: string }>;
  code: number;
}[] = [
  { how: "SIGINT", stop: (p) => interruptBySignal(p, "SIGINT"), code: 130 },
  { how: "SIGTERM", stop: (p) => interruptBySignal(p, "SIGTERM"), code: 143 },
  { how: "SIGHUP", stop: (p) => interruptBySignal(p, "SIGHUP"), code: 129 },
  { how: "a closed stdout", stop: interruptByClosedStdout, code: 0 },
];

for (const { how, stop, code } of CASES) {
  Deno.test(`run --resume continues a run stopped by ${how} after its first prompt: same run id, seq and attempts go on, prompt 01 is not run again, exit 0`, async () => {
    await using packet = await makePacket({ prompts: PROMPTS });
    const eventsFile = join(packet.stateRoot, "control", "events.jsonl");

    const stopped = await stop(packet);
    assert.equal(stopped.code, code, stopped.stderr);
    if (code === 0) {
      assert.equal(stopped.stderr, "", "a closed stdout stops it quietly");
    } else {
      assert.match(
        stopped.stderr,
        /^hint: the run was interrupted; continue it with: prompt_runner run \S+ --resume$/m,
      );
    }
    const before = await Deno.readTextFile(eventsFile);
    const first = before.trimEnd().split("\n").map((l) =>
      JSON.parse(l)
    ) as Event[];
    const end = first.at(-1)!;
    assert.equal(end.type, "run_finished");
    assert.equal(end.data.status, "interrupted");
    const runId = end.run_id;
    assert.ok(
      first.some((e) => e.type === "prompt_completed" && e.prompt_id === "01"),
    );

    const status = await runCli(["status", packet.dir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^test-packet {2}interrupted$/m);
    assert.match(
      status.stderr,
      /^hint: prompt_runner run \S+ --resume$/m,
      "status names --resume for an interrupted run",
    );

    const resumed = await runCli(["run", packet.dir, "--resume", "--json"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const events = resumed.stdout.trimEnd().split("\n").map((l) =>
      JSON.parse(l)
    ) as Event[];
    assert.deepEqual(
      [events[0]!.type, events[0]!.run_id, events[0]!.seq, events[0]!.data],
      ["run_resumed", runId, end.seq + 1, {
        after_seq: end.seq,
        after: "interrupted",
      }],
    );
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => end.seq + 1 + i),
      "seq goes on without a gap",
    );
    assert.ok(events.every((e) => e.run_id === runId), "one run id");
    assert.ok(
      !events.some((e) => e.prompt_id === "01"),
      "prompt 01 is not run again",
    );
    assert.deepEqual(
      events.filter((e) => e.type === "prompt_started").map((e) => [
        e.prompt_id,
        e.attempt,
      ]),
      [["02", 2], ["03", 1]],
    );
    assert.equal(events.at(-1)!.type, "run_finished");
    assert.equal(events.at(-1)!.data.status, "completed");

    // One stream: the interrupted run's lines as written, then the rest.
    const after = await Deno.readTextFile(eventsFile);
    assert.ok(after.startsWith(before), "earlier lines are never rewritten");
    assert.equal(after.slice(before.length), resumed.stdout);

    const state = JSON.parse(
      await Deno.readTextFile(join(packet.stateRoot, "state.json")),
    );
    const attempts = (id: string) =>
      state.prompts[id].attempts.map((
        a: { run_id: string; attempt: number; status: string },
      ) => [a.run_id, a.attempt, a.status]);
    assert.deepEqual(attempts("01"), [[runId, 1, "completed"]]);
    assert.deepEqual(attempts("02"), [
      [runId, 1, "interrupted"],
      [runId, 2, "completed"],
    ]);
    assert.deepEqual(attempts("03"), [[runId, 1, "completed"]]);
    for (const id of ["01", "02", "03"]) {
      assert.equal(state.prompts[id].status, "completed");
    }
    const logs: string[] = [];
    for await (
      const entry of Deno.readDir(join(packet.stateRoot, "logs", runId))
    ) {
      logs.push(entry.name);
    }
    assert.deepEqual(logs.sort(), [
      "01-attempt-1.log",
      "02-attempt-1.log",
      "02-attempt-2.log",
      "03-attempt-1.log",
    ]);
    // Each attempt appended its prompt's id once when it started.
    assert.equal(
      await Deno.readTextFile(join(packet.workspace, "log.txt")),
      "01\n02\n02\n03\n",
    );

    // The run is over now: --resume refuses it, as it always did.
    const again = await runCli(["run", packet.dir, "--resume"]);
    assert.equal(again.code, 4, again.stderr);
    assert.match(
      again.stderr,
      new RegExp(`Cannot resume run ${runId}: it finished \\(completed\\)`),
    );
    assert.equal(await Deno.readTextFile(eventsFile), after);
  });
}

Deno.test("control events started after the resume follows the interrupted run's continuation; started before it, it ends at the interrupted end", async () => {
  await using packet = await makePacket({
    prompts: {
      ...PROMPTS,
      // Long enough to be followed live: the test stops it.
      "02_second.prompt.md": promptFile(`depends_on: ["01"]
simulate:
  attempts:
    - delay_ms: 50
      repeat: 1000
      messages: ["second, still going"]`),
    },
  });
  const eventsFile = join(packet.stateRoot, "control", "events.jsonl");
  const stopped = await interruptBySignal(packet, "SIGINT");
  assert.equal(stopped.code, 130, stopped.stderr);
  const before = await Deno.readTextFile(eventsFile);
  const end = JSON.parse(before.trimEnd().split("\n").at(-1)!);

  // Before the resume: the replay ends at the interrupted run_finished.
  const early = await runCli(["control", "events", packet.dir, "--json"]);
  assert.equal(early.code, 0, early.stderr);
  assert.equal(early.stdout, before);
  const current = await runCli(
    ["control", "events", packet.dir, "--from", "current", "--json"],
  );
  assert.equal(current.code, 0, current.stderr);
  assert.equal(current.stdout, "", "an interrupted run has nothing to follow");

  // After the resume: from the start, across the interrupted end, live.
  await using resumed = startRun(packet.dir, ["--resume"]);
  await resumed.until((e) => e.type === "prompt_started");
  const fromStart = spawnCli(["control", "events", packet.dir, "--json"]);
  const startLines = new LineReader(fromStart.stdout);
  const startErr = readAll(fromStart.stderr);
  await startLines.until((l) => JSON.parse(l).seq > end.seq + 2);
  const fromCurrent = spawnCli(
    ["control", "events", packet.dir, "--from", "current", "--json"],
  );
  const currentLines = new LineReader(fromCurrent.stdout);
  const currentErr = readAll(fromCurrent.stderr);
  const joined = JSON.parse((await currentLines.next())!);
  assert.ok(joined.seq > end.seq, "--from current follows the resumed run");

  resumed.child.kill("SIGTERM");
  assert.equal((await resumed.finish()).code, 143);
  const all = await Deno.readTextFile(eventsFile);
  const startRest = await startLines.rest();
  assert.equal((await fromStart.status).code, 0, await startErr);
  assert.equal(
    [...startLines.seen].join("\n") + "\n",
    all,
    "every line, through both run_finished",
  );
  await currentLines.rest();
  assert.equal((await fromCurrent.status).code, 0, await currentErr);
  assert.ok(
    all.endsWith([...currentLines.seen].join("\n") + "\n"),
    "--from current: up to the run's last line",
  );
  assert.ok(startRest.length > 0);
  const ends = (await readJsonl(eventsFile)).filter((e) =>
    e.type === "run_finished"
  );
  assert.deepEqual(
    ends.map((e) => (e.data as Record<string, unknown>).status),
    ["interrupted", "interrupted"],
  );
  // A replay of the whole stream now ends at the second interrupted end.
  const replay = await runCli(["control", "events", packet.dir, "--json"]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(replay.stdout, all);
});

Deno.test("run --resume of a failed run still refuses (exit 4) and adds nothing to its stream", async () => {
  await using packet = await makePacket({
    manifest: "  repair: {enabled: false}",
    prompts: {
      "01_fails.prompt.md": promptFile("verify: {files_exist: [MISSING.md]}"),
    },
  });
  const first = await runCli(["run", packet.dir]);
  assert.equal(first.code, 1, first.stderr);
  const eventsFile = join(packet.stateRoot, "control", "events.jsonl");
  const stream = await Deno.readTextFile(eventsFile);
  const resumed = await runCli(["run", packet.dir, "--resume"]);
  assert.equal(resumed.code, 4, resumed.stderr);
  assert.match(resumed.stderr, /Cannot resume run \S+: it finished \(failed\)/);
  assert.match(resumed.stderr, /hint: Start a new run without --resume/);
  assert.equal(await Deno.readTextFile(eventsFile), stream);
});
