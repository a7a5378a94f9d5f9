/**
 * Publishing one subject's messages to a JetStream stream in order, each
 * once, many at a time.
 *
 * Up to a window of messages is in flight. A place in the window frees only
 * when the oldest message in flight is acknowledged, so nothing is sent
 * past a message whose fate is unknown; the first failure (an error, a
 * missing acknowledgement, a lost connection) stops the publisher, and the
 * caller starts again from what the stream really holds (`restart`), the
 * first message after that guarded by the stream's last sequence on the
 * subject, so a late straggler cannot put it out of order. A message stored
 * twice (a retry after a lost acknowledgement) is kept once by its
 * `Nats-Msg-Id` within the stream's duplicate window.
 *
 * @module
 */

import type { FleetLink, LinkSubscription } from "./_link.ts";

/** Why the publisher stopped. */
export class PublishStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PublishStopped";
  }
}

interface InFlight {
  token: number;
  sentAt: number;
  acked: boolean;
}

const decoder = new TextDecoder();
/** How a JetStream acknowledgement of a stored message starts. */
const STORED = new TextEncoder().encode('{"stream":');

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[i] !== prefix[i]) return false;
  }
  return true;
}
const CHECK_MS = 250;

/** Options for an {@linkcode OrderedPublisher}. */
export interface PublisherOptions {
  /** Messages in flight at most. */
  window?: number;
  /** How long an acknowledgement may take before the publisher stops. */
  ackTimeoutMs?: number;
}

/** One subject's ordered publisher (see the module's description). */
export class OrderedPublisher {
  readonly #link: FleetLink;
  readonly #subject: string;
  readonly #window: number;
  readonly #timeoutMs: number;
  #inbox = "";
  #sub: LinkSubscription | null = null;
  #next = 0;
  /** The messages in flight, oldest first, from `#head` on. */
  #flight: InFlight[] = [];
  #head = 0;
  #byToken = new Map<number, InFlight>();
  #failure: PublishStopped | null = null;
  #waiters: Array<() => void> = [];
  #timer: ReturnType<typeof setInterval> | null = null;
  #guard: number | null = null;
  #unlisten: () => void;

  constructor(
    link: FleetLink,
    subject: string,
    options: PublisherOptions = {},
  ) {
    this.#link = link;
    this.#subject = subject;
    this.#window = options.window ?? 256;
    this.#timeoutMs = options.ackTimeoutMs ?? 5_000;
    this.#unlisten = link.onState((state, detail) => {
      if (state !== "connected") {
        this.#fail(`the connection to the fleet was lost (${detail})`);
      }
    });
    this.#failure = new PublishStopped("not started");
  }

  /** Why it stopped, or `null` while it runs. */
  get failure(): PublishStopped | null {
    return this.#failure;
  }

  /** Messages sent and not yet acknowledged. */
  get inFlight(): number {
    return this.#flight.length - this.#head;
  }

  /**
   * Starts (again) with nothing in flight; the next message sent is
   * stored only if the subject's last message in the stream is still
   * `lastSeq` (0: the subject has none).
   */
  restart(lastSeq: number): void {
    this.#sub?.unsubscribe();
    this.#flight = [];
    this.#head = 0;
    this.#byToken.clear();
    this.#inbox = this.#link.inbox();
    this.#sub = this.#link.subscribe(
      `${this.#inbox}.*`,
      (message) => this.#acked(message),
    );
    this.#guard = lastSeq;
    this.#failure = null;
    this.#timer ??= setInterval(() => this.#check(), CHECK_MS);
  }

  #fail(why: string): void {
    if (this.#failure !== null) return;
    this.#failure = new PublishStopped(why);
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #acked(
    message: {
      subject: string;
      data: Uint8Array;
      status: number;
      description: string;
    },
  ): void {
    const token = Number(message.subject.slice(this.#inbox.length + 1));
    const entry = this.#byToken.get(token);
    if (entry === undefined || this.#failure !== null) return;
    if (message.status !== 0) {
      this.#fail(
        `the fleet answered ${message.status}${
          message.description ? ` ${message.description}` : ""
        }`,
      );
      return;
    }
    // An acknowledgement names the stream first; anything else is read.
    if (!startsWith(message.data, STORED)) {
      let answer: { error?: { description?: string; code?: number } };
      try {
        answer = JSON.parse(decoder.decode(message.data));
      } catch {
        this.#fail("the fleet's acknowledgement is not JSON");
        return;
      }
      if (answer.error === undefined) {
        this.#fail("the fleet's acknowledgement names no stream");
        return;
      }
      this.#fail(
        `the fleet refused a message: ${
          answer.error.description ?? `error ${answer.error.code}`
        }`,
      );
      return;
    }
    entry.acked = true;
    this.#byToken.delete(token);
    let freed = false;
    while (
      this.#head < this.#flight.length && this.#flight[this.#head]!.acked
    ) {
      this.#head++;
      freed = true;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#flight.length) {
      this.#flight = this.#flight.slice(this.#head);
      this.#head = 0;
    }
    // A sender waits for half the window: its next sends leave together.
    if (freed && this.inFlight <= this.#window / 2) this.#wake();
  }

  #check(): void {
    const head = this.#flight[this.#head];
    if (head !== undefined && Date.now() - head.sentAt > this.#timeoutMs) {
      this.#fail(
        `no acknowledgement from the fleet within ${this.#timeoutMs / 1000} s`,
      );
    }
  }

  #wait(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * Sends a message now when the window has a place for it (without
   * yielding, so a batch of sends leaves in one write), and tells whether
   * it did.
   *
   * @throws {PublishStopped} when the publisher stopped (then `restart`).
   */
  trySend(data: Uint8Array, msgId: string): boolean {
    if (this.#failure !== null) throw this.#failure;
    if (this.inFlight >= this.#window) return false;
    const token = this.#next++;
    const headers: Record<string, string> = { "Nats-Msg-Id": msgId };
    if (this.#guard !== null) {
      headers["Nats-Expected-Last-Subject-Sequence"] = String(this.#guard);
      this.#guard = null;
    }
    const entry = { token, sentAt: Date.now(), acked: false };
    this.#flight.push(entry);
    this.#byToken.set(token, entry);
    try {
      this.#link.publish(this.#subject, data, {
        headers,
        reply: `${this.#inbox}.${token}`,
      });
    } catch (error) {
      this.#fail(error instanceof Error ? error.message : String(error));
      throw this.#failure!;
    }
    return true;
  }

  /**
   * Waits until the window is half empty (so that the sends that follow
   * leave in one write, not one write each).
   *
   * @throws {PublishStopped} when the publisher stopped first.
   */
  async room(): Promise<void> {
    while (this.#failure === null && this.inFlight > this.#window / 2) {
      await this.#wait();
    }
    if (this.#failure !== null) throw this.#failure;
  }

  /**
   * Sends a message, first waiting for a place in the window.
   *
   * @throws {PublishStopped} when the publisher stopped (then `restart`).
   */
  async send(data: Uint8Array, msgId: string): Promise<void> {
    while (!this.trySend(data, msgId)) await this.room();
  }

  /**
   * Waits until every message sent is acknowledged.
   *
   * @throws {PublishStopped} when the publisher stopped first.
   */
  async drain(): Promise<void> {
    while (this.#failure === null && this.inFlight > 0) {
      await this.#wait();
    }
    if (this.#failure !== null) throw this.#failure;
  }

  /** Stops for good. */
  close(): void {
    this.#unlisten();
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#sub?.unsubscribe();
    this.#sub = null;
    this.#fail("closed");
  }
}
