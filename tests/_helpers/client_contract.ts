/**
 * The client contract: what the client API (`currentRun`, `snapshot`,
 * `events`, `eventLineBatches`, `eventTextBatches`, `log`, `followLog`,
 * `setView`, `steer`, `requestOutcome`, `amend`, `relax`, `contract`)
 * promises whatever transport a run is reached through. {@linkcode clientContractTests} registers the same
 * tests for each transport, driven through a {@linkcode ClientHarness}
 * that plays the runner.
 *
 * @module
 */

import assert from "node:assert/strict";
import { currentRun, snapshot } from "../../lib/control/current_run.ts";
import {
  eventByteBatches,
  eventLineBatches,
  events,
  eventTextBatches,
} from "../../lib/control/events.ts";
import type { RunRef } from "../../lib/control/paths.ts";
import { followLog, log } from "../../lib/control/read_log.ts";
import { requestOutcome } from "../../lib/control/request_outcome.ts";
import { setView } from "../../lib/control/set_view.ts";
import { steer } from "../../lib/control/steer.ts";
import type { Transport } from "../../lib/control/transport.ts";
import {
  NotFoundError,
  RunLostError,
  StateError,
  UsageError,
} from "../../lib/shared/errors.ts";
import type { RunEvent, RunStatus } from "../../lib/shared/events.ts";
import type { LogEntry } from "../../lib/control/log_entry.ts";
import { amend, relax } from "../../lib/contract/amend_contract.ts";
import type { AmendTarget } from "../../lib/contract/contract_transport.ts";
import { contract } from "../../lib/contract/contract_view.ts";
import { runEvent, stillPendingAfter } from "./plane.ts";

/** The runner's side of one transport, for the client-contract tests. */
export interface ClientHarness extends AsyncDisposable {
  /** Where the runs live (a state root, or its stand-in). */
  readonly address: string;
  /** The transport, or `undefined` for the default (file) one. */
  readonly transport: Transport | undefined;
  /** A reference to a run at the address, naming the transport. */
  ref(runId: string): RunRef;
  /** A run opens and becomes the current one; its runner lives. */
  open(runId: string): Promise<void>;
  /** The runner records an event. */
  observe(event: RunEvent): Promise<void>;
  /** The runner reaches an event boundary: it decides pending requests. */
  boundary(runId: string): Promise<void>;
  /** The run ends with `status` (after its `run_finished`, if any). */
  close(runId: string, status: RunStatus): Promise<void>;
  /** The runner dies without finishing the run. */
  die(runId: string): Promise<void>;
  /**
   * A packet at the address whose only prompt, `01`, has the contract
   * `{files_exist: [NOTES.md]}`, as the target the contract calls take.
   */
  contractTarget(): Promise<AmendTarget>;
}

const tick = (runId: string, seq: number): RunEvent =>
  runEvent(runId, seq, "tool_call_started", { seq });

const finished = (runId: string, seq: number): RunEvent =>
  runEvent(runId, seq, "run_finished", { status: "completed" }, null);

async function seqsOf(iterable: AsyncIterable<RunEvent>): Promise<number[]> {
  const seqs: number[] = [];
  for await (const event of iterable) seqs.push(event.seq);
  return seqs;
}

/** Records events 1..n of a run. */
async function record(
  h: ClientHarness,
  runId: string,
  n: number,
): Promise<void> {
  for (let seq = 1; seq <= n; seq++) await h.observe(tick(runId, seq));
}

