import assert from "node:assert/strict";
import {
  Acknowledger,
  type Session,
  type SteerReceipt,
  TurnOverError,
} from "../../../lib/providers/provider.ts";
import type {
  SteerCommand,
  SteerResult,
} from "../../../lib/shared/run_hooks.ts";
import { SteerQueue } from "../../../lib/runner/steer_queue.ts";

function steer(text: string, prompt = "01"): SteerCommand {
  return {
    command: "steer",
    text,
    prompt_id: prompt,
    request_id: `req-${text}`,
    author: "ada",
  };
}

/**
 * A session whose agent acknowledges each steer at once (`ack: "now"`), or
 * when the test says so (`acks`).
 */
function fakeSession(
  acceptsInput: boolean,
  refuse = false,
  ack: "now" | "later" = "now",
): Session & { sent: string[]; interrupts: number; acks: Acknowledger[] } {
  const session = {
    meta: { provider: "fake", session_id: "s1", model: "m" },
    acceptsInputAfterStart: acceptsInput,
    events: (async function* (): AsyncGenerator<never> {})(),
    sent: [] as string[],
    acks: [] as Acknowledger[],
    interrupts: 0,
    interrupt(): void {
      session.interrupts++;
    },
    send(text: string): Promise<SteerReceipt> {
      if (refuse) return Promise.reject(new Error("turn over"));
      session.sent.push(text);
      const acknowledger = new Acknowledger();
      if (ack === "now") acknowledger.acknowledge("echo");
      session.acks.push(acknowledger);
      return Promise.resolve(acknowledger.delivery);
    },
    close: () => Promise.resolve(),
  };
  return session;
}

function recordingQueue(): {
  queue: SteerQueue;
  settled: SteerResult[];
  steered: string[];
} {
  const settled: SteerResult[] = [];
  const steered: string[] = [];
  const queue = new SteerQueue({
    where: () => ({ attempt: 2, provider: "fake" }),
    settled: (result) => {
      settled.push(result);
      return Promise.resolve();
    },
    steered: (command, how) => {
      steered.push(`${command.text}:${how.delivery}:${how.mechanism}`);
      return Promise.resolve();
    },
  });
  return { queue, settled, steered };
}

Deno.test("SteerQueue delivers on the send_input lane at once, one steer per boundary, in arrival order", async () => {
  const { queue, settled, steered } = recordingQueue();
  const session = fakeSession(true);
  queue.push(steer("a"));
  queue.push(steer("b"));
  await queue.deliver(session);
  assert.deepEqual(session.sent, ["a"]);
  await queue.deliver(session);
  assert.deepEqual(session.sent, ["a", "b"]);
  assert.deepEqual(steered, ["a:send_input:echo", "b:send_input:echo"]);
  assert.deepEqual(
    settled.map((r) => [
      r.command.text,
      r.delivered,
      r.delivery,
      r.mechanism,
      r.attempt,
    ]),
    [["a", true, "send_input", "echo", 2], [
      "b",
      true,
      "send_input",
      "echo",
      2,
    ]],
  );
});

Deno.test("SteerQueue reports a sent steer delivered only once the agent acknowledged it, and refused with the session's reason when it never does", async () => {
  const { queue, settled, steered } = recordingQueue();
  const session = fakeSession(true, false, "later");
  queue.push(steer("a"));
  queue.push(steer("b"));
  await queue.deliver(session);
  await queue.deliver(session);
  assert.deepEqual(session.sent, ["a", "b"]);
  assert.equal(settled.length, 0, "written is not delivered");
  session.acks[1]!.acknowledge("turn_steer");
  await queue.deliver(session);
  assert.deepEqual(steered, ["b:send_input:turn_steer"]);
  session.acks[0]!.refuse("the turn ended first");
  await queue.drain();
  assert.deepEqual(
    settled.map((r) => [r.command.text, r.delivered, r.reason ?? null]),
    [["b", true, null], [
      "a",
      false,
      "the agent never acknowledged it: the turn ended first",
    ]],
  );
  assert.deepEqual(steered, ["b:send_input:turn_steer"]);
});

