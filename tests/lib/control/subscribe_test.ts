import assert from "node:assert/strict";
import { join } from "node:path";
import {
  eventLines,
  events,
  eventTextBatches,
} from "../../../lib/control/events.ts";
import { NotFoundError, RunLostError } from "../../../lib/shared/errors.ts";
import type { RunEvent } from "../../../lib/shared/events.ts";
import { acquireRunLock } from "../../../lib/shared/run_lock.ts";
import {
  appendText,
  makeControlRoot,
  promptStart,
  runEvent,
  stillPendingAfter,
  writeSnapshotFile,
} from "../../_helpers/plane.ts";

const finished = (runId: string, seq: number): RunEvent =>
  runEvent(runId, seq, "run_finished", { status: "completed" }, null);

const line = (event: RunEvent): string => JSON.stringify(event) + "\n";

const isRunLost = (pattern: RegExp) => (error: unknown): boolean => {
  assert.ok(error instanceof RunLostError, String(error));
  assert.equal(error.exitCode, 5);
  assert.match(error.message, pattern);
  return true;
};

Deno.test("events() from the start replays every event, follows new ones in seq order exactly once, and ends after run_finished", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  for (let seq = 1; seq <= 5; seq++) {
    await plane.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  let writer: Promise<void> | null = null;
  const seen: number[] = [];
  for await (const event of events(root.ref("run-a"))) {
    seen.push(event.seq);
    assert.equal(event.run_id, "run-a");
    if (event.seq === 5) {
      // The rest arrives while the follower is already following.
      writer = (async () => {
        for (let seq = 6; seq <= 9; seq++) {
          await plane.observe(runEvent("run-a", seq, "tool_call_started"));
        }
        await plane.observe(finished("run-a", 10));
      })();
    }
  }
  await writer;
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  await plane.close("completed");
});

Deno.test('events() from "current" delivers only events recorded after it started', async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  for (let seq = 1; seq <= 3; seq++) {
    await plane.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  const iterator = events(root.ref("run-a"), { from: "current" });
  const first = iterator.next();
  // The follower takes its position when it starts running; write until
  // it delivers something, whatever it joined.
  let seq = 3;
  while (await stillPendingAfter(first, 50)) {
    await plane.observe(runEvent("run-a", ++seq, "tool_call_started"));
  }
  const head = await first;
  assert.equal(head.done, false);
  const firstSeq = head.value!.seq;
  assert.ok(firstSeq > 3, `replayed seq ${firstSeq}`);
  await plane.observe(finished("run-a", ++seq));
  const rest: number[] = [];
  for (
    let next = await iterator.next();
    !next.done;
    next = await iterator.next()
  ) {
    rest.push(next.value.seq);
  }
  const expected: number[] = [];
  for (let n = firstSeq + 1; n <= seq; n++) expected.push(n);
  assert.deepEqual(rest, expected);
  await plane.close("completed");
});

Deno.test('events() from "current" of a finished run ends at once', async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.observe(finished("run-a", 1));
  await plane.close("completed");
  assert.deepEqual(
    await Array.fromAsync(events(root.ref("run-a"), { from: "current" })),
    [],
  );
});

Deno.test("events() from a seq number starts at that seq", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  for (let seq = 1; seq <= 5; seq++) {
    await plane.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  await plane.observe(finished("run-a", 6));
  const seen = await Array.fromAsync(events(root.ref("run-a"), { from: 3 }));
  assert.deepEqual(seen.map((e) => e.seq), [3, 4, 5, 6]);
  await plane.close("completed");
});

Deno.test("eventLines() never yields a partial trailing line, and yields it once it is complete", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.observe(runEvent("run-a", 1, "run_started"));
  const third = line(runEvent("run-a", 2, "message_received", {
    content: "a line written in two halves",
    role: "assistant",
  }));
  const half = Math.floor(third.length / 2);
  await appendText(root.paths.events, third.slice(0, half));

  const iterator = eventLines(root.ref("run-a"));
  const first = await iterator.next();
  assert.equal(first.value?.event.seq, 1);
  const second = iterator.next();
  assert.ok(
    await stillPendingAfter(second, 1500),
    "a partial line was delivered",
  );
  await appendText(root.paths.events, third.slice(half));
  const completed = await second;
  assert.equal(completed.value?.line, third.slice(0, -1));
  assert.equal(completed.value?.event.seq, 2);

  await plane.observe(finished("run-a", 3));
  const rest = await Array.fromAsync({
    [Symbol.asyncIterator]: () => iterator,
  });
  assert.deepEqual(rest.map((l) => l.event.seq), [3]);
  await plane.close("completed");
});

