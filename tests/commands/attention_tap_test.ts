/**
 * `watch`'s tap on the event stream (`commands/_attention_tap.ts`), against
 * a real run whose stall was raised and cleared again, so that its final
 * snapshot shows no attention while its events keep the `attention_needed`.
 */

import assert from "node:assert/strict";
import { AttentionTap } from "../../commands/_attention_tap.ts";
import { currentRun } from "../../lib/control/current_run.ts";
import { readJsonl, readSnapshot } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** Runs a packet whose only prompt stalls once, then completes. */
async function stalledAndCleared(): Promise<
  AsyncDisposable & { stateRoot: string; attentionSeq: number; lastSeq: number }
> {
  const packet = await makePacket({
    prompts: {
      // Quiet for 1.2 s before each event; the stall is raised at the idle
      // tick 0.5 s in (limit 0.2 s) and cleared by the event.
      "01_a.prompt.md": promptFile(`progress_timeout_ms: 200
simulate:
  attempts:
    - delay_ms: 1200
      messages: ["after a pause"]`),
    },
  });
  try {
    const result = await runCli(["run", packet.dir]);
    assert.equal(result.code, 0, result.stderr);
    const events = await readJsonl(`${packet.stateRoot}/control/events.jsonl`);
    const attention = events.find((e) => e.type === "attention_needed");
    assert.ok(attention, "the run stalled");
    const snapshot = await readSnapshot(packet.stateRoot);
    assert.equal(snapshot?.attention, null, "the stall was cleared");
    return {
      stateRoot: packet.stateRoot,
      attentionSeq: attention.seq as number,
      lastSeq: snapshot!.last_seq as number,
      [Symbol.asyncDispose]: () => packet[Symbol.asyncDispose](),
    };
  } catch (error) {
    await packet[Symbol.asyncDispose]();
    throw error;
  }
}

Deno.test("the tap hears an attention raised and cleared by a run that began after the watch", async () => {
  await using run = await stalledAndCleared();
  const ref = await currentRun(run.stateRoot);
  await using tap = new AttentionTap();
  tap.track(null, null); // The first sample: no run yet.
  tap.track(ref, run.lastSeq); // The run's end: the snapshot shows nothing.
  await tap.settle(30_000);
  assert.equal(tap.heard?.reason, "stalled");
  assert.equal(tap.heard?.prompt_id, "01");
  assert.equal(tap.heard?.attempt, 1);
  assert.match(tap.heard!.detail, /progress timeout 0\.2 s/);
});

Deno.test("the tap follows a run already there at the first sample from after that sample's snapshot", async () => {
  await using run = await stalledAndCleared();
  const ref = await currentRun(run.stateRoot);
  // Seen after the stall: it is history, not this watch's business.
  await using late = new AttentionTap();
  late.track(ref, run.lastSeq);
  await late.settle(30_000);
  assert.equal(late.heard, null);
  // Seen before the stall: it happened while watched.
  await using early = new AttentionTap();
  early.track(ref, run.attentionSeq - 1);
  await early.settle(30_000);
  assert.equal(early.heard?.reason, "stalled");
});
