/**
 * What a fleet's failures do to a run and its fleet copy (issue 21): the
 * node a runner is connected to is killed mid-run, or every node stops for
 * ten seconds. The run goes on untouched; the fleet's copy ends identical
 * to its events file, each seq once and in order.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import { EVENTS_STREAM } from "../../lib/fleet/fleet_names.ts";

const ignore = NATS_SERVER === null;

/** The seq of the last event the fleet holds for a run (0: none). */
async function fleetLastSeq(url: string, runId: string): Promise<number> {
  const link = await openLink({
    url: parseFleetUrl(url),
    name: "test",
    timeoutMs: 2_000,
  });
  try {
    const runs = await runCli(["fleet", "ls", "--json", "--fleet", url]);
    const key = runs.stdout.split("\n").filter(Boolean).map((l) =>
      JSON.parse(l)
    ).find((r) => r.run_id === runId)?.key;
    if (key === undefined) return 0;
    const last = await link.lastMessage(EVENTS_STREAM, `pr.ev.${key}`);
    return last === null ? 0 : Number(last.msgId?.split(":").at(-1));
  } catch {
    return 0;
  } finally {
    await link.close();
  }
}

/** Replays a run from the fleet and checks it is its file, seq for seq. */
async function assertCopyIsFile(
  url: string,
  runId: string,
  stateRoot: string,
): Promise<void> {
  const file = await Deno.readTextFile(
    join(stateRoot, "control", "events.jsonl"),
  );
  const replay = await runCli([
    "control",
    "events",
    `fleet:${runId}`,
    "--fleet",
    url,
    "--json",
  ]);
  assert.equal(replay.code, 0, replay.stderr);
  const seqs = replay.stdout.split("\n").filter(Boolean).map((line) =>
    JSON.parse(line).seq
  );
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "each seq once, in order");
  assert.equal(replay.stdout, file, "the fleet's copy is the file");
}

Deno.test({
  name:
    "SIGKILL of the node a runner is connected to, mid-run (replicas 3): the run goes on, and its fleet copy ends identical to its file",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(3);
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(200, 10) },
    });
    await using run = startRun(packet.dir, [
      "--fleet",
      servers.url(0),
      "--fleet-node",
      "m1",
      "--fleet-replicas",
      "3",
      "--run-id",
      "run-k",
    ]);
    await run.until((e) => e.type === "tool_call_started");
    const others = `nats://127.0.0.1:${servers.nodes[1]!.port},127.0.0.1:${
      servers.nodes[2]!.port
    }`;
    await waitFor(
      "the fleet to hold some events",
      async () => await fleetLastSeq(others, "run-k") >= 20,
    );
    await servers.kill(0);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    const last = done.events.at(-1);
    assert.equal(last?.type, "run_finished");
    await assertCopyIsFile(others, "run-k", packet.stateRoot);
  },
});

Deno.test({
  name:
    "every node stopped for 10 s mid-run and started again: the run never notices, and the fleet copy catches up, identical",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(3);
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(300, 20) },
    });
    await using run = startRun(packet.dir, [
      "--fleet",
      servers.url(),
      "--fleet-node",
      "m1",
      "--fleet-replicas",
      "3",
      "--run-id",
      "run-s",
    ]);
    await run.until((e) => e.type === "tool_call_started");
    await waitFor(
      "the fleet to hold some events",
      async () => await fleetLastSeq(servers.url(), "run-s") >= 20,
    );
    for (let i = 0; i < 3; i++) await servers.kill(i, "SIGTERM");
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    // The run went on while every node was down.
    const seen = (await Deno.readTextFile(
      join(packet.stateRoot, "control", "events.jsonl"),
    )).split("\n").length;
    assert.ok(seen > 20, `the run wrote on (${seen} lines)`);
    await servers.restart(0, 1, 2);
    assert.ok(Date.now() - stoppedAt >= 10_000);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.events.at(-1)?.type, "run_finished");
    // One warning at most, and the run's own output is untouched.
    const warnings = done.stderr.split("\n").filter((l) =>
      l.startsWith("warning:")
    );
    assert.ok(warnings.length <= 1, done.stderr);
    await assertCopyIsFile(servers.url(), "run-s", packet.stateRoot);
  },
});

Deno.test({
  name:
    "an event over the fleet's max_payload is left out of its copy with one warning, and everything else arrives, in order",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1, {
      extra: "max_payload: 8KB",
    });
    const big = "y".repeat(20_000);
    await using packet = await makePacket({
      prompts: {
        "01_big.prompt.md":
          `---\nsimulate: {attempts: [{messages: [small, "${big}", after]}]}\n---\nSay it.\n`,
      },
    });
    const run = startRun(packet.dir, [
      "--fleet",
      servers.url(),
      "--run-id",
      "run-big",
    ]);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    const warnings = done.stderr.split("\n").filter((l) =>
      l.startsWith("warning:")
    );
    assert.equal(warnings.length, 1, done.stderr);
    assert.match(warnings[0]!, /over the fleet's max_payload of 8192/);
    const file = (await Deno.readTextFile(
      join(packet.stateRoot, "control", "events.jsonl"),
    )).split("\n").filter(Boolean);
    const small = file.filter((line) => line.length + 512 <= 8192);
    assert.ok(small.length < file.length, "some events were too big");
    const replay = await runCli([
      "control",
      "events",
      "fleet:run-big",
      "--fleet",
      servers.url(),
      "--json",
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.deepEqual(replay.stdout.split("\n").filter(Boolean), small);
  },
});
