/**
 * A workspace's runs join the fleet its file names (`fleet:`), under the
 * workspace's id as their root; `PROMPT_RUNNER_FLEET` and `--fleet` name
 * another, in that order of precedence.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

Deno.test({
  name:
    "a workspace run joins the fleet its workspace.yml names, as root <workspace id>; PROMPT_RUNNER_FLEET wins over the file, --fleet over both",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    // Two fleets: two servers that are no cluster.
    await using one = await NatsServers.start(1);
    await using two = await NatsServers.start(1);
    const [fileFleet, envFleet] = [one.url(), two.url()];
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(2, 5) },
    });
    const file = join(packet.root, "workspace.yml");
    await Deno.writeTextFile(
      file,
      `id: ops.fleet-ws\npacket: ${packet.dir}\nstate_root: ${
        join(packet.root, "state")
      }\nfleet: ${fileFleet}\n`,
    );
    const env = { XDG_STATE_HOME: join(packet.root, "xdg") };
    const runs = async (url: string): Promise<Record<string, string>[]> =>
      (await runCli(["fleet", "ls", "--json", "--fleet", url])).stdout
        .split("\n").filter(Boolean).map((line) => JSON.parse(line));

    const first = await runCli(
      ["run", "--workspace", file, "--run-id", "ws-1", "--fleet-node", "m1"],
      { env },
    );
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      (await runs(fileFleet)).map((r) => [r.node, r.root, r.run_id, r.status]),
      [["m1", "ops_fleet-ws", "ws-1", "completed"]],
    );

    const second = await runCli(
      ["run", "ops.fleet-ws", "--run-id", "ws-2", "--fleet-node", "m1"],
      { env: { ...env, PROMPT_RUNNER_FLEET: envFleet } },
    );
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual((await runs(envFleet)).map((r) => r.run_id), ["ws-2"]);

    const third = await runCli(
      [
        "run",
        "ops.fleet-ws",
        "--run-id",
        "ws-3",
        "--fleet-node",
        "m1",
        "--fleet",
        fileFleet,
      ],
      { env: { ...env, PROMPT_RUNNER_FLEET: envFleet } },
    );
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual((await runs(fileFleet)).map((r) => r.run_id).sort(), [
      "ws-1",
      "ws-3",
    ]);
    assert.deepEqual((await runs(envFleet)).map((r) => r.run_id), ["ws-2"]);
  },
});
