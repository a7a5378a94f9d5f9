import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type AmendmentRecord,
  appendAmendment,
  readAmendments,
  replayAmendments,
} from "../../../lib/control/amendment_log.ts";
import { StateError } from "../../../lib/shared/mod.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

function record(change: Partial<AmendmentRecord>): AmendmentRecord {
  return {
    at: "2026-11-30T00:00:00.000Z",
    prompt: "01",
    author: "ada",
    reason: "because",
    phase: "pre_verify",
    direction: "add",
    clause: "files_exist",
    operation: "add",
    entries: [],
    run_id: null,
    persisted: false,
    ...change,
  };
}

Deno.test("replayAmendments() adds entries once, drops and replaces clauses, in order", () => {
  const packet = { files_exist: ["a.md"], commands: [{ exec: "true" }] };
  const result = replayAmendments(packet, [
    record({ entries: ["b.md", "a.md"] }),
    record({ direction: "relax", clause: "commands", operation: "drop" }),
    record({ clause: "commands", entries: [{ exec: "make" }] }),
    record({
      direction: "relax",
      clause: "files_exist",
      operation: "replace",
      entries: ["c.md"],
    }),
  ]);
  assert.deepEqual(result, {
    files_exist: ["c.md"],
    commands: [{ exec: "make" }],
  });
  assert.deepEqual(packet, {
    files_exist: ["a.md"],
    commands: [{ exec: "true" }],
  }, "input untouched");
});

Deno.test("replayAmendments() skips persisted records: the packet already holds them", () => {
  const result = replayAmendments({ files_exist: ["a.md", "b.md"] }, [
    record({ entries: ["b.md"], persisted: true }),
    record({ direction: "relax", operation: "drop", persisted: true }),
  ]);
  assert.deepEqual(result, { files_exist: ["a.md", "b.md"] });
});

Deno.test("readAmendments() returns records in order and an empty list without a file", async () => {
  await withTempDir(async (root) => {
    assert.deepEqual(await readAmendments(root, "01"), []);
    await appendAmendment(root, record({ entries: ["x"] }));
    await appendAmendment(root, record({ entries: ["y"] }));
    const records = await readAmendments(root, "01");
    assert.deepEqual(records.map((r) => r.entries), [["x"], ["y"]]);
    const info = await Deno.stat(join(root, "amendments", "01.jsonl"));
    assert.equal(info.mode! & 0o777, 0o600);
    assert.equal(
      (await Deno.stat(join(root, "amendments"))).mode! & 0o777,
      0o700,
    );
  });
});

Deno.test("readAmendments() refuses a torn or invalid line, naming the file and the line", async () => {
  await withTempDir(async (root) => {
    await appendAmendment(root, record({ entries: ["x"] }));
    const file = join(root, "amendments", "01.jsonl");
    const good = await Deno.readTextFile(file);
    const cases: [string, RegExp][] = [
      [good + '{"at":', /line 2: the line is torn/],
      [good + "nonsense\n", /line 2: not JSON/],
      [good + "[1]\n", /line 2: not a JSON object/],
      [
        good + JSON.stringify(record({ operation: "merge" as "add" })) + "\n",
        /line 2: unknown operation "merge"/,
      ],
      [
        JSON.stringify({ ...record({}), entries: "x" }) + "\n" + good,
        /line 1: "entries" is not a list/,
      ],
    ];
    for (const [text, problem] of cases) {
      await Deno.writeTextFile(file, text);
      await assert.rejects(
        readAmendments(root, "01"),
        (error: unknown) =>
          error instanceof StateError && error.message.includes(file) &&
          problem.test(error.message),
      );
    }
  });
});
