/**
 * A run's live stream (DESIGN §10): its events, one SSE event per `seq`
 * (`id:` the seq), its snapshot and control log as unnumbered `snapshot`
 * and `log` events. The events come as their stored lines (`/events`), or
 * rendered for a run page (`/events/rendered`: each seq's studio lines),
 * both fed from the run's one shared follower: a page gets each event once,
 * already rendered, and the server reads the file once for every stream.
 *
 * @module
 */

import {
  errorText,
  type EventLine,
  eventLineBatches,
  followLog,
  type RunRef,
  type Snapshot,
  type ViewSettings,
} from "../../mod.ts";
import { eventRenderer } from "./_events_view.ts";
import type { Hub, Hubs, Piece, PieceSource, Subscriber } from "./_hub.ts";
import type { RenderedEvent } from "./_model.ts";
import type { RenderCache } from "./_render_cache.ts";
import type { RunIndex, WatchedRoot } from "./_runs.ts";
import { encoder, MessageStream, sseMessage } from "./_sse.ts";

/** How many of its newest events a run's shared follower keeps for joiners. */
const KEEP_EVENTS = 2_000;

/** How many of a run's control-log entries its shared follower keeps. */
const KEEP_LOG = 20_000;

/** How many events a rendered stream behind its shared one renders at a time. */
const CATCH_UP = 500;

/** What a run's stream carries for its events. */
export type StreamedEvents =
  | { kind: "lines" }
  | { kind: "rendered"; view: ViewSettings; renders: RenderCache };

/** How long the final snapshot is waited for after `run_finished`. */
const FINAL_SNAPSHOT_MS = 3_000;

/**
 * The run's snapshot once it no longer says `running` (the runner writes it
 * just after `run_finished`), or the newest one after a few seconds.
 */
