import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type AmendmentRecord,
  appendAmendment,
  logAmendment,
} from "../../../lib/control/amendment_log.ts";
import {
  appendLogEntry,
  type Outcome,
} from "../../../lib/control/log_entry.ts";
import { type ControlPaths, controlPaths } from "../../../lib/control/paths.ts";
import { publishReceipt } from "../../../lib/control/receipt.ts";
import {
  type LogVerification,
  verifyLog,
} from "../../../lib/control/verify_log.ts";
import { NotFoundError } from "../../../lib/shared/errors.ts";
import { sha256Hex } from "../../../lib/shared/sha256_hex.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

const RUN = "20261205T120000000Z-aaaaaaaaaa";

/** A decided request: its receipt, then its log line, as the plane does. */
async function decided(
  paths: ControlPaths,
  id: string,
  outcome: Outcome,
  reason: string | null = null,
): Promise<void> {
  await publishReceipt(paths, `${id}.json`, {
    request_id: id,
    run_id: RUN,
    command: "set_view",
    outcome,
    reason,
    recorded_at: new Date().toISOString(),
  });
  await appendLogEntry(paths, {
    run_id: RUN,
    request_id: id,
    command: "set_view",
    params: { thinking: "hide" },
    author: "ada",
    outcome,
    reason,
    prompt_id: "01",
    attempt: 1,
  });
}

/** A line of the runner's own (no receipt vouches for it). */
async function runnerLine(paths: ControlPaths, note: string): Promise<void> {
  await appendLogEntry(paths, {
    run_id: RUN,
    request_id: null,
    command: "agent_stopped",
    params: { note },
    author: "runner",
    outcome: "applied",
    reason: note,
    prompt_id: "01",
    attempt: 1,
  });
}

function amendment(reason: string, at: string): AmendmentRecord {
  return {
    at,
    prompt: "01",
    author: "ada",
    reason,
    phase: "pre_verify",
    direction: "add",
    clause: "files_exist",
    operation: "add",
    entries: [`${reason}.md`],
    run_id: null,
    persisted: false,
  };
}

async function amended(root: string, reason: string): Promise<void> {
  const record = amendment(reason, new Date().toISOString());
  await appendAmendment(root, record);
  await logAmendment(root, record);
}

/** A state root with five log lines (two receipts, one amendment, two of the runner's). */
async function trail(root: string): Promise<ControlPaths> {
  const paths = controlPaths(root);
  await decided(paths, "req-1", "applied");
  await runnerLine(paths, "first");
  await decided(paths, "req-2", "rejected", "bad value");
  await amended(root, "needs-a");
  await runnerLine(paths, "last");
  return paths;
}

async function editLines(
  path: string,
  edit: (lines: string[]) => string[],
): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines.pop();
  await Deno.writeTextFile(path, edit(lines).join("\n") + "\n");
}

function first(found: LogVerification): [string, string, number | null] {
  const problem = found.problems[0];
  assert.ok(problem, "a problem");
  return [problem.kind, problem.file, problem.line];
}

Deno.test("verifyLog() finds that a trail written by the appenders holds", async () => {
  await withTempDir(async (root) => {
    await trail(root);
    await amended(root, "needs-b");
    const found = await verifyLog(root);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.files, [
      { file: "control/log.jsonl", lines: 6, holds: true },
      { file: "amendments/01.jsonl", lines: 2, holds: true },
    ]);
    assert.equal(found.receipts, 2);
    assert.equal(found.amendments, 2);
    assert.deepEqual(found.notes, []);
  });
});

Deno.test("verifyLog() holds for a state root with no log yet, and refuses one that does not exist", async () => {
  await withTempDir(async (root) => {
    const found = await verifyLog(root);
    assert.equal(found.holds, true);
    assert.deepEqual(found.files, []);
    await assert.rejects(
      verifyLog(join(root, "missing")),
      (error: unknown) =>
        error instanceof NotFoundError && error.exitCode === 3 &&
        error.message.includes("missing"),
    );
  });
});

