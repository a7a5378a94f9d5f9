/**
 * A bridge's events loop: follows the run's `events.jsonl` like any
 * follower and publishes each stored line to `pr.ev.<key>` as it is
 * (`Nats-Msg-Id: <run_id>:<seq>`), resuming after every outage from the
 * fleet's last message, so the fleet's copy is the file's, gap-free and
 * duplicate-free.
 *
 * @module
 */

import { RunLostError } from "../shared/errors.ts";
import { fileEventByteBatches } from "../control/subscribe.ts";
import type { StoredMessage } from "./_link.ts";
import { OrderedPublisher, PublishStopped } from "./_publisher.ts";
import { type BridgeRun, isAbort } from "./_bridge_run.ts";
import { EVENTS_STREAM, eventsSubject } from "./fleet_names.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();
/** `{"v":1,"seq":` — how every line the runner writes starts. */
const PREFIX = new TextEncoder().encode('{"v":1,"seq":');

/** The `seq` of a stored event line, or `null` when it has none. */
export function seqOfLine(line: Uint8Array): number | null {
  let canonical = line.length > PREFIX.length;
  for (let i = 0; canonical && i < PREFIX.length; i++) {
    canonical = line[i] === PREFIX[i];
  }
  if (canonical) {
    let seq = 0;
    let i = PREFIX.length;
    for (; i < line.length && line[i]! >= 0x30 && line[i]! <= 0x39; i++) {
      seq = seq * 10 + line[i]! - 0x30;
    }
    if (i > PREFIX.length && line[i] === 0x2c) return seq;
  }
  try {
    const value = JSON.parse(decoder.decode(line));
    return Number.isInteger(value?.seq) ? value.seq : null;
  } catch {
    return null;
  }
}

/** The event `seq` a stored message carries, from its id or its body. */
function seqOfMessage(message: StoredMessage): number {
  const id = message.msgId;
  const at = id?.lastIndexOf(":") ?? -1;
  const fromId = at < 0 ? NaN : Number(id!.slice(at + 1));
  return Number.isInteger(fromId) ? fromId : seqOfLine(message.data) ?? 0;
}

/** Whether a stored event is the run's final `run_finished`. */
function isFinal(message: StoredMessage): boolean {
  try {
    const event = JSON.parse(decoder.decode(message.data));
    return event?.type === "run_finished" &&
      event?.data?.status !== "interrupted";
  } catch {
    return false;
  }
}

/**
 * Publishes the run's events until its `run_finished` is acknowledged by
 * the fleet (or the runner is gone before writing one). Never throws for
 * the fleet's sake: an outage is waited out, then publishing resumes from
 * the fleet's last message.
 */
export async function bridgeEvents(run: BridgeRun): Promise<void> {
  const subject = eventsSubject(run.names.key);
  const prefix = `${run.ref.run_id}:`;
  let publisher: OrderedPublisher | null = null;
  let warnedSize = false;
  try {
    for (;;) {
      let link;
      try {
        link = await run.session.ready(run.stop);
      } catch (error) {
        if (isAbort(error)) return;
        throw error;
      }
      publisher ??= new OrderedPublisher(link, subject);
      let from: number;
      try {
        const last = await link.lastMessage(EVENTS_STREAM, subject);
        if (last !== null && isFinal(last)) {
          run.progress.publishedSeq = seqOfMessage(last);
          return;
        }
        from = (last === null ? 0 : seqOfMessage(last)) + 1;
        run.progress.publishedSeq = from - 1;
        publisher.restart(last?.seq ?? 0);
      } catch (error) {
        await run.session.backoff(error, run.stop);
        continue;
      }
      try {
        for await (
          const block of fileEventByteBatches(run.ref, {
            from,
            signal: run.stop,
          })
        ) {
          let start = 0;
          while (start < block.length) {
            let end = block.indexOf(NEWLINE, start);
            if (end < 0) end = block.length;
            const line = block.subarray(start, end);
            start = end + 1;
            const seq = seqOfLine(line);
            if (seq === null) continue;
            run.progress.readSeq = seq;
            // Headers and protocol take a little room beside the line.
            if (line.length + 512 > link.maxPayload) {
              if (!warnedSize) {
                warnedSize = true;
                run.session.say(
                  `Event ${seq} of run ${run.ref.run_id} is ${line.length} bytes, over the fleet's max_payload of ${link.maxPayload}: the fleet's copy leaves out every event that large (raise max_payload on its servers)`,
                );
              }
              continue;
            }
            while (!publisher.trySend(line, prefix + seq)) {
              await publisher.room();
            }
          }
          run.progress.lastProgress = Date.now();
        }
        await publisher.drain();
        run.progress.publishedSeq = run.progress.readSeq;
        return;
      } catch (error) {
        if (error instanceof PublishStopped) {
          await run.session.backoff(
            `The fleet at ${run.session.shown} stopped taking events: ${error.message}`,
            run.stop,
          );
          continue;
        }
        if (error instanceof RunLostError) {
          // The runner is gone: what it wrote is all there will be.
          await publisher.drain().catch(() => {});
          return;
        }
        if (isAbort(error) || run.stop.aborted) return;
        throw error;
      }
    }
  } finally {
    run.progress.eventsSettled = true;
    publisher?.close();
  }
}
