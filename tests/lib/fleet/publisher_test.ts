import assert from "node:assert/strict";
import type {
  FleetLink,
  LinkMessage,
  LinkState,
} from "../../../lib/fleet/_link.ts";
import {
  OrderedPublisher,
  PublishStopped,
} from "../../../lib/fleet/_publisher.ts";

/** A link that records what is published and lets the test answer it. */
class FakeLink {
  sent: { data: string; headers: Record<string, string>; reply: string }[] = [];
  #handlers = new Map<string, (message: LinkMessage) => void>();
  #listeners = new Set<(state: LinkState, detail: string) => void>();
  #inboxes = 0;

  inbox(): string {
    return `_INBOX.t${this.#inboxes++}`;
  }
  subscribe(
    subject: string,
    onMessage: (message: LinkMessage) => void,
  ): { unsubscribe(): void } {
    const prefix = subject.slice(0, -2);
    this.#handlers.set(prefix, onMessage);
    return { unsubscribe: () => void this.#handlers.delete(prefix) };
  }
  publish(
    _subject: string,
    data: Uint8Array,
    options: { headers?: Record<string, string>; reply?: string },
  ): void {
    this.sent.push({
      data: new TextDecoder().decode(data),
      headers: options.headers ?? {},
      reply: options.reply ?? "",
    });
  }
  onState(listener: (state: LinkState, detail: string) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }
  setState(state: LinkState): void {
    for (const listener of this.#listeners) listener(state, "test");
  }
  /** Answers the `index`th message sent with a JetStream acknowledgement (or an error). */
  answer(index: number, body: Record<string, unknown>): void {
    const reply = this.sent[index]!.reply;
    const at = reply.lastIndexOf(".");
    this.#handlers.get(reply.slice(0, at))?.({
      subject: reply,
      data: new TextEncoder().encode(JSON.stringify(body)),
      reply: "",
      header: () => undefined,
      status: 0,
      description: "",
    });
  }
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("an ordered publisher sends in order with each message's id, never more than its window, and frees a place only when the oldest in flight is acknowledged", async () => {
  const link = new FakeLink();
  const publisher = new OrderedPublisher(
    link as unknown as FleetLink,
    "pr.ev.k",
    { window: 3 },
  );
  publisher.restart(0);
  for (const n of [1, 2, 3]) {
    assert.ok(publisher.trySend(bytes(`e${n}`), `r:${n}`));
  }
  assert.equal(publisher.trySend(bytes("e4"), "r:4"), false);
  assert.deepEqual(link.sent.map((m) => m.headers["Nats-Msg-Id"]), [
    "r:1",
    "r:2",
    "r:3",
  ]);
  // A later message's acknowledgement frees nothing while an earlier waits.
  link.answer(1, { stream: "PR_EVENTS", seq: 11 });
  assert.equal(publisher.trySend(bytes("e4"), "r:4"), false);
  link.answer(0, { stream: "PR_EVENTS", seq: 10 });
  assert.equal(publisher.inFlight, 1);
  assert.ok(publisher.trySend(bytes("e4"), "r:4"));
  // A duplicate (already stored) is an acknowledgement like any other.
  link.answer(2, { stream: "PR_EVENTS", seq: 12, duplicate: true });
  link.answer(3, { stream: "PR_EVENTS", seq: 13 });
  await publisher.drain();
  publisher.close();
});

Deno.test("after a restart the first message is guarded by the subject's last sequence, the next ones are not", () => {
  const link = new FakeLink();
  const publisher = new OrderedPublisher(link as unknown as FleetLink, "s");
  publisher.restart(41);
  publisher.trySend(bytes("a"), "r:1");
  publisher.trySend(bytes("b"), "r:2");
  assert.equal(
    link.sent[0]!.headers["Nats-Expected-Last-Subject-Sequence"],
    "41",
  );
  assert.equal(
    link.sent[1]!.headers["Nats-Expected-Last-Subject-Sequence"],
    undefined,
  );
  publisher.close();
});

Deno.test("the first failure (a refusal, a lost connection) stops the publisher: nothing more is sent until it restarts", async () => {
  const link = new FakeLink();
  const publisher = new OrderedPublisher(
    link as unknown as FleetLink,
    "s",
    { window: 2 },
  );
  publisher.restart(0);
  publisher.trySend(bytes("a"), "r:1");
  publisher.trySend(bytes("b"), "r:2");
  const waiting = publisher.room();
  link.answer(0, {
    error: {
      code: 400,
      err_code: 10071,
      description: "wrong last sequence: 7",
    },
  });
  await assert.rejects(waiting, PublishStopped);
  assert.throws(() => publisher.trySend(bytes("c"), "r:3"), PublishStopped);
  assert.equal(link.sent.length, 2);
  await assert.rejects(publisher.drain(), /wrong last sequence: 7/);
  // A restart takes messages again; a lost connection stops it at once.
  publisher.restart(7);
  assert.ok(publisher.trySend(bytes("b"), "r:2"));
  link.setState("disconnected");
  assert.throws(() => publisher.trySend(bytes("c"), "r:3"), PublishStopped);
  await assert.rejects(publisher.drain(), /connection to the fleet was lost/);
  publisher.close();
});
