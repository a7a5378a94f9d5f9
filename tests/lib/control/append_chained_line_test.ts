import assert from "node:assert/strict";
import { join } from "node:path";
import { appendChainedLine } from "../../../lib/control/append_chained_line.ts";
import {
  appendLogEntry,
  type LogEntry,
} from "../../../lib/control/log_entry.ts";
import { controlPaths } from "../../../lib/control/paths.ts";
import { verifyLog } from "../../../lib/control/verify_log.ts";
import { sha256Hex } from "../../../lib/shared/sha256_hex.ts";
import { LinkRefusedError } from "../../../lib/shared/errors.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { readJsonl } from "../../_helpers/live_run.ts";

function entry(
  runId: string | null,
  n: number,
): Omit<LogEntry, "v" | "at" | "prev"> {
  return {
    run_id: runId,
    request_id: null,
    command: "note",
    params: { n },
    author: "test",
    outcome: "applied",
    reason: null,
    prompt_id: null,
    attempt: null,
  };
}

Deno.test("appendChainedLine() chains each line to the one before, the first to its run id", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "chain.jsonl");
    const first = await appendChainedLine(path, { run_id: "run-a", n: 1 }, {
      within: dir,
    });
    assert.equal(first.prev, await sha256Hex("run-a"));
    await appendChainedLine(path, { run_id: "run-b", n: 2, prev: "forged" }, {
      within: dir,
    });
    const text = await Deno.readTextFile(path);
    const [line1, line2] = text.split("\n");
    assert.equal(JSON.parse(line2!).prev, await sha256Hex(line1!));
    assert.deepEqual(Object.keys(JSON.parse(line2!)), ["run_id", "n", "prev"]);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  });
});

Deno.test("appendChainedLine() chains the first line of a run-less record to the hash of the empty text", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "chain.jsonl");
    const written = await appendChainedLine(path, { run_id: null }, {
      within: dir,
    });
    assert.equal(written.prev, await sha256Hex(""));
  });
});

Deno.test("appendChainedLine() goes round a torn last line and ends it, so the chain passes over it", async () => {
  await withTempDir(async (dir) => {
    const paths = controlPaths(dir);
    await appendLogEntry(paths, entry("run-a", 1));
    const before = (await Deno.readTextFile(paths.log)).trimEnd();
    await Deno.writeTextFile(paths.log, '{"v":1,"at":"2026-', { append: true });
    await appendLogEntry(paths, entry("run-a", 2));
    const lines = (await Deno.readTextFile(paths.log)).split("\n");
    assert.equal(lines[1], '{"v":1,"at":"2026-');
    assert.equal(JSON.parse(lines[2]!).prev, await sha256Hex(before));
    const found = await verifyLog(dir);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes.map((n) => [n.kind, n.line]), [["torn", 2]]);
  });
});

Deno.test("appendChainedLine() chains to a last line that lacks only its newline", async () => {
  await withTempDir(async (dir) => {
    const paths = controlPaths(dir);
    await appendLogEntry(paths, entry("run-a", 1));
    const text = await Deno.readTextFile(paths.log);
    await Deno.writeTextFile(paths.log, text.slice(0, -1));
    await appendLogEntry(paths, entry("run-a", 2));
    const lines = (await Deno.readTextFile(paths.log)).split("\n");
    assert.equal(lines.length, 3);
    assert.equal(JSON.parse(lines[1]!).prev, await sha256Hex(lines[0]!));
    assert.equal((await verifyLog(dir)).holds, true);
  });
});

Deno.test("appendChainedLine() finds the line before across more than one read from the end", async () => {
  await withTempDir(async (dir) => {
    const paths = controlPaths(dir);
    const big = { ...entry("run-a", 1), params: { text: "x".repeat(200_000) } };
    await appendLogEntry(paths, big);
    await appendLogEntry(paths, entry("run-a", 2));
    const lines = (await Deno.readTextFile(paths.log)).split("\n");
    assert.equal(JSON.parse(lines[1]!).prev, await sha256Hex(lines[0]!));
  });
});

Deno.test("appendChainedLine() refuses a log that is a symbolic link and writes nothing where it points", async () => {
  await withTempDir(async (dir) => {
    const paths = controlPaths(join(dir, "root"));
    await Deno.mkdir(paths.dir, { recursive: true });
    const bait = join(dir, "bait.txt");
    await Deno.writeTextFile(bait, "");
    await Deno.symlink(bait, paths.log);
    await assert.rejects(
      appendLogEntry(paths, entry("run-a", 1)),
      LinkRefusedError,
    );
    assert.equal(await Deno.readTextFile(bait), "");
  });
});

const WRITER = `
const [module, root, who, count] = Deno.args;
const { appendLogEntry } = await import(module);
const { controlPaths } = await import(module.replace("log_entry.ts", "paths.ts"));
for (let n = 0; n < Number(count); n++) {
  await appendLogEntry(controlPaths(root), {
    run_id: "run-" + who, request_id: null, command: "note", params: { who, n },
    author: who, outcome: "applied", reason: null, prompt_id: null, attempt: null,
  });
}
`;

Deno.test("appendLogEntry() from several processes at once keeps one chain that holds, with every line", async () => {
  await withTempDir(async (dir) => {
    const module =
      new URL("../../../lib/control/log_entry.ts", import.meta.url).href;
    const writers = ["a", "b", "c", "d"].map((who) =>
      new Deno.Command(Deno.execPath(), {
        args: ["eval", WRITER, module, dir, who, "60"],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output()
    );
    for (const output of await Promise.all(writers)) {
      assert.equal(
        output.code,
        0,
        new TextDecoder().decode(output.stderr),
      );
    }
    const lines = await readJsonl(controlPaths(dir).log);
    assert.equal(lines.length, 240);
    assert.equal(new Set(lines.map((l) => JSON.stringify(l.params))).size, 240);
    const found = await verifyLog(dir);
    assert.equal(found.holds, true, JSON.stringify(found.problems));
    assert.deepEqual(found.notes, []);
  });
});