async function finalSnapshot(
  index: RunIndex,
  root: WatchedRoot,
  ref: RunRef,
  signal: AbortSignal,
): Promise<Snapshot | null> {
  const deadline = Date.now() + FINAL_SNAPSHOT_MS;
  for (;;) {
    const snapshot = await index.snapshotOf(root, ref.run_id);
    if (snapshot === null || snapshot.run_id !== ref.run_id) return null;
    if (
      snapshot.status !== "running" || Date.now() >= deadline || signal.aborted
    ) {
      return snapshot;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A run's events as SSE messages, `id:` its seq and `data:` its line. */
function eventPieces(ref: RunRef): PieceSource {
  return async function* (
    from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    for await (const batch of eventLineBatches(ref, { from, signal })) {
      yield batch.map((line) => ({
        at: line.event.seq,
        bytes: encoder.encode(sseMessage(line.line, { id: line.event.seq })),
        line,
      }));
    }
  };
}

/** A run's control-log entries as `log` messages, counted from 1. */
function logPieces(ref: RunRef): PieceSource {
  return async function* (
    _from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    let at = 0;
    for await (const entry of followLog(ref, { signal })) {
      yield [{
        at: ++at,
        bytes: encoder.encode(
          sseMessage(JSON.stringify(entry), { event: "log" }),
        ),
      }];
    }
  };
}

/** How a subscription ended: its stream's end, an early end, or the client left. */
type Fed = { reason: string | null } | "gone";

/** Feeds `out` from `hub`, from `next`, until the hub ends or the client leaves. */
function feed(
  hub: Hub,
  out: MessageStream,
  next: number,
): Promise<Fed> {
  return new Promise<Fed>((resolve) => {
    const subscriber: Subscriber = {
      next,
      write: (bytes) => out.write(bytes),
      finish: () => resolve({ reason: null }),
      end: (reason) => resolve({ reason }),
    };
    const signal = out.abort.signal;
    if (signal.aborted) return resolve("gone");
    signal.addEventListener("abort", () => {
      hub.leave(subscriber);
      resolve("gone");
    }, { once: true });
    hub.join(subscriber);
  });
}

function runKey(ref: RunRef): string {
  return `${ref.state_root}\0${ref.run_id}`;
}

/** The run's shared follower of its stored lines, from `next` if it is new. */
function linesHub(hubs: Hubs, ref: RunRef, next: number): Hub {
  return hubs.hub(
    `events\0${runKey(ref)}`,
    eventPieces(ref),
    next,
    KEEP_EVENTS,
  );
}

/**
 * A run's events from `from`, taken from its shared follower: read alone
 * while behind what the follower keeps, then from it. Ends after
 * `run_finished`, or early when `signal` aborts.
 */
async function* sharedEvents(
  hubs: Hubs,
  ref: RunRef,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<EventLine[]> {
  let next = from;
  for (;;) {
    if (signal.aborted) return;
    const hub = linesHub(hubs, ref, next);
    if (hub.covers(next)) {
      yield* tap(hub, next, signal);
      return;
    }
    let joinable = false;
    for await (const batch of eventLineBatches(ref, { from: next, signal })) {
      yield batch;
      next = batch.at(-1)!.event.seq + 1;
      if (hub.ended || hub.covers(next)) {
        joinable = true;
        break;
      }
    }
    if (!joinable) return; // run_finished, read alone
  }
}

/** The events `hub` sends from `next`, as they come. */
async function* tap(
  hub: Hub,
  next: number,
  signal: AbortSignal,
): AsyncGenerator<EventLine[]> {
  const queue: EventLine[][] = [];
  let ended: Fed | null = null;
  let wake: (() => void) | null = null;
  const woken = (): void => {
    wake?.();
    wake = null;
  };
  const subscriber: Subscriber = {
    next,
    write: () => true,
    take: (pieces) => {
      queue.push(pieces.map((piece) => piece.line!));
      woken();
      return true;
    },
    finish: () => {
      ended = { reason: null };
      woken();
    },
    end: (reason) => {
      ended = { reason };
      woken();
    },
  };
  const gone = (): void => {
    ended ??= "gone";
    woken();
  };
  signal.addEventListener("abort", gone, { once: true });
  hub.join(subscriber);
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (ended !== null) break;
      await new Promise<void>((resolve) => wake = resolve);
    }
  } finally {
    signal.removeEventListener("abort", gone);
    hub.leave(subscriber);
  }
  const last = ended as Fed;
  if (last !== "gone" && last.reason !== null) throw new Error(last.reason);
}

/** What a run page is sent for one event: its rendering (with the event when the timeline needs it). */
function renderedMessage(shown: RenderedEvent): string {
  return sseMessage(JSON.stringify(shown), { id: shown.seq });
}

/**
 * A run's events rendered with `view`, from `from`: one renderer fed from
 * seq 1 (it remembers tool calls and the run's totals), from the run's
 * shared follower.
 */
function renderedPieces(
  hubs: Hubs,
  ref: RunRef,
  view: ViewSettings,
): PieceSource {
  return async function* (
    from: number,
    signal: AbortSignal,
  ): AsyncGenerator<Piece[]> {
    const render = eventRenderer(view);
    for await (const batch of sharedEvents(hubs, ref, 1, signal)) {
      const pieces: Piece[] = [];
      for (const { event } of batch) {
        const shown = render(event);
        if (event.seq < from) continue;
        pieces.push({
          at: event.seq,
          bytes: encoder.encode(renderedMessage(shown)),
        });
      }
      if (pieces.length > 0) yield pieces;
    }
  };
}

function viewKey(view: ViewSettings): string {
  return `${view.tool_output}/${view.thinking}/${view.diff}`;
}

/** The shared hub of what `events` asks for, from `next` if it is new. */
function eventsHub(
  hubs: Hubs,
  ref: RunRef,
  events: StreamedEvents,
  next: number,
): Hub {
  if (events.kind === "lines") return linesHub(hubs, ref, next);
  return hubs.hub(
    `rendered\0${runKey(ref)}\0${viewKey(events.view)}`,
    renderedPieces(hubs, ref, events.view),
    next,
    KEEP_EVENTS,
  );
}

/**
 * The messages of a stream behind what its shared hub keeps, read alone
 * from `next`: batches with the seq after each.
 */
async function* behind(
  ref: RunRef,
  events: StreamedEvents,
  next: number,
  signal: AbortSignal,
): AsyncGenerator<{ text: string; next: number }> {
  if (events.kind === "lines") {
    for await (const batch of eventLineBatches(ref, { from: next, signal })) {
      let text = "";
      for (const { line, event } of batch) {
        text += sseMessage(line, { id: event.seq });
      }
      yield { text, next: batch.at(-1)!.event.seq + 1 };
    }
    return;
  }
  // Rendered as one pass from seq 1 would (the cache keeps its renderer).
  for (;;) {
    if (signal.aborted) return;
    const shown = await events.renders.rendered(
      ref,
      events.view,
      next,
      next + CATCH_UP - 1,
    );
    if (shown.length === 0) return;
    let text = "";
    for (const one of shown) text += renderedMessage(one);
    next = shown.at(-1)!.seq + 1;
    yield { text, next };
    if (shown.at(-1)!.type === "run_finished") return;
  }
}

/**
 * A run's live stream: its events from `from` (each `id: seq`; `data:` the
 * stored line byte for byte, or its rendering), its snapshot whenever it
 * changes, and its control log; ends after `run_finished` (or with an `end`
 * event when the run is lost). Connections near the live end share one
 * follower per run; one further behind reads on its own until it reaches
 * the shared one.
 */
export function runEventStream(
  index: RunIndex,
  hubs: Hubs,
  root: WatchedRoot,
  ref: RunRef,
  from: number,
  stop: AbortSignal,
  events: StreamedEvents = { kind: "lines" },
): ReadableStream<Uint8Array> {
  const out = new MessageStream(stop);
  const signal = out.abort.signal;
  const sendSnapshot = (snapshot: Snapshot): void => {
    if (snapshot.run_id === ref.run_id) {
      out.send(sseMessage(JSON.stringify(snapshot), { event: "snapshot" }));
    }
  };
  const unwatch = index.watch((changed, snapshot) => {
    if (changed.key === root.key) sendSnapshot(snapshot);
  });
  signal.addEventListener("abort", unwatch, { once: true });
  // The log: every entry of the run so far, then each as it is written.
  void feed(
    hubs.hub(`log\0${runKey(ref)}`, logPieces(ref), 1, KEEP_LOG),
    out,
    1,
  );
  void (async () => {
    let ending: string | null = null;
    try {
      // The snapshot as it is now (then as it changes), before the events.
      const snapshot = await index.snapshotOf(root, ref.run_id);
      if (snapshot !== null) sendSnapshot(snapshot);
      let next = from;
      for (;;) {
        if (signal.aborted) return;
        const hub = eventsHub(hubs, ref, events, next);
        if (hub.covers(next)) {
          const fed = await feed(hub, out, next);
          if (fed === "gone") return;
          if (fed.reason !== null) throw new Error(fed.reason);
          break;
        }
        // Behind what the shared follower keeps: catch up alone.
        let joinable = false;
        for await (const sent of behind(ref, events, next, signal)) {
          out.send(sent.text);
          next = sent.next;
          // A slow client slows its own reader, never the server's memory.
          await out.ready();
          if (hub.ended || hub.covers(next)) {
            joinable = true;
            break;
          }
        }
        if (!joinable) break; // run_finished, read alone
      }
      if (signal.aborted) return;
      // The runner writes its last snapshot after run_finished: the page
      // closes its stream on run_finished, so that snapshot comes first.
      const last = await finalSnapshot(index, root, ref, signal);
      if (last !== null) sendSnapshot(last);
    } catch (error) {
      ending = index.redact(errorText(error));
    }
    if (ending !== null && !out.closed) {
      out.send(
        sseMessage(JSON.stringify({ reason: ending }), { event: "end" }),
      );
    }
    out.close();
  })();
  return out.stream;
}
