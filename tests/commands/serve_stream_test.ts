/**
 * A run page's one stream (`/run/R/RUN/events/rendered`): each seq once,
 * rendered, with its seq as the SSE id, resumable after `Last-Event-ID`,
 * fed from the run's one shared follower (no second reader of the events
 * file); and each dashboard server's own followers and renderers.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { accessOf, cookieName } from "../../commands/serve/_auth.ts";
import { RunIndex } from "../../commands/serve/_runs.ts";
import { Dashboard } from "../../commands/serve/_server.ts";
import { startRun, waitForSnapshot } from "../_helpers/live_run.ts";
import { waitFor } from "../_helpers/run_cli.ts";
import { fdsOn, rootKey, servedBurst } from "../_helpers/serve_process.ts";
import { sse, type SseMessage } from "../_helpers/sse.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

interface Shown {
  seq: number;
  type: string;
  lines: string[];
  event?: { seq: number; type: string };
}

/** Reads a rendered stream until `stopAt` says so (or it ends). */
async function readShown(
  url: string,
  headers: Record<string, string>,
  stopAt: (shown: Shown) => boolean = () => false,
): Promise<{ ids: number[]; shown: Shown[]; others: SseMessage[] }> {
  const response = await fetch(url, { headers });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /event-stream/);
  const ids: number[] = [];
  const shown: Shown[] = [];
  const others: SseMessage[] = [];
  for await (const message of sse(response)) {
    if (message.event !== null) {
      others.push(message);
      continue;
    }
    ids.push(Number(message.id));
    const one = JSON.parse(message.data) as Shown;
    shown.push(one);
    if (stopAt(one)) break;
  }
  return { ids, shown, others };
}

Deno.test("a run page's one stream carries each event rendered, once, with its seq as the id, from the run's one follower, and resumes after Last-Event-ID", async () => {
  // The tail keeps the run live (several seconds) while the server is
  // looked at.
  await using served = await servedBurst(300, { rounds: 80, delay: 25 }, 300);
  const { packet, finished, snapshot, dashboard } = served;
  const { origin, cookie, pid } = dashboard;
  const base = `${origin}/run/${
    rootKey(
      packet.stateRoot,
    )
  }/${snapshot.run_id}`;
  const eventsFile = join(packet.stateRoot, "control", "events.jsonl");
  // The descriptors the server holds open on the events file: a follower
  // holds one all along (a read in flight shows a duplicate: see fdsOn).
  const held = (): Promise<string[]> => fdsOn(pid, eventsFile);
  // While the page's stream and a raw one follow the live run, the server
  // holds the events file open once: no second follower, no second read.
  const near = Number(snapshot.last_seq) - 3;
  // Both streams stay open until the looks are taken, then end at one cut.
  let sampled = false;
  const samples: string[][] = [];
  let cut = 0;
  let live: () => void = () => {};
  const started = new Promise<void>((resolve) => live = resolve);
  const pageRead = readShown(
    `${base}/events/rendered?after=${near}`,
    { cookie },
    (one) => {
      live();
      if (sampled && cut === 0 && one.seq >= near + 30) cut = one.seq;
      return cut !== 0;
    },
  );
  await started;
  let rawLive: () => void = () => {};
  const rawStarted = new Promise<void>((resolve) => rawLive = resolve);
  const rawRead = (async () => {
    const response = await fetch(`${base}/events?after=${near}`, {
      headers: { cookie },
    });
    const ids: number[] = [];
    for await (const message of sse(response)) {
      if (message.event !== null) continue;
      ids.push(Number(message.id));
      rawLive();
      if (cut !== 0 && ids.at(-1)! >= cut) break;
    }
    return ids;
  })();
  // Both streams are live: what the server holds open now, a few times.
  await rawStarted;
  for (let i = 0; i < 5; i++) {
    samples.push(await held());
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  sampled = true;
  const [page, raw] = await Promise.all([pageRead, rawRead]);
  // The descriptors open in every sample: the followers of both streams.
  assert.ok(samples.length >= 3, `${samples.length} samples`);
  const lasting = samples[0]!.filter((fd) =>
    samples.every((sample) => sample.includes(fd))
  );
  assert.equal(
    lasting.length,
    1,
    `one follower of the events file for both streams: ${
      JSON.stringify(samples)
    }`,
  );
  assert.deepEqual(page.ids, raw.slice(0, page.ids.length));
  // Comes back with Last-Event-ID: the rest, to run_finished.
  const rest = await readShown(
    `${base}/events/rendered`,
    { cookie, "last-event-id": String(cut) },
    (one) => one.type === "run_finished",
  );
  assert.equal((await finished).code, 0);
  const stored = (await Deno.readTextFile(eventsFile)).split("\n")
    .filter((line) => line !== "").map((line) => JSON.parse(line));
  const all = [...page.shown, ...rest.shown];
  const ids = [...page.ids, ...rest.ids];
  assert.deepEqual(
    ids,
    stored.slice(near).map((e) => e.seq),
    "no gap, no duplicate",
  );
  assert.deepEqual(all.map((one) => one.seq), ids, "the id is the seq");
  assert.deepEqual(
    all.map((one) => one.type),
    stored.slice(near).map((e) => e.type),
  );
  for (const one of all) {
    assert.ok(Array.isArray(one.lines), `seq ${one.seq} has its lines`);
  }
  // What changes the timeline comes with its event.
  const last = all.at(-1)!;
  assert.equal(last.event?.type, "run_finished");
  assert.equal(last.event?.seq, last.seq);
  assert.ok(all.some((one) => one.lines.length > 0), "something is shown");
  // The lines are one rendering of the run, as /rendered gives them.
  // (/rendered answers at most 1,000 seqs at a time.)
  const whole: Shown[] = [];
  for (let from = all[0]!.seq; from <= last.seq; from += 1_000) {
    const to = Math.min(last.seq, from + 999);
    whole.push(
      ...await (await fetch(`${base}/rendered?from=${from}&to=${to}`, {
        headers: { cookie },
      })).json() as Shown[],
    );
  }
  assert.deepEqual(
    all.map((one) => one.lines),
    whole.map((one) => one.lines),
  );
});

Deno.test("two dashboards in one process keep their own followers: a stream on one starts none on the other, and each one's stop ends only its own", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(60, 50) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  const index = await RunIndex.open([packet.dir], packet.root);
  const access = accessOf({
    host: "127.0.0.1",
    port: 1,
    listening: ["127.0.0.1"],
    addresses: [],
    hostname: null,
    extra: [],
  });
  const stops = [new AbortController(), new AbortController()];
  const [a, b] = stops.map((stop) =>
    new Dashboard({
      index,
      token: "t",
      access,
      author: "web:x",
      stop: stop.signal,
    })
  );
  // Reads through the index (what /rendered does) are counted.
  let reads = 0;
  const readEvents = index.readEvents.bind(index);
  index.readEvents = (...args) => {
    reads++;
    return readEvents(...args);
  };
  const open = async (dashboard: Dashboard, stream = "events") => {
    const response = await dashboard.handle(
      new Request(
        `http://127.0.0.1:1/run/${
          index.roots()[0]!.key
        }/${snapshot.run_id}/${stream}`,
        { headers: { host: "127.0.0.1:1", cookie: `${cookieName(1)}=t` } },
      ),
    );
    assert.equal(response.status, 200);
    const messages = sse(response);
    // Its first event: the stream's followers are running.
    for (;;) {
      const { value } = await messages.next();
      if (value?.event === null) break;
    }
    return messages;
  };
  try {
    const onA = await open(a!);
    assert.equal(a!.hubs.size, 2, "A follows the run's events and log");
    assert.equal(b!.hubs.size, 0, "B follows nothing");
    // B's page stream: the run's events rendered, from B's own follower.
    const onB = await open(b!, "events/rendered");
    assert.equal(b!.hubs.size, 3, "B follows the events, renders, the log");
    assert.equal(a!.hubs.size, 2);
    let seq = 0;
    for (let i = 0; i < 5; i++) {
      const { value } = await onB.next();
      if (value?.event !== null) continue;
      const shown = JSON.parse(value.data);
      assert.equal(Number(value.id), shown.seq);
      assert.ok(shown.seq > seq);
      seq = shown.seq;
    }
    assert.equal(reads, 0, "the rendered events come from the follower");
    stops[0]!.abort();
    await waitFor(
      "A's followers to stop",
      () => Promise.resolve(a!.hubs.size === 0),
      10_000,
    );
    assert.equal(b!.hubs.size, 3, "B's go on");
    // What A had sent before its stop, then its end.
    while (!(await onA.next()).done) continue;
    await onB.return(undefined);
    await waitFor(
      "B's followers to stop",
      () => Promise.resolve(b!.hubs.size === 0),
      10_000,
    );
  } finally {
    for (const stop of stops) stop.abort();
    index.close();
    run.child.kill("SIGTERM");
    await run.finish();
  }
});

