/**
 * The fleet's command line (issue 21): `fleet`, `fleet ls`, `fleet join`,
 * and the fleet flags of `run` and the control commands refuse bad input
 * with exit 2 and a clear message before anything is reached; a fleet
 * TARGET that matches no run exits 3, several exit 2 naming them.
 */

import assert from "node:assert/strict";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket } from "../_helpers/temp_packet.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import { RUNS_BUCKET } from "../../lib/fleet/fleet_names.ts";

const NO_FLEET = {
  unsetEnv: ["PROMPT_RUNNER_FLEET", "PROMPT_RUNNER_FLEET_CREDS"],
};

Deno.test("fleet alone prints its help and exits 2; fleet --help, fleet ls --help and fleet join --help exit 0", async () => {
  const bare = await runCli(["fleet"], NO_FLEET);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /Commands:\n {2}ls +List the fleet's runs/);
  for (
    const args of [["fleet", "--help"], ["fleet", "ls", "--help"], [
      "fleet",
      "join",
      "--help",
    ]]
  ) {
    const help = await runCli(args, NO_FLEET);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /--fleet/);
  }
  const unknown = await runCli(["fleet", "rm"], NO_FLEET);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^error: Unknown fleet command "rm"/);
});

Deno.test("a fleet command or a fleet TARGET with no fleet named exits 2 saying to give --fleet", async () => {
  for (
    const args of [
      ["fleet", "ls"],
      ["fleet", "join", "."],
      ["control", "status", "fleet:run-a"],
      ["control", "steer", "fleet:run-a", "hello", "there"],
      ["status", "fleet:run-a"],
    ]
  ) {
    const result = await runCli(args, NO_FLEET);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(
      result.stderr,
      /needs a fleet: give --fleet URL/,
      args.join(" "),
    );
  }
});

Deno.test("bad fleet input exits 2 before any fleet is reached, and shows no secret", async () => {
  await using packet = await makePacket({ git: false });
  const cases: [string[], RegExp][] = [
    [
      ["fleet", "ls", "--fleet", "http://ops:hunter2@h:4222"],
      /Invalid fleet URL "http:\/\/ops:\*\*\*@h:4222"/,
    ],
    [
      ["control", "status", "fleet:a/b/c/d", "--fleet", "nats://127.0.0.1:9"],
      /Invalid fleet TARGET "fleet:a\/b\/c\/d"/,
    ],
    [[
      "control",
      "status",
      "fleet:x",
      "--state-root",
      packet.stateRoot,
      "--fleet",
      "nats://127.0.0.1:9",
    ], /--state-root and --workspace do not go with fleet:x/],
    [["run", packet.dir, "--fleet-node", "m1"], /--fleet-node needs a fleet/],
    [[
      "run",
      packet.dir,
      "--fleet",
      "nats://127.0.0.1:9",
      "--fleet-replicas",
      "9",
    ], /Invalid --fleet-replicas "9": expected 1 to 5/],
    [[
      "run",
      packet.dir,
      "--fleet",
      "nats://127.0.0.1:9",
      "--fleet-node",
      "...",
    ], /Invalid --fleet-node "\.\.\."/],
    [
      ["fleet", "join", "fleet:x", "--fleet", "nats://127.0.0.1:9"],
      /takes this machine's runs, not a fleet TARGET/,
    ],
    [
      ["fleet", "ls", "extra", "--fleet", "nats://127.0.0.1:9"],
      /'fleet ls' takes no arguments/,
    ],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args, NO_FLEET);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.ok(!result.stderr.includes("hunter2"));
  }
});

Deno.test("a workspace file whose fleet: is not a fleet URL is an error naming the file and the key", async () => {
  await using packet = await makePacket({ git: false });
  const file = `${packet.root}/workspace.yml`;
  await Deno.writeTextFile(
    file,
    `id: fleet-ws\npacket: ${packet.dir}\nstate_root: ${packet.root}/state\nfleet: 42\n`,
  );
  const result = await runCli(["run", "--workspace", file], NO_FLEET);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /workspace\.yml.*fleet.*expected a fleet URL/);
});

Deno.test({
  name:
    "a fleet TARGET matching no run exits 3; one matching several exits 2 naming them; fleet ls lists them",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const url = servers.url();
    const link = await openLink({
      url: parseFleetUrl(url),
      name: "test",
      timeoutMs: 3_000,
    });
    try {
      await link.ensureBucket(RUNS_BUCKET, 1);
      for (const node of ["m1", "m2"]) {
        await link.kvPut(
          RUNS_BUCKET,
          `${node}.r-0123456789ab.run-same`,
          new TextEncoder().encode(JSON.stringify({
            v: 1,
            run_id: "run-same",
            packet: "p",
            status: "completed",
            run_started_at: "2026-12-04T00:00:00.000Z",
          })),
        );
      }
    } finally {
      await link.close();
    }
    const none = await runCli([
      "control",
      "status",
      "fleet:nope",
      "--fleet",
      url,
    ]);
    assert.equal(none.code, 3, none.stderr);
    assert.match(
      none.stderr,
      /^error: No run in the fleet at nats:\/\/127\.0\.0\.1:\d+ matches fleet:nope/,
    );
    const several = await runCli([
      "control",
      "status",
      "fleet:run-same",
      "--fleet",
      url,
    ]);
    assert.equal(several.code, 2, several.stderr);
    assert.match(
      several.stderr,
      /fleet:run-same matches 2 runs of the fleet: fleet:m1\/r-0123456789ab\/run-same, fleet:m2\/r-0123456789ab\/run-same/,
    );
    const one = await runCli([
      "control",
      "status",
      "fleet:m2/r-0123456789ab/run-same",
      "--json",
      "--fleet",
      url,
    ]);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(JSON.parse(one.stdout).status, "completed");
    const ls = await runCli(["fleet", "ls", "--fleet", url]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(
      ls.stdout,
      /^NODE +ROOT +RUN +PACKET +STATUS +PROMPT +ATTEMPT +UPDATED\n/,
    );
    assert.equal(ls.stdout.trim().split("\n").length, 3);
  },
});
