/**
 * Fleets end to end (issue 21): real runners on two "machines" (two state
 * roots, two node names) publish to a real 3-node JetStream cluster, and a
 * client process whose permissions cannot read either state root lists,
 * follows, steers, re-views and amends them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { runCli, spawnCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { readAll } from "../_helpers/lines.ts";

const ignore = NATS_SERVER === null;

/** A client that may read neither state root (its own machine, as it were). */
function blind(...roots: string[]): { denoFlags: string[] } {
  return { denoFlags: [`--deny-read=${roots.join(",")}`] };
}

Deno.test({
  name:
    "a client that cannot read either machine's state root lists both fleet runs, follows one to run_finished line for line, steers it, re-views it and amends its contract",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(3);
    await using one = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(120, 30) },
    });
    await using two = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(120, 30) },
    });
    const client = blind(one.root, two.root);
    const fleet = servers.url(2);
    await using runA = startRun(one.dir, [
      "--fleet",
      servers.url(0),
      "--fleet-node",
      "m1",
      "--run-id",
      "run-a",
    ]);
    await using runB = startRun(two.dir, [
      "--fleet",
      servers.url(1),
      "--fleet-node",
      "m2",
      "--run-id",
      "run-b",
    ]);
    await runA.until((e) => e.type === "run_started");
    await runB.until((e) => e.type === "run_started");

    const listed = await waitFor("both runs in fleet ls", async () => {
      const ls = await runCli(
        ["fleet", "ls", "--json", "--fleet", fleet],
        client,
      );
      assert.equal(ls.code, 0, ls.stderr);
      const runs = ls.stdout.trim().split("\n").filter(Boolean).map((line) =>
        JSON.parse(line)
      );
      return runs.length === 2 ? runs : null;
    });
    assert.deepEqual(
      listed.map((run) => [run.node, run.run_id, run.status]).sort(),
      [["m1", "run-a", "running"], ["m2", "run-b", "running"]],
    );
    const a = listed.find((run) => run.run_id === "run-a");
    assert.match(a.root, /^r-[0-9a-f]{12}$/);
    assert.equal(a.key, `m1.${a.root}.run-a`);
    assert.equal(a.packet, "test-packet");
    const target = `fleet:m1/${a.root}/run-a`;

    const follower = spawnCli(
      ["control", "events", "fleet:run-a", "--fleet", fleet, "--json"],
      client,
    );
    const followed = readAll(follower.stdout);
    const followErrors = readAll(follower.stderr);

    const steer = await runCli([
      "control",
      "steer",
      target,
      "keep",
      "it",
      "short",
      "--author",
      "alice",
      "--fleet",
      fleet,
    ], client);
    assert.equal(steer.code, 0, steer.stderr);
    assert.match(steer.stdout, /^Queued steer for run run-a \(request /);
    const view = await runCli([
      "control",
      "view",
      "fleet:run-a",
      "--thinking",
      "hide",
      "--author",
      "alice",
      "--fleet",
      fleet,
    ], client);
    assert.equal(view.code, 0, view.stderr);
    const amend = await runCli([
      "control",
      "amend",
      "fleet:run-a",
      "01",
      "--add-command",
      "true",
      "--reason",
      "it must build",
      "--author",
      "alice",
      "--fleet",
      fleet,
    ], client);
    assert.equal(amend.code, 0, amend.stderr);
    assert.match(
      amend.stdout,
      /^Amended prompt 01 \(pre_verify\): added commands/,
    );

    const doneA = await runA.finish();
    assert.equal(doneA.code, 0, doneA.stderr);
    const doneB = await runB.finish();
    assert.equal(doneB.code, 0, doneB.stderr);
    const status = await follower.status;
    assert.equal(status.code, 0, await followErrors);
    const file = await Deno.readTextFile(
      join(one.stateRoot, "control", "events.jsonl"),
    );
    assert.equal(await followed, file, "the fleet's lines are the file's");

    const log = await readJsonl(join(one.stateRoot, "control", "log.jsonl"));
    const applied = (command: string) =>
      log.filter((e) => e.command === command && e.outcome === "applied");
    assert.deepEqual(applied("steer").map((e) => e.author), ["alice"]);
    assert.deepEqual(applied("set_view").map((e) => e.params), [{
      thinking: "hide",
    }]);
    assert.deepEqual(applied("amend").map((e) => e.author), ["alice"]);
    const interventions = await readJsonl(
      join(one.stateRoot, "interventions", "01.jsonl"),
    );
    assert.deepEqual(
      interventions.map((i) => [i.author, i.text]),
      [["alice", "keep it short"]],
    );
    const amendments = await readJsonl(
      join(one.stateRoot, "amendments", "01.jsonl"),
    );
    assert.deepEqual(
      amendments.map((r) => [r.author, r.reason, r.entries]),
      [["alice", "it must build", [{ exec: "true" }]]],
    );
    // Run B was not touched.
    assert.deepEqual(
      await readJsonl(join(two.stateRoot, "control", "log.jsonl")),
      [],
    );

    const contract = await runCli([
      "control",
      "contract",
      "fleet:run-a",
      "01",
      "--json",
      "--fleet",
      fleet,
    ], client);
    assert.equal(contract.code, 0, contract.stderr);
    const shown = JSON.parse(contract.stdout);
    assert.deepEqual(shown.enforced.commands, [{ exec: "true" }]);
    assert.deepEqual(
      shown.amendments.map((r: { author: string }) => r.author),
      [
        "alice",
      ],
    );
  },
});
