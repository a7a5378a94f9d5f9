import assert from "node:assert/strict";
import { join } from "node:path";
import { readCapped, runProcess } from "../../../lib/shared/run_process.ts";

Deno.test("runProcess keeps at most maxBytes of each stream", async () => {
  const result = await runProcess("sh", {
    args: ["-c", "printf 0123456789; printf abcdefghij >&2"],
    maxBytes: 4,
  });
  assert.equal(result.state, "exited");
  assert.equal(result.code, 0);
  assert.equal(result.stdout, "0123");
  assert.equal(result.stderr, "abcd");
});

Deno.test("runProcess returns when a grandchild keeps the pipes open", async () => {
  const dir = await Deno.makeTempDir();
  const pidFile = join(dir, "pid");
  try {
    // The background sleep inherits stdout and stderr and outlives sh.
    const run = runProcess("sh", {
      args: ["-c", `echo before; sleep 60 & echo $! > '${pidFile}'`],
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 20_000);
    });
    const result = await Promise.race([run, hung]);
    clearTimeout(timer);
    assert.notEqual(result, "hung", "still reading the grandchild's pipe");
    assert.equal(typeof result === "object" && result.stdout, "before\n");
  } finally {
    const pid = Number(await Deno.readTextFile(pidFile).catch(() => ""));
    if (pid > 0) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readCapped gives up graceMs after `until`, keeping what came", async () => {
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(controller): void {
      feed = controller;
    },
  });
  feed.enqueue(new TextEncoder().encode("kept"));
  // The stream never closes; only `until` and the grace end the read.
  const text = await readCapped(stream, 1024, Promise.resolve(), 10);
  assert.equal(text, "kept");
});

Deno.test("readCapped reads to the end when the stream closes first", async () => {
  const stream = new ReadableStream<Uint8Array>({
    start(controller): void {
      controller.enqueue(new TextEncoder().encode("all of it"));
      controller.close();
    },
  });
  const text = await readCapped(stream, 1024, new Promise(() => {}), 10);
  assert.equal(text, "all of it");
});
