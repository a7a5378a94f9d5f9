/**
 * A fleet whose users are NATS JWTs (operator mode): a runner and a
 * confined client authenticate with a creds file (`--fleet-creds`,
 * `PROMPT_RUNNER_FLEET_CREDS`), whose secret never shows; without it the
 * server refuses them (exit 4 for the client).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
} from "npm:@nats-io/jwt@0.0.11";
import {
  createAccount,
  createOperator,
  createUser,
} from "npm:@nats-io/nkeys@2.0.3";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** An operator, its system account and a fleet account with JetStream, and a user's creds. */
async function operatorMode(
  dir: string,
): Promise<{ config: string; creds: string; seed: string }> {
  const operator = createOperator();
  const system = createAccount();
  const account = createAccount();
  const user = createUser();
  const unlimited = {
    conn: -1,
    subs: -1,
    data: -1,
    payload: -1,
    leaf: -1,
    imports: -1,
    exports: -1,
    wildcards: true,
    mem_storage: -1,
    disk_storage: -1,
    streams: -1,
    consumer: -1,
  };
  const config = [
    `operator: ${await encodeOperator("fleet-op", operator, {
      system_account: system.getPublicKey(),
    })}`,
    `system_account: ${system.getPublicKey()}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${system.getPublicKey()}: ${await encodeAccount("SYS", system, {}, {
      signer: operator,
    })}`,
    `  ${account.getPublicKey()}: ${await encodeAccount(
      "fleet",
      account,
      { limits: unlimited } as never,
      {
        signer: operator,
      },
    )}`,
    "}",
  ].join("\n");
  const creds = join(dir, "runner.creds");
  const jwt = await encodeUser("runner", user, account);
  await Deno.writeFile(creds, fmtCreds(jwt, user));
  await Deno.chmod(creds, 0o600);
  return { config, creds, seed: new TextDecoder().decode(user.getSeed()) };
}

Deno.test({
  name:
    "with a NATS creds file a runner publishes and a confined client follows; without one the server refuses the client (exit 4); the seed never shows",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      const { config, creds, seed } = await operatorMode(dir);
      await using servers = await NatsServers.start(1, { extra: config });
      const url = servers.url();
      await using packet = await makePacket({
        prompts: { "01_long.prompt.md": longPrompt(5, 10) },
      });
      const run = startRun(packet.dir, ["--fleet", url, "--run-id", "run-c"], {
        env: { PROMPT_RUNNER_FLEET_CREDS: creds },
      });
      const done = await run.finish();
      assert.equal(done.code, 0, done.stderr);
      assert.ok(!done.stderr.includes("warning:"), done.stderr);
      const replay = await runCli([
        "control",
        "events",
        "fleet:run-c",
        "--json",
        "--fleet",
        url,
        "--fleet-creds",
        creds,
      ], { denoFlags: [`--deny-read=${packet.root}`] });
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(
        replay.stdout,
        await Deno.readTextFile(
          join(packet.stateRoot, "control", "events.jsonl"),
        ),
      );
      const refused = await runCli(["fleet", "ls", "--fleet", url]);
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(
        refused.stderr,
        /^error: Cannot reach the fleet at nats:\/\/127\.0\.0\.1:\d+: Authorization Violation/,
      );
      for (const text of [done.stderr, replay.stderr, refused.stderr]) {
        assert.ok(!text.includes(seed));
      }
    });
  },
});
