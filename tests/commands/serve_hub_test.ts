/**
 * The dashboard's shared followers: one source read for every connection,
 * each connection fed from its own position with no gap and no duplicate,
 * a busy stream's batches sent together, a connection that cannot keep up
 * dropped, and the follower stopped when nobody watches.
 */

import assert from "node:assert/strict";
import {
  Hub,
  Hubs,
  type Piece,
  type PieceSource,
  SEND_EVERY_MS,
  type Subscriber,
} from "../../commands/serve/_hub.ts";

const decoder = new TextDecoder();

/** Pieces whose bytes are `<at>;`, so a subscriber's text lists what it got. */
function pieces(from: number, to: number): Piece[] {
  const out: Piece[] = [];
  for (let at = from; at <= to; at++) {
    out.push({ at, bytes: new TextEncoder().encode(`${at};`) });
  }
  return out;
}

/** A source the test feeds by hand, counting how often it was started. */
class ManualSource {
  starts: number[] = [];
  stopped = 0;
  #queue: (Piece[] | Error | "end")[] = [];
  #wake: (() => void) | null = null;

  readonly source: PieceSource = async function* (
    this: ManualSource,
    from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    this.starts.push(from);
    try {
      for (;;) {
        const next = this.#queue.shift();
        if (next === undefined) {
          if (signal.aborted) return;
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
          continue;
        }
        if (next === "end") return;
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      this.stopped++;
    }
  }.bind(this);

  push(item: Piece[] | Error | "end"): void {
    this.#queue.push(item);
    this.#wake?.();
    this.#wake = null;
  }
}

/** What a recording subscriber saw. */
interface Recorded {
  got: string[];
  writes: number;
  ended: string | null;
  finished: boolean;
}

/** A subscriber that records what it got and how it ended. */
function recorder(
  next: number,
  accept: () => boolean = () => true,
): { subscriber: Subscriber; state: Recorded } {
  const got: string[] = [];
  const state: Recorded = {
    got,
    writes: 0,
    ended: null,
    finished: false,
  };
  const subscriber: Subscriber = {
    next,
    write(bytes: Uint8Array): boolean {
      state.writes++;
      if (!accept()) return false;
      got.push(...decoder.decode(bytes).split(";").filter(Boolean));
      return true;
    },
    finish(): void {
      state.finished = true;
    },
    end(reason: string): void {
      state.ended = reason;
    },
  };
  return { subscriber, state };
}

/** Lets the hub's loop and timers run a while (for what must not happen). */
function settle(ms = SEND_EVERY_MS * 3): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `ready()` holds (what must happen), failing after 10 s. */
async function until(what: string, ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function range(from: number, to: number): string[] {
  return pieces(from, to).map((piece) => String(piece.at));
}

Deno.test("one hub feeds every subscriber from its own position, with no gap and no duplicate, from one source", async () => {
  const manual = new ManualSource();
  const hubs = new Hubs();
  const hub = hubs.hub("run", manual.source, 1, 5);
  const first = recorder(1);
  hub.join(first.subscriber);
  manual.push(pieces(1, 8));
  await until("8 pieces", () => first.state.got.length === 8);
  assert.deepEqual(first.state.got, range(1, 8));
  // It keeps its newest 5 (4..8): one that needs 6 joins; one that needs 2
  // is behind what it keeps and must catch up on its own first.
  assert.equal(hub.oldest, 4);
  assert.equal(hub.covers(6), true);
  assert.equal(hub.covers(3), false);
  const second = recorder(6);
  hub.join(second.subscriber);
  assert.deepEqual(second.state.got, range(6, 8));
  // One ahead of the hub (it caught up on its own past it) gets only what
  // it has not had.
  const ahead = recorder(11);
  hub.join(ahead.subscriber);
  manual.push(pieces(9, 12));
  await until("12 pieces", () => first.state.got.length === 12);
  await until("to 12", () => ahead.state.got.at(-1) === "12");
  assert.deepEqual(first.state.got, range(1, 12));
  assert.deepEqual(second.state.got, range(6, 12));
  assert.deepEqual(ahead.state.got, range(11, 12));
  // The same key gets the same hub: the source was started once.
  assert.equal(hubs.hub("run", manual.source, 1, 5), hub);
  assert.deepEqual(manual.starts, [1]);
  assert.equal(hubs.size, 1);
  hubs.close();
  await until("the source to stop", () => manual.stopped === 1);
  assert.equal(hubs.size, 0);
});

Deno.test("a hub sends a busy stream's batches together, and the first after a quiet spell at once", async () => {
  const manual = new ManualSource();
  const hubs = new Hubs();
  // A long pause, so that "within the pause" holds on a loaded machine.
  const pause = 1_000;
  const hub = hubs.hub("run", manual.source, 1, 100, pause);
  const watcher = recorder(1);
  hub.join(watcher.subscriber);
  manual.push(pieces(1, 1));
  await until("the first piece", () => watcher.state.writes === 1);
  assert.deepEqual(watcher.state.got, ["1"]);
  // Three more batches within the pause: held, then written in one go.
  const sent = performance.now();
  manual.push(pieces(2, 2));
  manual.push(pieces(3, 4));
  manual.push(pieces(5, 5));
  await settle(50);
  assert.equal(watcher.state.writes, 1, "held while the stream is busy");
  // A subscriber joining meanwhile still gets the held pieces, once.
  const late = recorder(3);
  hub.join(late.subscriber);
  assert.deepEqual(late.state.got, range(3, 5));
  await until("the held pieces", () => watcher.state.writes === 2);
  assert.ok(performance.now() - sent >= pause - 50, "sent after the pause");
  assert.deepEqual(watcher.state.got, range(1, 5));
  assert.deepEqual(late.state.got, range(3, 5), "nothing twice");
  hubs.close();
});

Deno.test("a hub drops a subscriber that cannot take more, and stops its source when the last one leaves", async () => {
  const manual = new ManualSource();
  const hubs = new Hubs();
  const hub = hubs.hub("run", manual.source, 1, 10);
  let open = true;
  const slow = recorder(1, () => open);
  const steady = recorder(1);
  hub.join(slow.subscriber);
  hub.join(steady.subscriber);
  manual.push(pieces(1, 2));
  await until("2 pieces", () => steady.state.got.length === 2);
  open = false; // its connection is closed (or too far behind)
  manual.push(pieces(3, 4));
  await until("the slow one dropped", () => hub.subscribers === 1);
  assert.deepEqual(slow.state.got, range(1, 2));
  manual.push(pieces(5, 5));
  await until("5 pieces", () => steady.state.got.length === 5);
  assert.equal(slow.state.writes, 2, "nothing more is written to it");
  assert.deepEqual(steady.state.got, range(1, 5));
  hub.leave(steady.subscriber);
  assert.equal(hub.ended, true);
  await until("the source to stop", () => manual.stopped === 1);
  assert.equal(hubs.size, 0);
  // The next connection starts a new follower, from where it needs.
  const next = hubs.hub("run", manual.source, 6, 10);
  assert.notEqual(next, hub);
  assert.equal(next.covers(6), true);
  await until("the second start", () => manual.starts.length === 2);
  hubs.close();
  assert.deepEqual(manual.starts, [1, 6]);
});

Deno.test("a hub's end reaches every subscriber: finished after the last piece, or ended with the source's reason", async () => {
  for (const ending of ["end", new Error("runner gone")] as const) {
    const manual = new ManualSource();
    const hubs = new Hubs();
    const hub = hubs.hub("run", manual.source, 1, 10);
    const a = recorder(1);
    const b = recorder(1);
    hub.join(a.subscriber);
    hub.join(b.subscriber);
    manual.push(pieces(1, 3));
    manual.push(ending);
    await until("the end", () => hub.ended && hubs.size === 0);
    await until(
      "both told",
      () => [a, b].every(({ state }) => state.finished || state.ended !== null),
    );
    for (const { state } of [a, b]) {
      assert.deepEqual(state.got, range(1, 3));
      if (ending === "end") {
        assert.equal(state.finished, true);
        assert.equal(state.ended, null);
      } else {
        assert.equal(state.finished, false);
        assert.equal(state.ended, "runner gone");
      }
    }
    assert.equal(hub.ended, true);
    assert.equal(hub.covers(4), false, "an ended hub takes no one");
    assert.equal(hubs.size, 0, "gone from the registry");
  }
});

Deno.test("Hub on its own: a subscriber whose first write fails is not kept", async () => {
  const manual = new ManualSource();
  let done = 0;
  const hub = new Hub(manual.source, 1, 10, () => done++);
  const keeper = recorder(1);
  hub.join(keeper.subscriber);
  manual.push(pieces(1, 2));
  await until("2 pieces", () => keeper.state.got.length === 2);
  const refused = recorder(1, () => false);
  hub.join(refused.subscriber);
  assert.equal(refused.state.writes, 1);
  assert.equal(hub.subscribers, 1);
  hub.leave(keeper.subscriber);
  assert.equal(done, 1);
  await until("the source to stop", () => manual.stopped === 1);
});
