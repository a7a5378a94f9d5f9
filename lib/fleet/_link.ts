/**
 * What the fleet code needs of a NATS connection, in its own words: the
 * one file that imports the NATS client (`_nats.ts`) implements it, so
 * nothing else in the code base names the client's types, and nothing
 * loads it until a fleet is used.
 *
 * @module
 */

import type { FleetUrl } from "./fleet_url.ts";

/** How to connect. */
export interface LinkOptions {
  /** The fleet's address. */
  url: FleetUrl;
  /** A NATS creds file's text. */
  creds?: string;
  /** A CA certificate file for `tls://` servers signed by a private CA. */
  caFile?: string;
  /** The connection's name, as the servers show it. */
  name: string;
  /** How long the first connection may take, in milliseconds. */
  timeoutMs: number;
  /**
   * Learn the cluster's other servers from the one reached, and fail over
   * to them (a bridge does); otherwise only the URL's servers are used (a
   * confined client may reach no others).
   */
  discover?: boolean;
  /**
   * How long a JetStream call may keep failing transiently (a cluster
   * electing a leader) before the fleet "did not answer" (default 20 s).
   */
  patienceMs?: number;
}

/** A message as the fleet code sees it. */
export interface LinkMessage {
  /** The subject it was sent to. */
  subject: string;
  /** Its body. */
  data: Uint8Array;
  /** Where an answer goes (a JetStream delivery's reply names its place). */
  reply: string;
  /** A header's value, or `undefined`. */
  header(name: string): string | undefined;
  /** The status code of a status message (100, 404, 408, 503), else 0. */
  status: number;
  /** The status message's description, else `""`. */
  description: string;
}

/** A subscription. */
export interface LinkSubscription {
  /** Stops it. */
  unsubscribe(): void;
}

/** A stream as the fleet creates it. */
export interface StreamSpec {
  /** Its name. */
  name: string;
  /** Its subjects. */
  subjects: string[];
  /** Replicas (1 when absent). */
  replicas: number;
  /** Work-queue retention instead of limits. */
  workQueue?: boolean;
}

/** A stored message read back. */
export interface StoredMessage {
  /** Its sequence in the stream. */
  seq: number;
  /** Its body. */
  data: Uint8Array;
  /** Its `Nats-Msg-Id`, or `undefined`. */
  msgId: string | undefined;
  /** When the server stored it (ms since the epoch). */
  time: number;
}

/** A push consumer as the readers create it (ephemeral, no acks). */
export interface ReaderSpec {
  /** The stream. */
  stream: string;
  /** The subject to read (one subject, or a `>` pattern). */
  filter: string;
  /** Where delivery starts. */
  from: "all" | "new" | "last_per_subject" | { seq: number };
  /** The subject deliveries go to. */
  deliver: string;
  /** Seconds between idle heartbeats. */
  heartbeatSeconds: number;
}

/** A request message taken from the work queue. */
export interface QueuedMessage {
  /** Its body. */
  data: Uint8Array;
  /** Its sequence in the stream. */
  seq: number;
  /** Its `Nats-Msg-Id`, or `undefined`. */
  msgId: string | undefined;
  /** How many times it was delivered (1 the first time). */
  deliveries: number;
  /** Acknowledges it, and waits for the server to have it. */
  ack(): Promise<void>;
}

/** How the connection stands. */
export type LinkState = "connected" | "disconnected" | "closed";

/** A connection to the fleet. */
export interface FleetLink {
  /** The largest message the servers take, in bytes. */
  readonly maxPayload: number;
  /** Whether messages reach the servers now. */
  readonly state: LinkState;
  /** A new unique inbox subject. */
  inbox(): string;
  /** Sends a message (never waits for the server). */
  publish(
    subject: string,
    data: Uint8Array,
    options?: { headers?: Record<string, string>; reply?: string },
  ): void;
  /** Receives the messages of a subject, in order, by callback. */
  subscribe(
    subject: string,
    onMessage: (message: LinkMessage) => void,
  ): LinkSubscription;
  /** Sends a request and waits for its answer. */
  request(
    subject: string,
    data: Uint8Array,
    options: { timeoutMs: number; headers?: Record<string, string> },
  ): Promise<LinkMessage>;
  /** Waits until the servers have seen everything sent so far. */
  flush(): Promise<void>;
  /** Called at every change of state. */
  onState(listener: (state: LinkState, detail: string) => void): () => void;
  /** Creates a stream when it is missing. */
  ensureStream(spec: StreamSpec): Promise<void>;
  /** Creates a key-value bucket when it is missing. */
  ensureBucket(name: string, replicas: number): Promise<void>;
  /** The last message of a subject in a stream, or `null` (none, or no stream). */
  lastMessage(stream: string, subject: string): Promise<StoredMessage | null>;
  /** The first message at or after a sequence on a subject, or `null`. */
  nextMessage(
    stream: string,
    subject: string,
    seq: number,
  ): Promise<StoredMessage | null>;
  /**
   * Creates an ephemeral push consumer: its name, the stream sequence its
   * deliveries start after, and how many messages it has to deliver now;
   * `null` when the stream does not exist (yet).
   */
  addReader(
    spec: ReaderSpec,
  ): Promise<{ name: string; after: number; pending: number } | null>;
  /** Deletes a consumer (quietly, when it is gone). */
  deleteConsumer(stream: string, name: string): Promise<void>;
  /** A bucket's value, with when it was put, or `null`. */
  kvGet(
    bucket: string,
    key: string,
  ): Promise<{ value: Uint8Array; time: number; revision: number } | null>;
  /** Puts a value into a bucket. */
  kvPut(bucket: string, key: string, value: Uint8Array): Promise<void>;
  /**
   * Takes a work queue's messages on one subject through a durable consumer
   * with explicit acks, until `signal` aborts.
   */
  takeQueued(
    stream: string,
    durable: string,
    filter: string,
    signal: AbortSignal,
  ): AsyncIterable<QueuedMessage>;
  /** Closes the connection. */
  close(): Promise<void>;
}
