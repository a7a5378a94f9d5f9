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
import { jetstreamManager } from "@nats-io/jetstream";
import type {
  FleetLink,
  LinkMessage,
  LinkOptions,
  LinkState,
  LinkSubscription,
  QueuedMessage,
  ReaderSpec,
  StoredMessage,
  StreamSpec,
} from "./_link.ts";
import { API_TIMEOUT_MS, NatsJetStream } from "./_nats_js.ts";
import { NatsMessage } from "./_nats_message.ts";
import { patiently } from "./_patience.ts";

// The client removes a closed socket's listeners before it destroys it: a
// reset that lands after that is an "error" event nobody listens to, which
// Node's rules make an uncaught exception ("read ECONNRESET", seen when a
// server refuses the credentials and hangs up). It is the end of a
// connection the client has already given up on: ignored, and only that.
globalThis.addEventListener("error", (event) => {
  const code = (event.error as { code?: unknown } | undefined)?.code;
  if (code === "ECONNRESET" || code === "EPIPE") event.preventDefault();
});

function headersOf(
  values: Record<string, string> | undefined,
): MsgHdrs | undefined {
  if (values === undefined) return undefined;
  const h = natsHeaders();
  for (const [name, value] of Object.entries(values)) h.set(name, value);
  return h;
}

/** A connection to the fleet through the NATS client. */
class NatsLink implements FleetLink {
  readonly #nc: NatsConnection;
  readonly #js: NatsJetStream;
  readonly #listeners = new Set<(state: LinkState, detail: string) => void>();
  #state: LinkState = "connected";

  constructor(nc: NatsConnection, js: NatsJetStream) {
    this.#nc = nc;
    this.#js = js;
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

  ensureStream(spec: StreamSpec): Promise<void> {
    return this.#js.ensureStream(spec);
  }

  ensureBucket(name: string, replicas: number): Promise<void> {
    return this.#js.ensureBucket(name, replicas);
  }

  lastMessage(stream: string, subject: string): Promise<StoredMessage | null> {
    return this.#js.lastMessage(stream, subject);
  }

  nextMessage(
    stream: string,
    subject: string,
    seq: number,
  ): Promise<StoredMessage | null> {
    return this.#js.nextMessage(stream, subject, seq);
  }

  addReader(
    spec: ReaderSpec,
  ): Promise<{ name: string; after: number; pending: number } | null> {
    return this.#js.addReader(spec);
  }

  deleteConsumer(stream: string, name: string): Promise<void> {
    return this.#js.deleteConsumer(stream, name);
  }

  kvGet(
    bucket: string,
    key: string,
  ): Promise<{ value: Uint8Array; time: number; revision: number } | null> {
    return this.#js.kvGet(bucket, key);
  }

  kvPut(bucket: string, key: string, value: Uint8Array): Promise<void> {
    return this.#js.kvPut(bucket, key, value);
  }

  takeQueued(
    stream: string,
    durable: string,
    filter: string,
    signal: AbortSignal,
  ): AsyncIterable<QueuedMessage> {
    return this.#js.takeQueued(stream, durable, filter, signal);
  }

  async close(): Promise<void> {
    await this.#nc.close().catch(() => {});
  }
}

/**
 * Connects to a fleet. Fails at once when no server answers or the servers
 * refuse the credentials; waits (patiently) while JetStream has no leader;
 * once connected, it reconnects by itself for as long as it is open.
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
  const patience = {
    patienceMs: options.patienceMs ?? 20_000,
    shown: url.shown,
  };
  try {
    const jsm = await jetstreamManager(nc, {
      timeout: API_TIMEOUT_MS,
      checkAPI: false,
    });
    // JetStream answers (a cluster that lost its leader is waited out); a
    // server without it has no responder at all.
    await patiently(async () => {
      try {
        await jsm.getAccountInfo();
      } catch (error) {
        if ((error as { name?: string }).name === "NoRespondersError") {
          throw new Error(
            "JetStream is not enabled on its servers (start nats-server with -js)",
          );
        }
        throw error;
      }
    }, { ...patience, what: "JetStream's account information" });
    return new NatsLink(nc, new NatsJetStream(nc, jsm, patience));
  } catch (error) {
    await nc.close().catch(() => {});
    throw error;
  }
}