/** Waits for a condition, with a generous deadline. */
async function until(
  what: string,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Registers the client-contract tests for one transport, named `name`;
 * `make` gives a fresh harness (disposed at the end of each test).
 */
export function clientContractTests(
  name: string,
  make: () => Promise<ClientHarness>,
): void {
  const test = (title: string, fn: (h: ClientHarness) => Promise<void>) =>
    Deno.test(`client contract (${name}): ${title}`, async () => {
      await using h = await make();
      await fn(h);
    });

  test("currentRun() and snapshot() read the newest run, running then ended; a replaced run's ref is stale", async (h) => {
    await assert.rejects(
      currentRun(h.address, h.transport ? { transport: h.transport } : {}),
      NotFoundError,
    );
    await h.open("run-a");
    const ref = await currentRun(
      h.address,
      h.transport ? { transport: h.transport } : {},
    );
    assert.equal(ref.run_id, "run-a");
    assert.equal(ref.transport, h.transport);
    const live = await snapshot(ref);
    assert.equal(live.run_id, "run-a");
    assert.equal(live.status, "running");
    await record(h, "run-a", 2);
    await h.observe(finished("run-a", 3));
    await h.close("run-a", "completed");
    assert.equal((await snapshot(ref)).status, "completed");
    await h.open("run-b");
    await assert.rejects(snapshot(ref), (error) => {
      assert.ok(error instanceof StateError, String(error));
      assert.equal(error.code, "STALE_RUN");
      return true;
    });
    // The replaced run's events still replay, to its run_finished.
    assert.deepEqual(await seqsOf(events(ref)), [1, 2, 3]);
  });

  test("events() from the start replays, follows in seq order exactly once, and ends after run_finished", async (h) => {
    await h.open("run-a");
    await record(h, "run-a", 3);
    const seen: number[] = [];
    let writer: Promise<void> | null = null;
    for await (const event of events(h.ref("run-a"))) {
      seen.push(event.seq);
      if (event.seq === 3) {
        writer = (async () => {
          for (let seq = 4; seq <= 6; seq++) {
            await h.observe(tick("run-a", seq));
          }
          await h.observe(finished("run-a", 7));
          // Nothing after run_finished is delivered.
          await h.observe(tick("run-a", 8));
        })();
      }
    }
    await writer;
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7]);
    await h.close("run-a", "completed");
  });

  test('events() from "current" delivers only what comes after; of an ended run, nothing', async (h) => {
    await h.open("run-a");
    await record(h, "run-a", 4);
    const iterator = events(h.ref("run-a"), { from: "current" });
    const first = iterator.next();
    assert.ok(await stillPendingAfter(first, 300), "an old event came");
    await h.observe(tick("run-a", 5));
    assert.equal((await first).value?.seq, 5);
    await h.observe(finished("run-a", 6));
    assert.equal((await iterator.next()).value?.seq, 6);
    assert.equal((await iterator.next()).done, true);
    await h.close("run-a", "completed");
    assert.deepEqual(
      await seqsOf(events(h.ref("run-a"), { from: "current" })),
      [],
    );
  });

  test("events() from a seq starts at that seq", async (h) => {
    await h.open("run-a");
    await record(h, "run-a", 9);
    await h.observe(finished("run-a", 10));
    assert.deepEqual(
      await seqsOf(events(h.ref("run-a"), { from: 7 })),
      [7, 8, 9, 10],
    );
    await h.close("run-a", "completed");
  });

  test("eventLineBatches() carry each event with its stored line, and eventTextBatches() and eventByteBatches() the same bytes", async (h) => {
    await h.open("run-a");
    await record(h, "run-a", 3);
    await h.observe(finished("run-a", 4));
    const lines: string[] = [];
    for await (const batch of eventLineBatches(h.ref("run-a"))) {
      assert.ok(batch.length > 0, "an empty batch");
      for (const { line, event } of batch) {
        assert.deepEqual(JSON.parse(line), event);
        lines.push(line);
      }
    }
    assert.deepEqual(lines.map((line) => JSON.parse(line).seq), [1, 2, 3, 4]);
    let text = "";
    for await (const batch of eventTextBatches(h.ref("run-a"))) text += batch;
    assert.equal(text, lines.map((line) => line + "\n").join(""));
    const decoder = new TextDecoder();
    let bytes = "";
    for await (const block of eventByteBatches(h.ref("run-a"))) {
      assert.ok(block.length > 0, "an empty block");
      bytes += decoder.decode(block, { stream: true });
    }
    assert.equal(bytes + decoder.decode(), text);
    await h.close("run-a", "completed");
  });

  test("events() of a run whose runner died drains what was recorded, then fails with RunLostError", async (h) => {
    await h.open("run-a");
    await record(h, "run-a", 2);
    const seen: number[] = [];
    const following = (async () => {
      for await (const event of events(h.ref("run-a"))) seen.push(event.seq);
    })();
    await until(
      "both events delivered",
      () => Promise.resolve(seen.length === 2),
    );
    await h.die("run-a");
    await assert.rejects(following, (error) => {
      assert.ok(error instanceof RunLostError, String(error));
      assert.equal(error.exitCode, 5);
      assert.match(error.message, /gone/);
      return true;
    });
    assert.deepEqual(seen, [1, 2]);
  });

  test("events() of an address with no run fails with NotFoundError; an aborted follow ends quietly", async (h) => {
    await assert.rejects(seqsOf(events(h.ref("run-a"))), NotFoundError);
    await h.open("run-a");
    await record(h, "run-a", 1);
    const controller = new AbortController();
    const seen: number[] = [];
    for await (
      const event of events(h.ref("run-a"), { signal: controller.signal })
    ) {
      seen.push(event.seq);
      controller.abort();
    }
    assert.deepEqual(seen, [1]);
    await h.close("run-a", "interrupted");
  });

  test("a request is durable once sent: pending, then applied at a boundary, in the log with its author; followLog() ends with the run", async (h) => {
    await h.open("run-a");
    const ref = h.ref("run-a");
    const sent = await setView(ref, { thinking: "hide" }, { author: "ada" });
    assert.equal(sent.run_id, "run-a");
    const before = await requestOutcome(ref, sent.request_id);
    assert.equal(before.outcome, "pending");
    assert.equal(before.final, false);
    assert.deepEqual(await log(ref), []);
    const followed: LogEntry[] = [];
    const following = (async () => {
      for await (const entry of followLog(ref)) followed.push(entry);
    })();
    await h.boundary("run-a");
    await until(
      "the request decided",
      async () => (await requestOutcome(ref, sent.request_id)).final,
    );
    const after = await requestOutcome(ref, sent.request_id);
    assert.equal(after.outcome, "applied");
    assert.equal(after.command, "set_view");
    const [entry, ...more] = await log(ref);
    assert.deepEqual(more, []);
    assert.equal(entry?.request_id, sent.request_id);
    assert.equal(entry?.command, "set_view");
    assert.equal(entry?.outcome, "applied");
    assert.equal(entry?.author, "ada");
    assert.deepEqual(entry?.params, { thinking: "hide" });
    await until(
      "followLog() saw it",
      () => Promise.resolve(followed.length === 1),
    );
    await h.observe(finished("run-a", 1));
    await h.close("run-a", "completed");
    await following;
    assert.equal(followed[0]?.request_id, sent.request_id);
  });

  test("a steer is sent with its text and prompt; an unknown request id is not found", async (h) => {
    await h.open("run-a");
    const ref = h.ref("run-a");
    const sent = await steer(ref, "  use the v2 API \n", { promptId: "1" });
    await h.boundary("run-a");
    await until(
      "the steer decided",
      async () =>
        (await requestOutcome(ref, sent.request_id)).outcome !== "pending",
    );
    const entries = await log(ref);
    const entry = entries.find((e) => e.request_id === sent.request_id);
    assert.equal(entry?.command, "steer");
    assert.deepEqual(entry?.params, { text: "use the v2 API" });
    assert.equal(entry?.prompt_id, "01");
    await assert.rejects(
      requestOutcome(ref, "20260101T000000Z-nope"),
      NotFoundError,
    );
    await h.close("run-a", "completed");
  });

  test("bad input is refused: a bad view or an empty steer before anything is sent, an ended run's requests with a StateError", async (h) => {
    await h.open("run-a");
    const ref = h.ref("run-a");
    await assert.rejects(setView(ref, { thinking: "maybe" }), UsageError);
    await assert.rejects(setView(ref, {}), UsageError);
    await assert.rejects(steer(ref, "   "), UsageError);
    await assert.rejects(steer(ref, "hi", { promptId: "x1" }), UsageError);
    await h.boundary("run-a");
    assert.deepEqual(await log(ref), []);
    await h.close("run-a", "completed");
    const refused = (error: unknown) => {
      assert.ok(error instanceof StateError, String(error));
      assert.equal(error.exitCode, 4);
      assert.match(error.message, /completed, not running/);
      return true;
    };
    await assert.rejects(setView(ref, { thinking: "hide" }), refused);
    await assert.rejects(steer(ref, "too late"), refused);
    await assert.rejects(snapshot(h.ref("run-x")), StateError);
  });

  test("amend() and relax() record changes with their author and reason; contract() enforces them on the packet's contract, in order, with the diff", async (h) => {
    const target = await h.contractTarget();
    const before = await contract(target, "1");
    assert.equal(before.prompt_id, "01");
    assert.deepEqual(before.packet, { files_exist: ["NOTES.md"] });
    assert.deepEqual(before.enforced, before.packet);
    assert.deepEqual(before.amendments, []);
    const added = await amend(target, "01", {
      clause: "files_exist",
      entries: ["lib/foo.ts"],
      reason: "  the notes name it ",
      author: "ada",
    });
    assert.equal(added.prompt, "01");
    assert.equal(added.author, "ada");
    assert.equal(added.reason, "the notes name it");
    assert.equal(added.direction, "add");
    assert.equal(added.operation, "add");
    assert.deepEqual(added.entries, ["lib/foo.ts"]);
    const dropped = await relax(target, "01", {
      clause: "files_exist",
      entries: ["lib/foo.ts"],
      reason: "NOTES.md is not needed",
      confirm: true,
      author: "bob",
    });
    assert.equal(dropped.direction, "relax");
    assert.equal(dropped.operation, "replace");
    const view = await contract(target, "01");
    assert.deepEqual(view.packet, { files_exist: ["NOTES.md"] });
    assert.deepEqual(view.enforced, { files_exist: ["lib/foo.ts"] });
    assert.deepEqual(view.amendments.map((record) => record.author), [
      "ada",
      "bob",
    ]);
    assert.deepEqual(view.diff, [
      { change: "removed", clause: "files_exist", entry: "NOTES.md" },
      { change: "added", clause: "files_exist", entry: "lib/foo.ts" },
    ]);
    await relax(target, "01", {
      clause: "files_exist",
      reason: "no files at all",
      confirm: true,
    });
    assert.deepEqual((await contract(target, "01")).enforced, {});
  });

  test("a bad contract change is refused and records nothing", async (h) => {
    const target = await h.contractTarget();
    const change = {
      clause: "files_exist",
      entries: ["x.md"],
      reason: "why",
    };
    const usage = (code: string) => (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.equal(error.code, code);
      return true;
    };
    await assert.rejects(
      amend(target, "01", { ...change, reason: " " }),
      usage("REASON_REQUIRED"),
    );
    await assert.rejects(
      amend(target, "01", { ...change, clause: "files_present" }),
      usage("UNKNOWN_CLAUSE"),
    );
    await assert.rejects(
      amend(target, "01", { ...change, entries: [] }),
      usage("NO_ENTRIES"),
    );
    await assert.rejects(
      amend(target, "01", { ...change, entries: [42] }),
      usage("INVALID_ENTRY"),
    );
    await assert.rejects(
      amend(target, "one", change),
      usage("INVALID_PROMPT_ID"),
    );
    await assert.rejects(
      relax(target, "01", { ...change, confirm: false }),
      usage("CONFIRMATION_REQUIRED"),
    );
    await assert.rejects(amend(target, "07", change), (error) => {
      assert.ok(error instanceof NotFoundError, String(error));
      assert.match(error.message, /Unknown prompt id "07"/);
      return true;
    });
    await assert.rejects(contract(target, "07"), NotFoundError);
    assert.deepEqual((await contract(target, "01")).amendments, []);
  });
}