Deno.test("eventLines() yields each event's stored line byte for byte", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  // Not how the runner serialises: a reader must not re-serialise.
  const stored = [
    '{"v": 1, "seq": 1, "at": "2026-11-30T02:52:00.001Z", "run_id": "run-a", "prompt_id": "01", "attempt": 1, "type": "message_streamed", "data": {"delta": "caf\\u00e9 ☕", "kind": "text"}}',
    '{"seq":2,"v":1,"at":"2026-11-30T02:52:00.002Z","run_id":"run-a","prompt_id":null,"attempt":null,"type":"run_finished","data":{"status":"completed"}}',
  ];
  await Deno.writeTextFile(root.paths.events, stored.join("\n") + "\n");
  const seen = await Array.fromAsync(eventLines(root.ref("run-a")));
  assert.deepEqual(seen.map((l) => l.line), stored);
  assert.equal(seen[0]!.event.data.delta, "café ☕");
});

Deno.test("events() of a superseded run drains its events, then fails with RunLostError", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  await Deno.writeTextFile(
    root.paths.events,
    [1, 2, 3].map((seq) => line(runEvent("run-a", seq, "tool_call_started")))
      .join(""),
  );
  const iterator = events(root.ref("run-a"));
  assert.equal((await iterator.next()).value?.seq, 1);
  // The old runner wrote one more line; then a new run took the state root.
  await appendText(
    root.paths.events,
    line(runEvent("run-a", 4, "run_started")),
  );
  const plane = await root.open("run-b");
  const seen: number[] = [];
  await assert.rejects(
    async () => {
      for (
        let next = await iterator.next();
        !next.done;
        next = await iterator.next()
      ) {
        seen.push(next.value.seq);
      }
    },
    isRunLost(/superseded by run run-b/),
  );
  assert.deepEqual(seen, [2, 3, 4]);
  await plane.close("completed");
});

Deno.test("events() of a run whose runner is gone (stale heartbeat, no run.lock) fails with RunLostError naming it gone", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, {
    run_id: "run-a",
    updated_at: new Date(Date.now() - 60_000).toISOString(),
  });
  await Deno.writeTextFile(
    root.paths.events,
    line(runEvent("run-a", 1, "run_started")) +
      line(runEvent("run-a", 2, "tool_call_started")),
  );
  const seen: number[] = [];
  await assert.rejects(
    async () => {
      for await (const event of events(root.ref("run-a"))) {
        seen.push(event.seq);
      }
    },
    isRunLost(/gone/),
  );
  assert.deepEqual(seen, [1, 2]);
});

Deno.test("events() keeps following a run with a stale heartbeat while its runner holds the run lock", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, {
    run_id: "run-a",
    updated_at: new Date(Date.now() - 60_000).toISOString(),
  });
  const lock = await acquireRunLock(root.stateRoot, "run-a");
  try {
    await Deno.writeTextFile(
      root.paths.events,
      line(runEvent("run-a", 1, "run_started")),
    );
    const iterator = events(root.ref("run-a"));
    assert.equal((await iterator.next()).value?.seq, 1);
    const next = iterator.next();
    assert.ok(await stillPendingAfter(next, 1500), "the follower gave up");
    await appendText(root.paths.events, line(finished("run-a", 2)));
    assert.equal((await next).value?.type, "run_finished");
    assert.equal((await iterator.next()).done, true);
  } finally {
    await lock.release();
  }
});

const interrupted = (runId: string, seq: number): RunEvent =>
  runEvent(runId, seq, "run_finished", { status: "interrupted" }, null);

Deno.test("events() of an interrupted run that was resumed replays across its interrupted run_finished to the last one", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  for (let seq = 1; seq <= 3; seq++) {
    await first.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  await first.observe(interrupted("run-a", 4));
  await first.close("interrupted");
  // Before the resume, the stream ends at the interrupted end.
  assert.deepEqual(
    (await Array.fromAsync(events(root.ref("run-a")))).map((e) => e.seq),
    [1, 2, 3, 4],
  );
  const resumed = await root.open("run-a");
  assert.equal(resumed.opened.interrupted, true);
  assert.equal(resumed.opened.finished, undefined);
  assert.equal(resumed.opened.last_seq, 4);
  await resumed.observe(
    runEvent("run-a", 5, "run_resumed", { after_seq: 4 }, null),
  );
  // Followed live from the start: on past the interrupted end.
  const seen: number[] = [];
  for await (const event of events(root.ref("run-a"))) {
    seen.push(event.seq);
    if (event.seq === 5) {
      await resumed.observe(runEvent("run-a", 6, "tool_call_started"));
      await resumed.observe(finished("run-a", 7));
    }
  }
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7]);
  await resumed.close("completed");
  const text = (await Array.fromAsync(eventTextBatches(root.ref("run-a"))))
    .join("");
  assert.equal(
    text,
    await Deno.readTextFile(root.paths.events),
    "the text follower agrees",
  );
  assert.deepEqual(
    (await Array.fromAsync(events(root.ref("run-a"), { from: 3 }))).map((e) =>
      e.seq
    ),
    [3, 4, 5, 6, 7],
  );
});

