/**
 * A runner killed after its `run_finished` reached the stream but before its
 * last snapshot: the snapshot still says "running", so `--resume` is
 * allowed to start. The resumed runner must see the end in the stream and
 * stop, adding nothing after `run_finished` (the soak found a second one
 * appended).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket } from "../_helpers/temp_packet.ts";

Deno.test("run --resume of a run whose stream already ends with run_finished exits 4, adds no event, and publishes the end", async () => {
  await using packet = await makePacket({
    git: false,
    prompts: {
      "01_hi.prompt.md": "---\nverify: {}\n---\nSay hi.\n",
    },
  });
  const first = await runCli(["run", packet.dir]);
  assert.equal(first.code, 0, first.stderr);
  const events = join(packet.stateRoot, "control", "events.jsonl");
  const snapshotPath = join(packet.stateRoot, "control", "snapshot.json");
  const stream = await Deno.readTextFile(events);
  assert.match(stream.trimEnd().split("\n").at(-1)!, /"type":"run_finished"/);
  // As if killed between the stream's last line and the final snapshot.
  const snap = JSON.parse(await Deno.readTextFile(snapshotPath));
  await Deno.writeTextFile(
    snapshotPath,
    JSON.stringify({ ...snap, status: "running" }, null, 2) + "\n",
  );

  const resumed = await runCli(["run", packet.dir, "--resume"]);

  assert.equal(resumed.code, 4, resumed.stderr);
  assert.match(
    resumed.stderr,
    new RegExp(`Cannot resume run ${snap.run_id}: it finished \\(completed\\)`),
  );
  assert.equal(await Deno.readTextFile(events), stream);
  const after = JSON.parse(await Deno.readTextFile(snapshotPath));
  assert.equal(after.status, "completed");
  assert.equal(after.run_id, snap.run_id);
  // And the lock was released: a new run starts.
  const again = await runCli(["run", packet.dir]);
  assert.equal(again.code, 0, again.stderr);
});