Deno.test("verifyLog() names a line edited where nothing else vouches for it, and says it may be a removal after it", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => {
      lines[1] = lines[1]!.replace('"first"', '"forged"');
      return lines;
    });
    const found = await verifyLog(root);
    assert.equal(found.holds, false);
    assert.deepEqual(first(found), [
      "edited_or_removed",
      "control/log.jsonl",
      2,
    ]);
    assert.match(
      found.problems[0]!.message,
      /line 2 was edited, or a line after it was removed/,
    );
    assert.equal(found.files[0]!.holds, false);
  });
});

Deno.test("verifyLog() calls a line edited when it no longer says what its receipt says", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => {
      lines[2] = lines[2]!.replace('"rejected"', '"applied"');
      return lines;
    });
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["edited", "control/log.jsonl", 3]);
    assert.ok(
      found.problems.some((p) =>
        p.kind === "receipt_unlogged" && p.line === 3 && /req-2/.test(p.message)
      ),
    );
  });
});

Deno.test("verifyLog() calls a line removed when a receipt of that time has no line left", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => lines.toSpliced(2, 1));
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["removed", "control/log.jsonl", 3]);
    assert.match(found.problems[0]!.message, /after line 2.*req-2/);
    assert.ok(found.problems.some((p) => p.kind === "receipt_unlogged"));
  });
});

Deno.test("verifyLog() names a swapped pair of lines as reordered", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => [
      lines[0]!,
      lines[2]!,
      lines[1]!,
      ...lines.slice(3),
    ]);
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["reordered", "control/log.jsonl", 2]);
    assert.match(found.problems[0]!.message, /hash of line 3, not of line 1/);
  });
});

Deno.test("verifyLog() names a moved first line, and a first line whose run id was edited", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    const text = await Deno.readTextFile(paths.log);
    await editLines(
      paths.log,
      (lines) => [lines[1]!, lines[0]!, ...lines.slice(2)],
    );
    assert.deepEqual(first(await verifyLog(root)), [
      "reordered",
      "control/log.jsonl",
      1,
    ]);
    await Deno.writeTextFile(paths.log, text.replace(RUN, "run-forged"));
    const found = await verifyLog(root);
    assert.deepEqual(first(found), [
      "edited_or_removed",
      "control/log.jsonl",
      1,
    ]);
    assert.match(found.problems[0]!.message, /run_id was edited/);
  });
});

Deno.test("verifyLog() calls a whole line turned into something that is not JSON edited, not torn", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => {
      lines[1] = "{not json";
      return lines;
    });
    assert.deepEqual(first(await verifyLog(root)), [
      "edited",
      "control/log.jsonl",
      2,
    ]);
  });
});

Deno.test("verifyLog() calls a line whose prev was taken off edited", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await editLines(paths.log, (lines) => {
      lines[3] = lines[3]!.replace(/,"prev":"[0-9a-f]+"/, "");
      return lines;
    });
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["edited", "control/log.jsonl", 4]);
    assert.match(found.problems[0]!.message, /no "prev"/);
  });
});

Deno.test("verifyLog() reports a torn last line, and a torn line the chain passes over, as torn: the trail holds", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await Deno.writeTextFile(paths.log, '{"v":1,"at":"20', { append: true });
    let found = await verifyLog(root);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes.map((n) => [n.kind, n.line]), [["torn", 6]]);
    // A restart: the next line ends the torn one and chains round it.
    await runnerLine(paths, "after the crash");
    found = await verifyLog(root);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes.map((n) => [n.kind, n.line]), [["torn", 6]]);
    assert.match(found.notes[0]!.message, /passes over it/);
  });
});

