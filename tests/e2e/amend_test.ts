/**
 * Contract amendments across processes: amendments made by CLI processes
 * while a runner process runs the prompt, and many amending at once.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import { loadPacket } from "../../lib/packet/mod.ts";

/** A prompt whose agent writes NOTES.md, so its own contract passes. */
const NOTES = promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: done}]`);

/** Like NOTES, but the attempt streams for a while (80 events, 40 ms apart). */
const LONG_NOTES = promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - delay_ms: 40
      repeat: 40
      messages: ["working"]
      writes: [{path: NOTES.md, text: done}]`);

/** `control contract --json` for prompt 01. */
async function contractJson(dir: string): Promise<{
  enforced: Record<string, unknown[]>;
  diff: { change: string; clause: string; entry: string }[];
}> {
  const result = await runCli(["control", "contract", dir, "01", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

Deno.test("control amend --persist made mid-attempt fails that attempt's verification, naming the added file", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": LONG_NOTES },
  });
  await using run = startRun(packet.dir);
  await run.until((e) => e.type === "run_started");
  // Freeze the runner mid-attempt, so the amendment lands before the
  // attempt ends however slowly the amending process starts.
  Deno.kill(run.child.pid, "SIGSTOP");
  try {
    const events = await readJsonl(
      join(packet.stateRoot, "control", "events.jsonl"),
    );
    assert.equal(
      events.some((e) => e.type === "run_completed"),
      false,
      "the runner was stopped mid-attempt",
    );
    const amend = await runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-file",
      "missing.md",
      "--reason",
      "the notes promise it",
      "--persist",
    ]);
    assert.equal(amend.code, 0, amend.stderr);
  } finally {
    Deno.kill(run.child.pid, "SIGCONT");
  }
  const done = await run.finish();
  const verified = done.events.filter((e) =>
    e.type === "verification_finished"
  );
  assert.equal(verified.length, 1);
  const items = (verified[0]!.data as {
    items: { clause: string; label: string; status: string }[];
  }).items;
  assert.deepEqual(items.map((i) => [i.clause, i.label, i.status]), [
    ["files_exist", "NOTES.md", "pass"],
    ["files_exist", "missing.md", "fail"],
  ]);
  assert.equal(done.code, 1, done.stderr);
  const failed = done.events.find((e) => e.type === "prompt_failed")!;
  assert.match(
    String((failed.data as { reason: string }).reason),
    /files_exist missing\.md: missing/,
  );
  const view = await contractJson(packet.dir);
  assert.deepEqual(
    view.diff.filter((d) => d.change !== "removed").map((d) => [
      d.clause,
      d.entry,
    ]),
    items.map((i) => [i.clause, i.label]),
    "control contract shows the contract the runner enforced",
  );
});

Deno.test("six concurrent control amend --persist on one prompt all exit 0 and are all persisted and enforced", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const added = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"];
  const results = await Promise.all(added.map((path) =>
    runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-file",
      path,
      "--reason",
      `needs ${path}`,
      "--persist",
    ])
  ));
  for (const [i, result] of results.entries()) {
    assert.equal(result.code, 0, `${added[i]}: ${result.stderr}`);
  }
  const everything = ["NOTES.md", ...added];
  const { prompts } = await loadPacket(packet.dir);
  assert.deepEqual(
    (prompts[0]!.verify.files_exist as string[]).toSorted(),
    everything,
    "the prompt file keeps every amendment",
  );
  const records = await readJsonl(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  assert.deepEqual(
    records.map((r) => (r.entries as string[])[0]).toSorted(),
    added,
  );
  assert.ok(records.every((r) => r.persisted === true));
  const view = await contractJson(packet.dir);
  assert.deepEqual(
    (view.enforced.files_exist as string[]).toSorted(),
    everything,
  );
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.equal(log.filter((e) => e.command === "amend").length, 6);
});