Deno.test("events() stops at a final run_finished whatever follows it", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.observe(runEvent("run-a", 1, "tool_call_started"));
  await plane.observe(finished("run-a", 2));
  await plane.close("completed");
  await appendText(
    root.paths.events,
    line(runEvent("run-a", 3, "tool_call_started")),
  );
  assert.deepEqual(
    (await Array.fromAsync(events(root.ref("run-a")))).map((e) => e.seq),
    [1, 2],
  );
});

Deno.test('events() from "current" of a resumed run delivers the continuation, of an interrupted one nothing', async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  await first.observe(runEvent("run-a", 1, "tool_call_started"));
  await first.observe(interrupted("run-a", 2));
  await first.close("interrupted");
  assert.deepEqual(
    await Array.fromAsync(events(root.ref("run-a"), { from: "current" })),
    [],
  );
  const resumed = await root.open("run-a");
  const iterator = events(root.ref("run-a"), { from: "current" });
  const next = iterator.next();
  let seq = 2;
  while (await stillPendingAfter(next, 50)) {
    await resumed.observe(runEvent("run-a", ++seq, "tool_call_started"));
  }
  assert.ok((await next).value!.seq > 2);
  await resumed.observe(finished("run-a", ++seq));
  const rest = [];
  for (let n = await iterator.next(); !n.done; n = await iterator.next()) {
    rest.push(n.value.seq);
  }
  assert.equal(rest.at(-1), seq);
  await resumed.close("completed");
});

Deno.test("events() of a run that ended without run_finished fails with RunLostError", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.observe(runEvent("run-a", 1, "run_started"));
  await plane.close("failed");
  await assert.rejects(
    Array.fromAsync(events(root.ref("run-a"))),
    isRunLost(/ended \(failed\) without run_finished/),
  );
});

Deno.test("events() of an archived run replays its archive and ends after its run_finished", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  await a.observe(runEvent("run-a", 1, "run_started"));
  await a.observe(finished("run-a", 2));
  await a.close("completed");
  const b = await root.open("run-b");
  await b.observe(runEvent("run-b", 1, "run_started"));
  const seen = await Array.fromAsync(events(root.ref("run-a")));
  assert.deepEqual(seen.map((e) => [e.run_id, e.seq]), [["run-a", 1], [
    "run-a",
    2,
  ]]);
  await b.close("completed");
});

Deno.test("events() of an archived run without run_finished fails with RunLostError after replaying it", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  await a.observe(runEvent("run-a", 1, "run_started"));
  await a.close("interrupted");
  const b = await root.open("run-b");
  const seen: number[] = [];
  await assert.rejects(
    async () => {
      for await (const event of events(root.ref("run-a"))) {
        seen.push(event.seq);
      }
    },
    isRunLost(/ended without run_finished/),
  );
  assert.deepEqual(seen, [1]);
  await b.close("completed");
});

Deno.test("events() ends quietly when its signal aborts", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.observe(runEvent("run-a", 1, "run_started"));
  const controller = new AbortController();
  const iterator = events(root.ref("run-a"), { signal: controller.signal });
  assert.equal((await iterator.next()).value?.seq, 1);
  const next = iterator.next();
  controller.abort();
  assert.deepEqual(await next, { done: true, value: undefined });
  await plane.close("completed");
});

Deno.test("events() of a state root with no run fails with NotFoundError", async () => {
  await using root = await makeControlRoot();
  await Deno.mkdir(root.stateRoot);
  await assert.rejects(
    Array.fromAsync(events(root.ref("run-a"))),
    NotFoundError,
  );
  await assert.rejects(
    Array.fromAsync(
      events({ state_root: join(root.dir, "none"), run_id: "x" }),
    ),
    NotFoundError,
  );
});

