import assert from "node:assert/strict";
import { join } from "node:path";
import {
  readRunLogFromTail,
  START_MARGIN_MS,
} from "../../../lib/control/_log_from_tail.ts";
import { parseLogLines, readLogFile } from "../../../lib/control/log_entry.ts";
import { controlPaths } from "../../../lib/control/paths.ts";
import { log } from "../../../lib/control/read_log.ts";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-30T12:00:00.000Z");

function entry(runId: string, at: number, n: number, extra = {}): string {
  return JSON.stringify({
    v: 1,
    at: new Date(at).toISOString(),
    run_id: runId,
    request_id: `req-${runId}-${n}`,
    command: "set_view",
    params: { diff: "none", ...extra },
    author: "someone",
    outcome: n % 3 === 0 ? "rejected" : "applied",
    reason: null,
    prompt_id: "01",
    attempt: 1,
  });
}

/** A state root whose current run `current` started at `start`. */
async function makeRoot(
  log: string,
  current: string,
  start: number,
): Promise<{ root: string } & AsyncDisposable> {
  const root = await Deno.makeTempDir({ prefix: "log_from_tail_test_" });
  const paths = controlPaths(root);
  await Deno.mkdir(paths.archive, { recursive: true });
  await Deno.writeTextFile(paths.log, log);
  await Deno.writeTextFile(
    paths.events,
    JSON.stringify({
      v: 1,
      seq: 1,
      at: new Date(start).toISOString(),
      run_id: current,
      type: "run_started",
      data: {},
    }) + "\n",
  );
  return {
    root,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** The answer of reading every line: what the tail scan must match. */
function fullAnswer(text: string, runId: string): unknown[] {
  return parseLogLines(text).filter((e) => e.run_id === runId);
}

/** The same, read from the file as the whole-log reader reads it. */
async function fullRead(root: string, runId: string): Promise<unknown[]> {
  return (await readLogFile(controlPaths(root))).filter((e) =>
    e.run_id === runId
  );
}

/** A long history of 40 runs, an hour apart, then the current run's entries
 * interleaved with late entries of older runs. */
function history(current: string, lines = 4000): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const run = `run-${Math.floor(i / 100)}`;
    out.push(entry(run, NOW - 50 * HOUR + Math.floor(i / 100) * HOUR, i));
  }
  for (let i = 0; i < 30; i++) {
    out.push(entry(i % 4 === 0 ? "run-7" : current, NOW + i * 1000, i));
  }
  return out.join("\n") + "\n";
}

Deno.test("readRunLogFromTail() finds the current run's entries among late entries of others, as a full read does", async () => {
  const text = history("run-now");
  await using root = await makeRoot(text, "run-now", NOW);
  const paths = controlPaths(root.root);
  const fromTail = await readRunLogFromTail(paths, "run-now");
  assert.notEqual(fromTail, null);
  assert.deepEqual(fromTail, fullAnswer(text, "run-now"));
  assert.equal(fromTail!.length, 22);
  assert.deepEqual(
    await log({ state_root: root.root, run_id: "run-now" }),
    fullAnswer(text, "run-now"),
  );
});

Deno.test("readRunLogFromTail() leaves out a torn last line, as a full read does", async () => {
  const text = history("run-now") + entry("run-now", NOW + 60_000, 99);
  await using root = await makeRoot(text, "run-now", NOW);
  const fromTail = await readRunLogFromTail(
    controlPaths(root.root),
    "run-now",
  );
  assert.deepEqual(fromTail, fullAnswer(text, "run-now"));
  assert.ok(!fromTail!.some((e) => e.request_id === "req-run-now-99"));
});

Deno.test("log() of an archived run, asked by id, reads the whole log", async () => {
  const text = history("run-now");
  await using root = await makeRoot(text, "run-now", NOW);
  const paths = controlPaths(root.root);
  assert.equal(await readRunLogFromTail(paths, "run-3"), null);
  const ofOld = await log({ state_root: root.root, run_id: "run-3" });
  assert.equal(ofOld.length, 100);
  assert.deepEqual(ofOld, fullAnswer(text, "run-3"));
  // run-7 has entries both long ago and during the current run.
  assert.deepEqual(
    await log({ state_root: root.root, run_id: "run-7" }),
    fullAnswer(text, "run-7"),
  );
});

Deno.test("readRunLogFromTail() gives up when the run has an archived stream of its own", async () => {
  const text = history("run-now");
  await using root = await makeRoot(text, "run-now", NOW);
  const paths = controlPaths(root.root);
  await Deno.writeTextFile(join(paths.archive, "run-now.jsonl"), "");
  assert.equal(await readRunLogFromTail(paths, "run-now"), null);
  assert.deepEqual(
    await log({ state_root: root.root, run_id: "run-now" }),
    fullAnswer(text, "run-now"),
  );
});

Deno.test("readRunLogFromTail() gives up when an entry of the run is older than its start", async () => {
  // The run's stream was lost: its first event now is later than an entry
  // it had before, the first line the scan meets below its start.
  const lines = history("run-now").split("\n");
  lines.splice(4000, 0, entry("run-now", NOW - 10 * HOUR, 1));
  const text = lines.join("\n");
  await using root = await makeRoot(text, "run-now", NOW);
  assert.equal(
    await readRunLogFromTail(controlPaths(root.root), "run-now"),
    null,
  );
  const all = await log({ state_root: root.root, run_id: "run-now" });
  assert.equal(all.length, 23);
  assert.deepEqual(all, fullAnswer(text, "run-now"));
});

Deno.test("readRunLogFromTail() keeps entries stamped a little before the run's first event", async () => {
  const early = entry("run-now", NOW - START_MARGIN_MS / 2, 1);
  const text = history("run-now") + early + "\n";
  await using root = await makeRoot(text, "run-now", NOW);
  const fromTail = await readRunLogFromTail(
    controlPaths(root.root),
    "run-now",
  );
  assert.deepEqual(fromTail, fullAnswer(text, "run-now"));
  assert.equal(fromTail!.at(-1)?.request_id, "req-run-now-1");
});

Deno.test("readRunLogFromTail() reads lines longer than its chunks, odd lines and byte order marks as a full read does", async () => {
  const big = "x".repeat(200_000);
  const lines = [
    "\uFEFF" + entry("run-now", NOW + 1, 1),
    "not json",
    entry("run-now", NOW + 2, 2, { big }),
    "\uFEFF" + entry("run-now", NOW + 3, 3),
    '{"command": 1}',
    entry("run-now", NOW + 4, 4) + "\r",
    "",
    entry("other", NOW + 5, 5, { big }),
    entry("run-now", NOW + 6, 6, { text: "ünïcødé ✓ " + big }),
  ];
  const text = lines.join("\n") + "\n";
  await using root = await makeRoot(text, "run-now", NOW);
  const fromTail = await readRunLogFromTail(
    controlPaths(root.root),
    "run-now",
  );
  assert.deepEqual(fromTail, await fullRead(root.root, "run-now"));
  assert.deepEqual(fromTail!.map((e) => e.request_id), [
    "req-run-now-1",
    "req-run-now-2",
    "req-run-now-4",
    "req-run-now-6",
  ]);
});

Deno.test("readRunLogFromTail() of a root without a log is empty", async () => {
  await using root = await makeRoot("", "run-now", NOW);
  const paths = controlPaths(root.root);
  await Deno.remove(paths.log);
  assert.deepEqual(await readRunLogFromTail(paths, "run-now"), []);
  assert.deepEqual(await log({ state_root: root.root, run_id: "run-now" }), []);
});