Deno.test("a run page's stream that starts behind what its rendered follower keeps catches up alone, rendered as one pass from seq 1, then joins it: each seq once", async () => {
  // 2,400-odd events at once (more than a shared follower keeps), then a
  // prompt that keeps the run live for a few seconds.
  await using served = await servedBurst(400, { rounds: 30, delay: 20 }, 2_100);
  const { packet, finished, snapshot, dashboard } = served;
  const { origin, cookie } = dashboard;
  const base = `${origin}/run/${rootKey(packet.stateRoot)}/${snapshot.run_id}`;
  const near = Number(snapshot.last_seq) - 3;
  const untilEnd = (one: Shown): boolean => one.type === "run_finished";
  // The first page near the live end starts the rendered follower there.
  let live: () => void = () => {};
  const started = new Promise<void>((resolve) => live = resolve);
  const tail = readShown(
    `${base}/events/rendered?after=${near}`,
    { cookie },
    (one) => {
      live();
      return untilEnd(one);
    },
  );
  await started;
  // One from the start: behind all it keeps.
  const [fromTail, whole] = await Promise.all([
    tail,
    readShown(`${base}/events/rendered?after=0`, { cookie }, untilEnd),
  ]);
  assert.equal((await finished).code, 0);
  const stored = (await Deno.readTextFile(
    join(packet.stateRoot, "control", "events.jsonl"),
  )).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  assert.deepEqual(whole.ids, stored.map((e) => e.seq), "every seq once");
  assert.deepEqual(
    fromTail.ids,
    stored.slice(near).map((e) => e.seq),
    "from the live end",
  );
  // Caught up and live, it reads as one rendering of the run, as the
  // first page's does where they overlap.
  const bySeq = new Map(whole.shown.map((one) => [one.seq, one.lines]));
  for (const one of fromTail.shown) {
    assert.deepEqual(one.lines, bySeq.get(one.seq), `seq ${one.seq}`);
  }
  const rendered = await (await fetch(`${base}/rendered?from=1&to=1000`, {
    headers: { cookie },
  })).json() as Shown[];
  assert.deepEqual(
    whole.shown.slice(0, 1000).map((one) => one.lines),
    rendered.map((one) => one.lines),
  );
});
