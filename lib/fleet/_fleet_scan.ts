/**
 * Reading what the fleet holds across runs: every run's latest snapshot in
 * `PR_RUNS` (one pass of the bucket, each key's last value), and whether a
 * request still waits in a run's work queue.
 *
 * @module
 */

import { parseSnapshot, type Snapshot } from "../control/snapshot.ts";
import type { FleetLink } from "./_link.ts";
import { readSubject } from "./_reader.ts";
import { REQUESTS_STREAM, RUNS_BUCKET } from "./fleet_names.ts";

const decoder = new TextDecoder();

/** A run's entry in `PR_RUNS`. */
export interface RunEntry {
  /** Its key (`<node>.<root>.<run_id>`). */
  key: string;
  /** Its latest snapshot. */
  snapshot: Snapshot;
  /** When it was put (ms since the epoch, the fleet's clock). */
  time: number;
}

/** A bucket's value under one key. */
export interface BucketEntry {
  /** The key. */
  key: string;
  /** The value. */
  value: Uint8Array;
  /** When it was put (ms since the epoch, the fleet's clock). */
  time: number;
}

/**
 * The latest value of every key of a bucket matching `filter` (`>` for
 * all), in one pass; deleted keys left out. A missing bucket has none.
 */
export async function scanBucket(
  link: FleetLink,
  bucket: string,
  filter: string,
): Promise<BucketEntry[]> {
  const prefix = `$KV.${bucket}.`;
  // A key put again while the pass reads comes twice (its last value when
  // the pass began, then the new one): the later one stands, once.
  const entries = new Map<string, BucketEntry | null>();
  const stop = new AbortController();
  try {
    for await (
      const batch of readSubject(link, {
        stream: `KV_${bucket}`,
        subject: `${prefix}${filter}`,
        from: "last_per_subject",
        signal: stop.signal,
      })
    ) {
      for (const message of batch.messages) {
        const key = message.subject.slice(prefix.length);
        entries.delete(key);
        entries.set(
          key,
          message.operation !== undefined
            ? null
            : { key, value: message.data, time: message.time },
        );
      }
      if (batch.caughtUp) break;
    }
  } finally {
    stop.abort();
  }
  return [...entries.values()].filter((entry) => entry !== null);
}

/**
 * Every run whose key matches `filter` (`>` for all, `<node>.<root>.>`),
 * with its latest snapshot. A value that is not a snapshot is skipped.
 */
export async function scanRuns(
  link: FleetLink,
  filter: string,
): Promise<RunEntry[]> {
  const runs: RunEntry[] = [];
  for (const entry of await scanBucket(link, RUNS_BUCKET, filter)) {
    try {
      runs.push({
        key: entry.key,
        snapshot: parseSnapshot(decoder.decode(entry.value), entry.key),
        time: entry.time,
      });
    } catch {
      // Not a snapshot: nothing to list.
    }
  }
  return runs;
}

/** Whether a request with this id still waits on a run's work-queue subject. */
export async function findRequest(
  link: FleetLink,
  subject: string,
  requestId: string,
): Promise<boolean> {
  let seq = 1;
  for (let look = 0; look < 1_000; look++) {
    const message = await link.nextMessage(REQUESTS_STREAM, subject, seq)
      .catch(() => null);
    if (message === null) return false;
    if (message.msgId === requestId) return true;
    try {
      if (JSON.parse(decoder.decode(message.data))?.id === requestId) {
        return true;
      }
    } catch {
      // Not a request a client wrote.
    }
    seq = message.seq + 1;
  }
  return false;
}
