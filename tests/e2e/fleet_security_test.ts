/**
 * A fleet's security (issue 21): the README's server configuration, as it
 * stands, lets an observer watch and refuses it any steer or change to the
 * streams, lets an operator steer; credentials are never shown (errors,
 * warnings, `run.lock`); an unreachable fleet or a wrong password is exit 4
 * for a client and one warning for a runner, which runs to its end.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { freePort, NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { ROOT, runCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";

const ignore = NATS_SERVER === null;

const PASSWORDS = {
  RUNNER_PASSWORD: "Runn3r-S3cret",
  OPERATOR_PASSWORD: "0perat0r-S3cret",
  OBSERVER_PASSWORD: "0bserv3r-S3cret",
};

/** The README's fleet.conf, without the lines the test servers set themselves. */
async function readmeConfig(): Promise<string> {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const block = /```\n(# fleet\.conf:[\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "the README's Fleets section has the fleet.conf block");
  return block.split("\n").filter((line) => !/^(listen|jetstream)\b/.test(line))
    .join("\n");
}

function url(servers: NatsServers, user: string, password: string): string {
  return `nats://${user}:${password}@127.0.0.1:${servers.nodes[0]!.port}`;
}

/** No secret anywhere in a command's output. */
function assertNoSecret(...texts: string[]): void {
  for (const text of texts) {
    for (const secret of [...Object.values(PASSWORDS), "Wr0ng-Pa55"]) {
      assert.ok(!text.includes(secret), `a secret leaked: ${text}`);
    }
  }
}

Deno.test({
  name:
    "with the README's fleet.conf, an observer watches but its steer, stream deletes and work-queue consumers are refused by the server; an operator steers; no password is ever shown",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1, {
      extra: await readmeConfig(),
      env: PASSWORDS,
    });
    const runner = url(servers, "runner", PASSWORDS.RUNNER_PASSWORD);
    const observer = url(servers, "observer", PASSWORDS.OBSERVER_PASSWORD);
    const operator = url(servers, "operator", PASSWORDS.OPERATOR_PASSWORD);
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(80, 30) },
    });
    await using run = startRun(packet.dir, [
      "--fleet",
      runner,
      "--fleet-node",
      "m1",
      "--run-id",
      "run-sec",
    ]);
    await run.until((e) => e.type === "tool_call_started");
    const lock = await Deno.readTextFile(join(packet.stateRoot, "run.lock"));
    assert.equal(
      JSON.parse(lock).fleet,
      `nats://runner:***@127.0.0.1:${servers.nodes[0]!.port}`,
    );
    assertNoSecret(lock);

    const listed = await waitFor("the observer lists the run", async () => {
      const ls = await runCli(["fleet", "ls", "--fleet", observer, "--json"]);
      assert.equal(ls.code, 0, ls.stderr);
      return ls.stdout.includes('"run_id":"run-sec"') ? ls : null;
    });
    assertNoSecret(listed.stdout, listed.stderr);
    const status = await runCli([
      "control",
      "status",
      "fleet:run-sec",
      "--json",
      "--fleet",
      observer,
    ]);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(JSON.parse(status.stdout).run_id, "run-sec");
    const contract = await runCli([
      "control",
      "contract",
      "fleet:run-sec",
      "01",
      "--fleet",
      observer,
    ]);
    assert.equal(contract.code, 0, contract.stderr);

    const refused = await runCli([
      "control",
      "steer",
      "fleet:run-sec",
      "stop",
      "everything",
      "--fleet",
      observer,
    ]);
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(
      refused.stderr,
      /^error: The fleet at nats:\/\/observer:\*\*\*@127\.0\.0\.1:\d+ did not take the request: Permissions Violation for Publish to "pr\.req\.m1\.r-[0-9a-f]{12}\.run-sec"/,
    );
    assertNoSecret(refused.stdout, refused.stderr);

    const link = await openLink({
      url: parseFleetUrl(observer),
      name: "observer",
      timeoutMs: 3_000,
      patienceMs: 1_000,
    });
    try {
      // No stream deleted, and no consumer of the work queue made or
      // deleted (one would take the runs' requests, or lose them).
      for (
        const subject of [
          "$JS.API.STREAM.DELETE.PR_EVENTS",
          "$JS.API.STREAM.PURGE.PR_LOG",
          "$JS.API.CONSUMER.CREATE.PR_REQUESTS",
          "$JS.API.CONSUMER.DELETE.PR_REQUESTS.any",
        ]
      ) {
        await assert.rejects(
          link.request(subject, new Uint8Array(), { timeoutMs: 2_000 }),
          /Permissions Violation/,
          subject,
        );
      }
    } finally {
      await link.close();
    }

    const steered = await runCli([
      "control",
      "steer",
      "fleet:run-sec",
      "mind",
      "the",
      "tests",
      "--author",
      "olga",
      "--fleet",
      operator,
    ]);
    assert.equal(steered.code, 0, steered.stderr);
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    assertNoSecret(done.stderr);
    const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
    assert.deepEqual(
      log.filter((e) => e.outcome === "applied").map((e) => [
        e.command,
        e.author,
      ]),
      [["steer", "olga"]],
    );
    // The streams are whole: the run's events are all there.
    const events = await runCli([
      "control",
      "events",
      "fleet:run-sec",
      "--json",
      "--fleet",
      observer,
    ]);
    assert.equal(events.code, 0, events.stderr);
    assert.equal(
      events.stdout,
      await Deno.readTextFile(
        join(packet.stateRoot, "control", "events.jsonl"),
      ),
    );
  },
});

Deno.test({
  name:
    "a wrong password or an unreachable fleet: a client exits 4 with 'Cannot reach the fleet at …' (the secret masked); a runner warns once and runs to the end",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1, {
      extra: await readmeConfig(),
      env: PASSWORDS,
    });
    const closed = `nats://ops:Wr0ng-Pa55@127.0.0.1:${freePort()}`;
    const wrong = url(servers, "observer", "Wr0ng-Pa55");
    for (
      const [fleet, why] of [[closed, /refused/], [
        wrong,
        /Authorization/i,
      ]] as const
    ) {
      const client = await runCli([
        "control",
        "status",
        "fleet:some-run",
        "--fleet",
        fleet,
      ]);
      assert.equal(client.code, 4, client.stderr);
      const shown = fleet.replace("Wr0ng-Pa55", "***");
      assert.ok(
        client.stderr.startsWith(`error: Cannot reach the fleet at ${shown}: `),
        client.stderr,
      );
      assert.match(client.stderr, why);
      assertNoSecret(client.stdout, client.stderr);

      await using packet = await makePacket({
        prompts: { "01_long.prompt.md": longPrompt(10, 20) },
      });
      const run = startRun(packet.dir, ["--fleet", fleet]);
      const done = await run.finish();
      assert.equal(done.code, 0, done.stderr);
      assert.equal(done.events.at(-1)?.type, "run_finished");
      const warnings = done.stderr.split("\n").filter((line) =>
        line.startsWith("warning:")
      );
      assert.equal(warnings.length, 1, done.stderr);
      assert.ok(
        warnings[0]!.startsWith(
          `warning: Cannot reach the fleet at ${shown}: `,
        ),
        done.stderr,
      );
      assertNoSecret(done.stderr);
    }
  },
});
