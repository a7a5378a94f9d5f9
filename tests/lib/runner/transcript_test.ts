import assert from "node:assert/strict";
import { join } from "node:path";
import { Transcript } from "../../../lib/runner/transcript.ts";
import type { AttemptRecord } from "../../../lib/status/state_file.ts";
import type { RunEvent } from "../../../lib/shared/mod.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

function record(attempt = 1): AttemptRecord {
  return {
    run_id: "r1",
    attempt,
    mode: "run",
    status: "running",
    started_at: "2026-11-30T00:00:00.000Z",
    finished_at: null,
    resumes: 0,
    failure_class: null,
    reason: null,
    verifier: null,
    transcript: null,
  };
}

function event(seq: number): RunEvent {
  return {
    v: 1,
    seq,
    at: "2026-11-30T00:00:00.000Z",
    run_id: "r1",
    prompt_id: "01",
    attempt: 1,
    type: "message_received",
    data: {},
  } as RunEvent;
}

async function open(root: string, attempt = 1): Promise<{
  transcript: Transcript;
  path: string;
}> {
  const rec = record(attempt);
  const transcript = await Transcript.open({
    root,
    runId: "r1",
    promptId: "01",
    record: rec,
    text: "Do the \x1b[31mwork\x1b[0m.",
    guardLinks: (work) => work(),
  });
  return { transcript, path: join(root, rec.transcript!) };
}

Deno.test("Transcript.open() writes the header at once, names the file in the attempt record, and strips escapes", async () => {
  await withTempDir(async (root) => {
    const { transcript, path } = await open(root);
    assert.equal(path, join(root, "logs", "r1", "01-attempt-1.log"));
    const text = await Deno.readTextFile(path);
    assert.match(text, /^run r1 {2}prompt 01 {2}attempt 1 \(run\)\n/);
    assert.match(text, /Do the work\.\n--- events ---\n$/);
    await transcript.close();
  });
});

Deno.test("Transcript appends events in batches: nothing per event, all of it at flush() and close()", async () => {
  await withTempDir(async (root) => {
    const { transcript, path } = await open(root);
    const header = await Deno.readTextFile(path);
    for (let seq = 1; seq <= 3; seq++) {
      await transcript.sink.event(event(seq), `line ${seq}\n`);
    }
    assert.equal(await Deno.readTextFile(path), header, "held back");
    await transcript.flush();
    assert.equal(
      await Deno.readTextFile(path),
      header + "line 1\nline 2\nline 3\n",
    );
    await transcript.sink.text("footer\n");
    await transcript.close();
    assert.equal(
      await Deno.readTextFile(path),
      header + "line 1\nline 2\nline 3\nfooter\n",
    );
  });
});

Deno.test("Transcript writes a batch by itself once it holds 64 KiB, and a quiet batch after a short while", async () => {
  await withTempDir(async (root) => {
    const { transcript, path } = await open(root);
    const header = await Deno.readTextFile(path);
    const big = "x".repeat(70 * 1024) + "\n";
    await transcript.sink.event(event(1), big);
    assert.equal(await Deno.readTextFile(path), header + big);
    await transcript.sink.event(event(2), "quiet\n");
    const deadline = Date.now() + 10_000;
    while (!(await Deno.readTextFile(path)).endsWith("quiet\n")) {
      assert.ok(Date.now() < deadline, "the timer never wrote the batch");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await transcript.close();
  });
});

Deno.test("Transcript.open() appends to an attempt's existing transcript instead of truncating it", async () => {
  await withTempDir(async (root) => {
    const first = await open(root);
    await first.transcript.sink.text("before the crash\n");
    await first.transcript.close();
    const again = await open(root);
    await again.transcript.close();
    const text = await Deno.readTextFile(again.path);
    assert.match(text, /before the crash\n/);
    assert.equal(text.match(/--- events ---/g)?.length, 2);
  });
});