Deno.test({
  name:
    "events() follows a run resumed under the same run id after a crash left a torn line",
  fn: async () => {
    await using root = await makeControlRoot();
    await writeSnapshotFile(root.paths, { run_id: "run-a" });
    const torn = line({
      ...runEvent("run-a", 3, "message_received", {
        content: "the runner died while writing this",
        role: "assistant",
      }),
      at: "2026-11-30T02:59:59.999Z",
    });
    await Deno.writeTextFile(
      root.paths.events,
      line(runEvent("run-a", 1, "run_started")) +
        line(runEvent("run-a", 2, "tool_call_started")) +
        torn.slice(0, 40),
    );
    const iterator = events(root.ref("run-a"));
    assert.equal((await iterator.next()).value?.seq, 1);
    assert.equal((await iterator.next()).value?.seq, 2);
    const next = iterator.next();
    assert.ok(
      await stillPendingAfter(next, 700),
      "a partial line was delivered",
    );

    // The resumed runner cuts the torn line and writes seq 3 again, whole.
    const plane = await root.open("run-a");
    assert.equal(plane.opened.last_seq, 2);
    const rewritten = runEvent("run-a", 3, "message_received", {
      content: "written again after the resume",
      role: "assistant",
    });
    await plane.observe(rewritten);
    await plane.observe(finished("run-a", 4));
    const seen = [(await next).value];
    for (let n = await iterator.next(); !n.done; n = await iterator.next()) {
      seen.push(n.value);
    }
    assert.deepEqual(seen, [rewritten, finished("run-a", 4)]);
    await plane.close("completed");
  },
});

const bigStream = (runId: string, from: number, to: number): string => {
  let text = "";
  for (let seq = from; seq <= to; seq++) {
    text += line(runEvent(runId, seq, "message_streamed", { delta: "d" }));
  }
  return text;
};

Deno.test("events() from a seq in a long stream delivers exactly the events from it, across a torn line and a gap", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  await Deno.writeTextFile(
    root.paths.events,
    bigStream("run-a", 1, 6000) + '{"v":1,"seq":60\n' +
      bigStream("run-a", 6010, 9000) + line(finished("run-a", 9001)),
  );
  for (const [from, first] of [[5000, 5000], [6003, 6010], [1, 1]]) {
    const seen = await Array.fromAsync(
      events(root.ref("run-a"), { from: from! }),
    );
    assert.equal(seen[0]?.seq, first);
    assert.equal(seen.at(-1)?.seq, 9001);
    assert.equal(
      seen.length,
      9001 - first! + 1 - (first! <= 6009 ? 9 : 0),
      `from ${from}`,
    );
  }
});

Deno.test("events() from a seq beyond the end of a long stream waits for it, then delivers it", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  await Deno.writeTextFile(root.paths.events, bigStream("run-a", 1, 5000));
  const iterator = events(root.ref("run-a"), { from: 5002 });
  const next = iterator.next();
  assert.ok(await stillPendingAfter(next, 300), "delivered an earlier seq");
  await appendText(
    root.paths.events,
    bigStream("run-a", 5001, 5003) + line(finished("run-a", 5004)),
  );
  assert.equal((await next).value?.seq, 5002);
  assert.equal((await iterator.next()).value?.seq, 5003);
  assert.equal((await iterator.next()).value?.seq, 5004);
  assert.equal((await iterator.next()).done, true);
});

Deno.test("events() from a seq of an archived run seeks in its archive", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-b" });
  await Deno.writeTextFile(
    join(root.paths.archive, "run-a.jsonl"),
    bigStream("run-a", 1, 4000) + line(finished("run-a", 4001)),
  );
  const seen = await Array.fromAsync(
    events(root.ref("run-a"), { from: 3999 }),
  );
  assert.deepEqual(seen.map((e) => e.seq), [3999, 4000, 4001]);
});

Deno.test("eventTextBatches() delivers the same lines as eventLines(), byte for byte, in bounded batches", async () => {
  await using root = await makeControlRoot();
  await writeSnapshotFile(root.paths, { run_id: "run-a" });
  const odd = '{"seq":7000,"type":"message_streamed", "v":1}';
  await Deno.writeTextFile(
    root.paths.events,
    bigStream("run-a", 1, 6000) + "not json\n" + odd + "\n" +
      bigStream("run-a", 7001, 7100).replaceAll("\n", "\r\n") +
      line(finished("run-a", 7101)) + bigStream("run-a", 7102, 7103),
  );
  const expected = (await Array.fromAsync(eventLines(root.ref("run-a"))))
    .map(({ line }) => line + "\n").join("");
  const batches = await Array.fromAsync(eventTextBatches(root.ref("run-a")));
  assert.ok(batches.length > 1, "one batch held the whole stream");
  assert.equal(batches.join(""), expected);
  assert.ok(expected.includes(odd));
  assert.ok(expected.endsWith(line(finished("run-a", 7101))));
});