Deno.test("SteerQueue refuses a steer the live session will not take, with the reason, and emits nothing", async () => {
  const { queue, settled, steered } = recordingQueue();
  queue.push(steer("a"));
  await queue.deliver(fakeSession(true, true));
  assert.deepEqual(steered, []);
  assert.equal(settled.length, 1);
  assert.equal(settled[0]!.delivered, false);
  assert.match(settled[0]!.reason ?? "", /refused it: turn over/);
});

Deno.test("SteerQueue on the interrupt lane interrupts once and holds the steer for the resume", async () => {
  const { queue, settled } = recordingQueue();
  const session = fakeSession(false);
  queue.push(steer("a"));
  queue.push(steer("b"));
  await queue.deliver(session);
  await queue.deliver(session); // "a" is still interrupting: "b" waits
  assert.equal(session.interrupts, 1);
  assert.equal(settled.length, 0);
  assert.equal(queue.takeInterrupting()?.text, "a");
  assert.equal(queue.takeInterrupting(), null);
  await queue.deliver(session);
  assert.equal(session.interrupts, 2);
});

Deno.test("SteerQueue puts an undelivered interrupting steer back first, and refuses only the finished prompt's steers", async () => {
  const { queue, settled } = recordingQueue();
  const session = fakeSession(false);
  queue.push(steer("a"));
  queue.push(steer("other", "02"));
  await queue.deliver(session);
  queue.requeueInterrupting();
  await queue.refuseWaiting("01", "prompt 01 finished");
  assert.deepEqual(
    settled.map((r) => [r.command.text, r.delivered, r.reason]),
    [["a", false, "prompt 01 finished"]],
  );
  await queue.deliver(fakeSession(true));
  assert.equal(settled.at(-1)?.command.text, "other");
  assert.equal(queue.takeInterrupting(), null);
});

Deno.test("SteerQueue does nothing without a live session", async () => {
  const { queue, settled } = recordingQueue();
  queue.push(steer("a"));
  await queue.deliver(null);
  assert.equal(settled.length, 0);
  await queue.deliver(fakeSession(true));
  assert.equal(settled[0]?.command.text, "a");
});

Deno.test("SteerQueue keeps a steer that meets a turn just over for the prompt's next session, and refuses it only when the prompt ends", async () => {
  const { queue, settled, steered } = recordingQueue();
  const over = fakeSession(true);
  over.send = () => Promise.reject(new TurnOverError());
  queue.push(steer("a"));
  await queue.deliver(over);
  await queue.deliver(null);
  assert.equal(settled.length, 0, "between turns it waits");
  const next = fakeSession(true);
  await queue.deliver(next);
  assert.deepEqual(next.sent, ["a"]);
  assert.deepEqual(steered, ["a:send_input:echo"]);
  queue.push(steer("b"));
  await queue.deliver(over);
  await queue.refuseWaiting("01", "prompt 01 finished (completed)");
  assert.deepEqual(
    settled.map((r) => [r.command.text, r.delivered, r.reason ?? null]),
    [["a", true, null], ["b", false, "prompt 01 finished (completed)"]],
  );
});

Deno.test("SteerQueue calls onKnown as soon as an in-flight steer's fate is known, so the driver reports it without waiting for an event", async () => {
  const { queue, settled } = recordingQueue();
  const session = fakeSession(true, false, "later");
  let woken = 0;
  queue.onKnown = () => woken++;
  queue.push(steer("a"));
  await queue.deliver(session);
  assert.equal(woken, 0);
  session.acks[0]!.acknowledge("turn_steer");
  await session.acks[0]!.delivery.acknowledged;
  await Promise.resolve();
  assert.equal(woken, 1);
  assert.equal(settled.length, 0, "reported at the driver's next boundary");
  await queue.deliver(session);
  assert.equal(settled[0]?.mechanism, "turn_steer");
});
