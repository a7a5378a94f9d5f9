import assert from "node:assert/strict";
import { join } from "node:path";
import { DirWaker, LineTail } from "../../../lib/control/line_tail.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

async function readAllLines(tail: LineTail): Promise<string[][]> {
  const batches: string[][] = [];
  for (;;) {
    const lines = await tail.read();
    if (lines.length === 0) return batches;
    batches.push(lines);
  }
}

Deno.test("LineTail reads a long file in bounded batches, lines across batch boundaries whole", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    const lines = Array.from(
      { length: 5000 },
      (_, n) => `line ${n} ${"x".repeat(n % 97)}`,
    );
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const tail = new LineTail(await Deno.open(path));
    try {
      const batches = await readAllLines(tail);
      assert.ok(batches.length > 1, "one batch held the whole file");
      assert.deepEqual(batches.flat(), lines);
    } finally {
      tail.close();
    }
  });
});

Deno.test("LineTail reads a line longer than a batch whole, and the lines around it", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    const long = "y".repeat(300 * 1024);
    await Deno.writeTextFile(path, `first\n${long}\nlast\n`);
    const tail = new LineTail(await Deno.open(path));
    try {
      assert.deepEqual((await readAllLines(tail)).flat(), [
        "first",
        long,
        "last",
      ]);
    } finally {
      tail.close();
    }
  });
});

Deno.test("LineTail never returns a torn last line, and returns it once completed", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "one\ntw");
    const tail = new LineTail(await Deno.open(path));
    try {
      assert.deepEqual(await tail.read(), ["one"]);
      assert.deepEqual(await tail.read(), []);
      assert.equal(await tail.readText(), null);
      await Deno.writeTextFile(path, "o\nthree\n", { append: true });
      assert.deepEqual(await tail.read(), ["two", "three"]);
    } finally {
      tail.close();
    }
  });
});

Deno.test("LineTail re-reads a torn tail that was cut and rewritten", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "one\ntorn-and-gone");
    const tail = new LineTail(await Deno.open(path));
    try {
      assert.deepEqual(await tail.read(), ["one"]);
      await Deno.truncate(path, 4);
      await Deno.writeTextFile(path, "two\n", { append: true });
      assert.deepEqual(await tail.read(), ["two"]);
    } finally {
      tail.close();
    }
  });
});

Deno.test("LineTail starts at an offset, and with skipPartial drops the rest of the line it joined", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "one\ntwo\nthree\n");
    const atTwo = new LineTail(await Deno.open(path), false, 4);
    const midTwo = new LineTail(await Deno.open(path), true, 5);
    try {
      assert.deepEqual(await atTwo.read(), ["two", "three"]);
      assert.deepEqual(await midTwo.read(), ["three"]);
      assert.equal(atTwo.offset, 14);
    } finally {
      atTwo.close();
      midTwo.close();
    }
  });
});

Deno.test("LineTail.readText() returns whole lines with their newlines, CRLF kept", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.jsonl");
    await Deno.writeTextFile(path, "one\r\ntwo\npart");
    const tail = new LineTail(await Deno.open(path));
    try {
      assert.equal(await tail.readText(), "one\r\ntwo\n");
      assert.equal(await tail.readText(), null);
    } finally {
      tail.close();
    }
  });
});

/** Whether `promise` settles before a generous deadline (10 s). */
async function settles(promise: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), 10_000);
  });
  const result = await Promise.race([promise.then(() => true), late]);
  clearTimeout(timer);
  return result;
}

Deno.test("DirWaker.wait() ends at once for a change that came while nobody waited", async () => {
  await withTempDir(async (dir) => {
    const waker = new DirWaker(dir);
    try {
      await Deno.writeTextFile(join(dir, "events.jsonl"), "line\n");
      // The change arrives while the reader is busy elsewhere.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok(await settles(waker.wait(undefined, 60_000)), "slept through");
      waker.wake();
      assert.ok(await settles(waker.wait(undefined, 60_000)), "slept through");
    } finally {
      await waker.close();
    }
  });
});

Deno.test("DirWaker with names wakes for those files only: a log reader sleeps through the runner's event appends", async () => {
  await withTempDir(async (dir) => {
    const waker = new DirWaker(dir, ["log.jsonl"]);
    try {
      // Let the watcher settle, then clear any wake from setting up.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await waker.wait(undefined, 1);
      const other = waker.wait(undefined, 60_000);
      await Deno.writeTextFile(join(dir, "events.jsonl"), "line\n");
      await Deno.writeTextFile(join(dir, "snapshot.json"), "{}");
      const quiet = await Promise.race([
        other.then(() => "woken"),
        new Promise((resolve) => setTimeout(() => resolve("asleep"), 500)),
      ]);
      assert.equal(quiet, "asleep", "woken by a file it does not read");
      await Deno.writeTextFile(join(dir, "log.jsonl"), "entry\n");
      assert.ok(await settles(other), "slept through its own file");
    } finally {
      await waker.close();
    }
  });
});