Deno.test("verifyLog() notes lines written before the chain existed, and holds", async () => {
  await withTempDir(async (root) => {
    const paths = controlPaths(root);
    await Deno.mkdir(paths.dir, { recursive: true });
    const old = JSON.stringify({
      v: 1,
      command: "set_view",
      outcome: "applied",
    });
    await Deno.writeTextFile(paths.log, `${old}\n${old}\n`);
    await runnerLine(paths, "chained");
    const lines = (await Deno.readTextFile(paths.log)).split("\n");
    assert.equal(JSON.parse(lines[2]!).prev, await sha256Hex(old));
    const found = await verifyLog(root);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes.map((n) => [n.kind, n.line]), [[
      "unchained",
      1,
    ]]);
  });
});

Deno.test("verifyLog() tells a receipt whose runner stopped before logging it (pending) from one whose line is gone", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    await publishReceipt(paths, "req-3.json", {
      request_id: "req-3",
      run_id: RUN,
      command: "steer",
      outcome: "accepted",
      reason: null,
      recorded_at: new Date().toISOString(),
    });
    await Deno.mkdir(paths.requests, { recursive: true });
    await Deno.writeTextFile(join(paths.requests, "req-3.json"), "{}");
    let found = await verifyLog(root);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes.map((n) => [n.kind, n.file]), [[
      "pending",
      "control/outcomes/req-3.json",
    ]]);
    await Deno.remove(join(paths.requests, "req-3.json"));
    found = await verifyLog(root);
    assert.deepEqual(first(found), [
      "receipt_unlogged",
      "control/outcomes/req-3.json",
      null,
    ]);
  });
});

Deno.test("verifyLog() names an amendment edited by hand, and one removed from its file", async () => {
  await withTempDir(async (root) => {
    const paths = await trail(root);
    const file = join(paths.amendments, "01.jsonl");
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, text.replace('"needs-a.md"', '"other.md"'));
    let found = await verifyLog(root);
    assert.deepEqual(first(found), [
      "amendment_unlogged",
      "amendments/01.jsonl",
      1,
    ]);
    assert.match(found.problems[0]!.message, /differs from its log line 4/);
    await Deno.writeTextFile(file, "");
    found = await verifyLog(root);
    assert.deepEqual(first(found), ["removed", "control/log.jsonl", 4]);
    assert.match(found.problems[0]!.message, /in no amendments file/);
  });
});

Deno.test("verifyLog() calls an amendment edited within its file's chain edited", async () => {
  await withTempDir(async (root) => {
    await trail(root);
    await amended(root, "needs-b");
    const file = join(controlPaths(root).amendments, "01.jsonl");
    await editLines(file, (lines) => {
      lines[0] = lines[0]!.replace('"needs-a"', '"no reason"');
      return lines;
    });
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["edited", "amendments/01.jsonl", 1]);
    assert.deepEqual(found.files.map((f) => f.holds), [true, false]);
  });
});

Deno.test("verifyLog() reports a log that is not a regular file as unreadable", async () => {
  await withTempDir(async (root) => {
    const paths = controlPaths(root);
    await Deno.mkdir(paths.log, { recursive: true });
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["unreadable", "control/log.jsonl", null]);
  });
});

Deno.test("verifyLog() waits for an amendment being recorded, so a half-recorded one is never reported", async () => {
  await withTempDir(async (root) => {
    await trail(root);
    const { withAmendmentsLock } = await import(
      "../../../lib/control/amendment_log.ts"
    );
    let verified: Promise<LogVerification> | null = null;
    await withAmendmentsLock(root, async () => {
      const record = amendment("late", new Date().toISOString());
      await appendAmendment(root, record);
      verified = verifyLog(root);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await logAmendment(root, record);
    });
    const found = await verified!;
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.equal(found.amendments, 2);
  });
});

Deno.test("verifyLog() reports a link planted at control/outcomes as unreadable, never following it", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "root");
    await Deno.mkdir(root);
    const paths = await trail(root);
    await Deno.remove(paths.outcomes, { recursive: true });
    await Deno.mkdir(join(dir, "elsewhere"));
    await Deno.symlink(join(dir, "elsewhere"), paths.outcomes);
    const found = await verifyLog(root);
    assert.deepEqual(first(found), ["unreadable", "control/outcomes", null]);
    assert.match(found.problems[0]!.message, /a link, never followed/);
  });
});
