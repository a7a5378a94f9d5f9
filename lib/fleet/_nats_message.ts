/**
 * A delivered NATS message as the fleet code sees it (a `LinkMessage`),
 * made by `_nats.ts` for every message it hands on. Written against the
 * few members of the client's message it reads, so this file names none of
 * the client's types.
 *
 * @module
 */

import type { LinkMessage } from "./_link.ts";

/** What this reads of the client's message. */
export interface ClientMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly reply?: string;
  readonly headers?: {
    get(name: string): string;
    readonly code: number;
    readonly description: string;
  };
}

/**
 * The message as the fleet code sees it. Its headers are decoded only when
 * asked for (decoding them for every delivered event was a third of a
 * replay's time), and its body is taken once (each `msg.data` is a new
 * Buffer view): one object of a class per message, no closures.
 */
export class NatsMessage implements LinkMessage {
  readonly #msg: ClientMessage;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly reply: string;

  constructor(msg: ClientMessage) {
    this.#msg = msg;
    this.subject = msg.subject;
    this.data = msg.data;
    this.reply = msg.reply ?? "";
  }

  header(name: string): string | undefined {
    return this.#msg.headers?.get(name) || undefined;
  }

  // A status message (heartbeat, flow control, 404, 503) has no body.
  get status(): number {
    return this.data.length === 0 ? this.#msg.headers?.code ?? 0 : 0;
  }

  get description(): string {
    return this.data.length === 0 ? this.#msg.headers?.description ?? "" : "";
  }
}
