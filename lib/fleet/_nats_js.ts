/**
 * The JetStream half of the fleet's NATS connection (see `_nats.ts`, the
 * only other module that imports the NATS client): streams and buckets
 * made when missing, stored messages read back, readers' consumers, the
 * key-value puts and gets, and the work queue's durable consumer. Every
 * call is made patiently (`_patience.ts`): a cluster electing a leader is
 * waited out.
 *
 * @module
 */

import type { NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  type JetStreamManager,
  RetentionPolicy,
  type StoredMsg,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type {
  QueuedMessage,
  ReaderSpec,
  StoredMessage,
  StreamSpec,
} from "./_link.ts";
import { patiently } from "./_patience.ts";

const SECOND_NS = 1_000_000_000;
/** How long the fleet keeps a run's messages. */
const MAX_AGE_NS = 7 * 24 * 3600 * SECOND_NS;
/** The window in which a repeated `Nats-Msg-Id` is stored once. */
const DUPLICATE_WINDOW_NS = 120 * SECOND_NS;
/** How long a taken request may go unacknowledged before redelivery. */
const ACK_WAIT_NS = 5 * SECOND_NS;
/** How long one JetStream call may take. */
export const API_TIMEOUT_MS = 5_000;
/** How long a whole stream takes to answer a direct get, at most. */
const PROBE_TIMEOUT_MS = 1_000;

function stored(message: StoredMsg): StoredMessage {
  return {
    seq: message.seq,
    data: message.data,
    msgId: message.header?.get("Nats-Msg-Id") || undefined,
    time: message.time.getTime(),
  };
}

/** Whether an error says the stream (or bucket) does not exist. */
function missing(error: unknown): boolean {
  const e = error as { name?: string; code?: number; message?: string };
  return e?.name === "StreamNotFoundError" || e?.code === 10059 ||
    /stream not found/i.test(e?.message ?? "");
}

/** `null` for a stream that does not exist (no bridge made it yet). */
async function orNull<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (error) {
    if (missing(error)) return null;
    throw error;
  }
}

const DELIVER = {
  all: DeliverPolicy.All,
  new: DeliverPolicy.New,
  last_per_subject: DeliverPolicy.LastPerSubject,
} as const;

/** The JetStream calls of a fleet connection. */
export class NatsJetStream {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #kvm: Kvm;
  readonly #buckets = new Map<string, Promise<KV>>();
  /** The streams known to be whole (see `#whole`). */
  readonly #wholeStreams = new Set<string>();
  readonly #patience: { patienceMs: number; shown: string };

  constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    patience: { patienceMs: number; shown: string },
  ) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#kvm = new Kvm(jetstream(nc, { timeout: API_TIMEOUT_MS }));
    this.#patience = patience;
  }

  #patiently<T>(what: string, work: () => Promise<T>): Promise<T> {
    return patiently(work, { ...this.#patience, what });
  }

  ensureStream(spec: StreamSpec): Promise<void> {
    return this.#patiently(
      `making stream ${spec.name}`,
      () => this.#ensureStream(spec),
    );
  }

  async #ensureStream(spec: StreamSpec): Promise<void> {
    const info = await orNull(this.#jsm.streams.info(spec.name));
    if (info !== null) return;
    await this.#jsm.streams.add({
      name: spec.name,
      subjects: spec.subjects,
      num_replicas: spec.replicas,
      max_age: MAX_AGE_NS,
      duplicate_window: DUPLICATE_WINDOW_NS,
      retention: spec.workQueue
        ? RetentionPolicy.Workqueue
        : RetentionPolicy.Limits,
      allow_direct: true,
    }).catch(async (error) => {
      // Another bridge made it meanwhile.
      if (await this.#jsm.streams.info(spec.name).catch(() => null)) return;
      throw error;
    });
  }

  /** A bucket, bound without a look (a missing one reads as empty). */
  #bucket(name: string): Promise<KV> {
    let bucket = this.#buckets.get(name);
    if (bucket === undefined) {
      bucket = this.#kvm.open(name);
      bucket.catch(() => this.#buckets.delete(name));
      this.#buckets.set(name, bucket);
    }
    return bucket;
  }

  ensureBucket(name: string, replicas: number): Promise<void> {
    return this.#patiently(
      `making bucket ${name}`,
      () => this.#ensureBucket(name, replicas),
    );
  }

  async #ensureBucket(name: string, replicas: number): Promise<void> {
    const info = await orNull(this.#jsm.streams.info(`KV_${name}`));
    if (info === null) {
      await this.#kvm.create(name, {
        replicas,
        history: 1,
        ttl: MAX_AGE_NS / 1_000_000,
      }).catch(async (error) => {
        if (await this.#jsm.streams.info(`KV_${name}`).catch(() => null)) {
          return;
        }
        throw error;
      });
    }
  }

  /**
   * Whether `stream` is whole, so that its leader may be asked for a
   * message: `false` when it does not exist.
   *
   * nats-server before 2.9.15 (Debian's is 2.9.10) lists a new stream
   * before it has made its store, and a `STREAM.MSG.GET` in between
   * crashes the server (a nil store). Its info is safe to ask, and a
   * stream answers direct gets only once its store is made: so a stream
   * that exists is whole once a direct get is answered, even "no such
   * message"; until then it is being made, which passes by itself.
   *
   * @throws {Error} a transient error while it is being made.
   */
  async #whole(stream: string): Promise<boolean> {
    if (this.#wholeStreams.has(stream)) return true;
    const info = await orNull(this.#jsm.streams.info(stream));
    if (info === null) return false;
    // One that takes no direct gets cannot be asked; it was made whole by
    // someone else, long ago.
    if (info.config.allow_direct) {
      await this.#nc.request(
        `$JS.API.DIRECT.GET.${stream}`,
        JSON.stringify({ seq: 1 }),
        { timeout: PROBE_TIMEOUT_MS },
      );
    }
    this.#wholeStreams.add(stream);
    return true;
  }

  async lastMessage(
    stream: string,
    subject: string,
  ): Promise<StoredMessage | null> {
    const message = await this.#patiently(
      `reading ${subject}'s last message`,
      async () =>
        await this.#whole(stream)
          ? orNull(
            this.#jsm.streams.getMessage(stream, { last_by_subj: subject }),
          )
          : null,
    );
    return message === null ? null : stored(message);
  }

  async nextMessage(
    stream: string,
    subject: string,
    seq: number,
  ): Promise<StoredMessage | null> {
    const message = await this.#patiently(
      `reading ${subject} from ${seq}`,
      async () =>
        await this.#whole(stream)
          ? orNull(this.#jsm.direct.getMessage(stream, {
            seq,
            next_by_subj: subject,
          }))
          : null,
    );
    return message === null ? null : stored(message);
  }

  async addReader(
    spec: ReaderSpec,
  ): Promise<{ name: string; after: number; pending: number } | null> {
    const from = spec.from;
    const info = await this.#patiently(
      `following ${spec.filter}`,
      () =>
        orNull(this.#jsm.consumers.add(spec.stream, {
          deliver_subject: spec.deliver,
          filter_subject: spec.filter,
          ack_policy: AckPolicy.None,
          flow_control: true,
          idle_heartbeat: spec.heartbeatSeconds * SECOND_NS,
          mem_storage: true,
          inactive_threshold: 30 * SECOND_NS,
          ...(typeof from === "object"
            ? {
              deliver_policy: DeliverPolicy.StartSequence,
              opt_start_seq: from.seq,
            }
            : { deliver_policy: DELIVER[from] }),
        })),
    );
    if (info === null) return null;
    return {
      name: info.name,
      after: info.delivered.stream_seq,
      pending: info.num_pending,
    };
  }

  async deleteConsumer(stream: string, name: string): Promise<void> {
    await this.#jsm.consumers.delete(stream, name).catch(() => {});
  }

  async kvGet(
    bucket: string,
    key: string,
  ): Promise<{ value: Uint8Array; time: number; revision: number } | null> {
    const kv = await this.#bucket(bucket);
    const entry = await this.#patiently(
      `reading ${bucket}/${key}`,
      async () =>
        await this.#whole(`KV_${bucket}`) ? orNull(kv.get(key)) : null,
    );
    if (entry === null || entry.operation !== "PUT") return null;
    return {
      value: entry.value,
      time: entry.created.getTime(),
      revision: entry.revision,
    };
  }

  async kvPut(bucket: string, key: string, value: Uint8Array): Promise<void> {
    const kv = await this.#bucket(bucket);
    await this.#patiently(`putting ${bucket}/${key}`, () => kv.put(key, value));
  }

  async *takeQueued(
    stream: string,
    durable: string,
    filter: string,
    signal: AbortSignal,
  ): AsyncIterable<QueuedMessage> {
    await this.#patiently(
      `taking the requests on ${filter}`,
      () =>
        this.#jsm.consumers.add(stream, {
          durable_name: durable,
          filter_subject: filter,
          ack_policy: AckPolicy.Explicit,
          ack_wait: ACK_WAIT_NS,
          deliver_policy: DeliverPolicy.All,
        }).catch(async (error) => {
          if (
            await this.#jsm.consumers.info(stream, durable).catch(() => null)
          ) {
            return;
          }
          throw error;
        }),
    );
    const consumer = await jetstream(this.#nc).consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: 16 });
    const stop = () => messages.stop();
    // Aborted while the consumer was being set up: stop at once.
    if (signal.aborted) stop();
    signal.addEventListener("abort", stop, { once: true });
    try {
      for await (const message of messages) {
        yield {
          data: message.data,
          seq: message.seq,
          msgId: message.headers?.get("Nats-Msg-Id") || undefined,
          deliveries: message.info.deliveryCount,
          ack: async () => {
            await message.ackAck({ timeout: API_TIMEOUT_MS });
          },
        };
      }
    } finally {
      signal.removeEventListener("abort", stop);
      messages.stop();
    }
  }
}
