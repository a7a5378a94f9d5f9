/**
 * The one module that imports the NATS client (`@nats-io/transport-node`,
 * `@nats-io/jetstream`, `@nats-io/kv`, pinned in deno.json): a
 * {@linkcode FleetLink} over a NATS connection. Loaded only when a fleet is
 * used (`_load.ts` imports it by a computed specifier), so `--help` and
 * every file-transport command never load the client.
 *
 * The hot paths (publishing events, replaying them) use the connection's
 * plain publish and subscribe, with the JetStream acknowledgements and
 * deliveries read by the fleet code itself: measured here, the client's
 * per-message JetStream calls were 4–5 times slower.
 *
 * @module
 */

import {
  connect,
  createInbox,
  credsAuthenticator,
  headers as natsHeaders,
  type MsgHdrs,
  type NatsConnection,
} from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  type StoredMsg,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type {
  FleetLink,
  LinkMessage,
  LinkState,
  LinkSubscription,
  QueuedMessage,
  ReaderSpec,
  StoredMessage,
  StreamSpec,
} from "./_link.ts";
import type { LinkOptions } from "./_load.ts";
import { NatsMessage } from "./_nats_message.ts";

const SECOND_NS = 1_000_000_000;
/** How long the fleet keeps a run's messages. */
const MAX_AGE_NS = 7 * 24 * 3600 * SECOND_NS;
/** The window in which a repeated `Nats-Msg-Id` is stored once. */
const DUPLICATE_WINDOW_NS = 120 * SECOND_NS;
/** How long a taken request may go unacknowledged before redelivery. */
const ACK_WAIT_NS = 5 * SECOND_NS;
const API_TIMEOUT_MS = 5_000;

function headersOf(
  values: Record<string, string> | undefined,
): MsgHdrs | undefined {
  if (values === undefined) return undefined;
  const h = natsHeaders();
  for (const [name, value] of Object.entries(values)) h.set(name, value);
  return h;
}

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

/** A connection to the fleet through the NATS client. */
class NatsLink implements FleetLink {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #kvm: Kvm;
  readonly #buckets = new Map<string, Promise<KV>>();
  readonly #listeners = new Set<(state: LinkState, detail: string) => void>();
  #state: LinkState = "connected";

  constructor(nc: NatsConnection, jsm: JetStreamManager) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#kvm = new Kvm(jetstream(nc, { timeout: API_TIMEOUT_MS }));
    this.#watch();
  }

  async #watch(): Promise<void> {
    const set = (state: LinkState, detail: string) => {
      if (this.#state === state || this.#state === "closed") return;
      this.#state = state;
      for (const listener of this.#listeners) listener(state, detail);
    };
    this.#nc.closed().then((error) => {
      set("closed", error ? String(error.message ?? error) : "closed");
    });
    for await (const status of this.#nc.status()) {
      if (status.type === "disconnect") set("disconnected", status.server);
      else if (status.type === "reconnect") set("connected", status.server);
    }
  }

  get maxPayload(): number {
    return this.#nc.info?.max_payload ?? 1024 * 1024;
  }

  get state(): LinkState {
    return this.#state;
  }

  inbox(): string {
    return createInbox();
  }

  publish(
    subject: string,
    data: Uint8Array,
    options: { headers?: Record<string, string>; reply?: string } = {},
  ): void {
    const headers = headersOf(options.headers);
    this.#nc.publish(subject, data, {
      ...(headers === undefined ? {} : { headers }),
      ...(options.reply === undefined ? {} : { reply: options.reply }),
    });
  }

  subscribe(
    subject: string,
    onMessage: (message: LinkMessage) => void,
  ): LinkSubscription {
    const sub = this.#nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error === null) onMessage(new NatsMessage(msg));
      },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  async request(
    subject: string,
    data: Uint8Array,
    options: { timeoutMs: number; headers?: Record<string, string> },
  ): Promise<LinkMessage> {
    const headers = headersOf(options.headers);
    return new NatsMessage(
      await this.#nc.request(subject, data, {
        timeout: options.timeoutMs,
        ...(headers === undefined ? {} : { headers }),
      }),
    );
  }

  async flush(): Promise<void> {
    await this.#nc.flush();
  }

  onState(listener: (state: LinkState, detail: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async ensureStream(spec: StreamSpec): Promise<void> {
    const info = await this.#jsm.streams.info(spec.name).catch(() => null);
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

  async ensureBucket(name: string, replicas: number): Promise<void> {
    const info = await this.#jsm.streams.info(`KV_${name}`).catch(() => null);
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

  async lastMessage(
    stream: string,
    subject: string,
  ): Promise<StoredMessage | null> {
    const message = await orNull(this.#jsm.streams.getMessage(stream, {
      last_by_subj: subject,
    }));
    return message === null ? null : stored(message);
  }

  async nextMessage(
    stream: string,
    subject: string,
    seq: number,
  ): Promise<StoredMessage | null> {
    const message = await orNull(this.#jsm.direct.getMessage(stream, {
      seq,
      next_by_subj: subject,
    }));
    return message === null ? null : stored(message);
  }

  async addReader(
    spec: ReaderSpec,
  ): Promise<{ name: string; after: number; pending: number } | null> {
    const from = spec.from;
    const info = await orNull(this.#jsm.consumers.add(spec.stream, {
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
    }));
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
    const entry = await orNull((await this.#bucket(bucket)).get(key));
    if (entry === null || entry.operation !== "PUT") return null;
    return {
      value: entry.value,
      time: entry.created.getTime(),
      revision: entry.revision,
    };
  }

  async kvPut(bucket: string, key: string, value: Uint8Array): Promise<void> {
    await (await this.#bucket(bucket)).put(key, value);
  }

  async *takeQueued(
    stream: string,
    durable: string,
    filter: string,
    signal: AbortSignal,
  ): AsyncIterable<QueuedMessage> {
    await this.#jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: filter,
      ack_policy: AckPolicy.Explicit,
      ack_wait: ACK_WAIT_NS,
      deliver_policy: DeliverPolicy.All,
    }).catch(async (error) => {
      if (await this.#jsm.consumers.info(stream, durable).catch(() => null)) {
        return;
      }
      throw error;
    });
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

  async close(): Promise<void> {
    await this.#nc.close().catch(() => {});
  }
}

/**
 * Connects to a fleet. Fails at once when no server answers or the servers
 * refuse the credentials; once connected, it reconnects by itself (to any
 * server the URL names) for as long as it is open.
 *
 * @throws The client's error (the caller words it).
 */
export async function openNatsLink(options: LinkOptions): Promise<FleetLink> {
  const { url } = options;
  const nc = await connect({
    servers: url.servers,
    name: options.name,
    timeout: options.timeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    reconnectJitterTLS: 100,
    pingInterval: 10_000,
    maxPingOut: 2,
    ignoreClusterUpdates: options.discover !== true,
    ...(url.user === undefined ? {} : { user: url.user }),
    ...(url.pass === undefined ? {} : { pass: url.pass }),
    ...(url.token === undefined ? {} : { token: url.token }),
    ...(options.creds === undefined ? {} : {
      authenticator: credsAuthenticator(
        new TextEncoder().encode(options.creds),
      ),
    }),
    ...(url.tls
      ? { tls: options.caFile ? { caFile: options.caFile } : {} }
      : {}),
  });
  try {
    const jsm = await jetstreamManager(nc, { timeout: API_TIMEOUT_MS });
    return new NatsLink(nc, jsm);
  } catch (error) {
    await nc.close().catch(() => {});
    throw error;
  }
}
