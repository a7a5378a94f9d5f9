/**
 * A fleet behind TLS (issue 21): `tls://` URLs work for a runner and for a
 * confined client, with the CA of a private certificate authority named by
 * `PROMPT_RUNNER_FLEET_CA`; without it the client refuses the server's
 * certificate (exit 4).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

/** A private CA, and a certificate it signed for 127.0.0.1. */
async function certificates(dir: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=prompt_runner test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  ]);
  await Deno.writeTextFile(
    join(dir, "san.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
  );
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
  ]);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "san.ext",
    "-out",
    "server.pem",
  ]);
}

Deno.test({
  name:
    "a tls:// fleet: a runner publishes and a confined client follows with the private CA named; without it the client exits 4",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    await withTempDir(async (dir) => {
      await certificates(dir);
      await using servers = await NatsServers.start(1, {
        tls: `tls { cert_file: "${join(dir, "server.pem")}", key_file: "${
          join(dir, "server.key")
        }" }`,
      });
      const url = `tls://127.0.0.1:${servers.nodes[0]!.port}`;
      const ca = { PROMPT_RUNNER_FLEET_CA: join(dir, "ca.pem") };
      await using packet = await makePacket({
        prompts: { "01_long.prompt.md": longPrompt(5, 10) },
      });
      const run = startRun(
        packet.dir,
        ["--fleet", url, "--run-id", "run-tls"],
        {
          env: ca,
        },
      );
      const done = await run.finish();
      assert.equal(done.code, 0, done.stderr);
      assert.ok(!done.stderr.includes("warning:"), done.stderr);
      const replay = await runCli(
        ["control", "events", "fleet:run-tls", "--json", "--fleet", url],
        { env: ca, denoFlags: [`--deny-read=${packet.root}`] },
      );
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(
        replay.stdout,
        await Deno.readTextFile(
          join(packet.stateRoot, "control", "events.jsonl"),
        ),
      );
      const untrusted = await runCli([
        "control",
        "status",
        "fleet:run-tls",
        "--fleet",
        url,
      ]);
      assert.equal(untrusted.code, 4, untrusted.stderr);
      assert.match(
        untrusted.stderr,
        /^error: Cannot reach the fleet at tls:\/\/127\.0\.0\.1:\d+: .*certificate/i,
      );
    });
  },
});
