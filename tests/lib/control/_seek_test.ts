import assert from "node:assert/strict";
import { join } from "node:path";
import { lineSeq, seekSeq } from "../../../lib/control/_seek.ts";
import { runEvent } from "../../_helpers/plane.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

const line = (seq: number): string =>
  JSON.stringify(
    runEvent("run-a", seq, "message_streamed", {
      delta: "z".repeat(seq % 300),
    }),
  ) + "\n";

/** The seqs of the event lines from `offset` on. */
async function seqsFrom(path: string, offset: number): Promise<number[]> {
  const text = new TextDecoder().decode(
    (await Deno.readFile(path)).subarray(offset),
  );
  return text.split("\n").map(lineSeq).filter((seq) => seq !== null);
}

async function withFile(
  text: string,
  fn: (path: string, file: Deno.FsFile) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const path = join(dir, "events.jsonl");
    await Deno.writeTextFile(path, text);
    using file = await Deno.open(path);
    await fn(path, file);
  });
}

/** Checks the seek lands on a line start before every wanted seq, and close to it. */
async function assertSeeks(
  path: string,
  file: Deno.FsFile,
  target: number,
): Promise<void> {
  const all = await seqsFrom(path, 0);
  const offset = await seekSeq(file, target);
  const bytes = await Deno.readFile(path);
  assert.ok(offset === 0 || bytes[offset - 1] === 0x0a, "not a line start");
  const from = await seqsFrom(path, offset);
  assert.deepEqual(
    from.filter((seq) => seq >= target),
    all.filter((seq) => seq >= target),
    `target ${target}`,
  );
  // Little before the first wanted line is read: the search stops at 64 KiB.
  const text = new TextDecoder().decode(bytes);
  let wanted = 0;
  for (const l of text.split("\n")) {
    const seq = lineSeq(l);
    if (seq !== null && seq >= target) break;
    wanted += new TextEncoder().encode(l).length + 1;
  }
  assert.ok(
    Math.min(wanted, bytes.length) - offset <= 64 * 1024 + 20_000,
    `read ${
      Math.min(wanted, bytes.length) - offset
    } bytes before seq ${target}`,
  );
}

Deno.test("seekSeq() finds every seq of a long file, from a line start, reading little before it", async () => {
  let text = "";
  for (let seq = 1; seq <= 20_000; seq++) text += line(seq);
  await withFile(text, async (path, file) => {
    for (const target of [1, 2, 777, 10_000, 19_999, 20_000]) {
      await assertSeeks(path, file, target);
    }
  });
});

Deno.test("seekSeq() past the end lands near the end; before the start at 0", async () => {
  let text = "";
  for (let seq = 5; seq <= 5000; seq++) text += line(seq);
  await withFile(text, async (path, file) => {
    assert.equal(await seekSeq(file, 1), 0);
    const offset = await seekSeq(file, 9999);
    assert.deepEqual(
      (await seqsFrom(path, offset)).filter((seq) => seq >= 9999),
      [],
    );
    assert.ok(text.length - offset < 70 * 1024);
  });
});

Deno.test("seekSeq() across a gap lands before the first seq after it", async () => {
  let text = "";
  for (let seq = 1; seq <= 3000; seq++) text += line(seq);
  for (let seq = 9000; seq <= 12_000; seq++) text += line(seq);
  await withFile(text, async (path, file) => {
    await assertSeeks(path, file, 5000);
    await assertSeeks(path, file, 9000);
    await assertSeeks(path, file, 3001);
  });
});

Deno.test("seekSeq() passes over invalid lines and a torn last line", async () => {
  let text = "";
  for (let seq = 1; seq <= 6000; seq++) {
    text += line(seq);
    if (seq % 50 === 0) {
      text += "garbage {\n" + line(seq + 1).slice(0, 30) + "\n";
    }
  }
  text += line(6001).slice(0, 40);
  await withFile(text, async (path, file) => {
    for (const target of [3, 3001, 6000, 6001]) {
      await assertSeeks(path, file, target);
    }
  });
});

Deno.test("seekSeq() of an empty or tiny file is 0", async () => {
  await withFile("", async (_path, file) => {
    assert.equal(await seekSeq(file, 5), 0);
  });
  await withFile(line(1) + line(2), async (_path, file) => {
    assert.equal(await seekSeq(file, 2), 0);
  });
});

Deno.test("seekSeq() with lines longer than its probe", async () => {
  let text = "";
  for (let seq = 1; seq <= 400; seq++) {
    text += JSON.stringify(
      runEvent("run-a", seq, "message_received", {
        content: "w".repeat(9000 + seq),
      }),
    ) + "\n";
  }
  await withFile(text, async (path, file) => {
    for (const target of [1, 200, 400, 401]) {
      await assertSeeks(path, file, target);
    }
  });
});
