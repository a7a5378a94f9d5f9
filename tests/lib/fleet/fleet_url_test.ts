import assert from "node:assert/strict";
import {
  maskFleetSecrets,
  parseFleetUrl,
  readCredsFile,
} from "../../../lib/fleet/fleet_url.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

Deno.test("parseFleetUrl() reads servers, default ports, user and password, and shows them masked", () => {
  const url = parseFleetUrl("nats://ops:p%40ss:w0rd@10.0.0.5:4222,10.0.0.6");
  assert.deepEqual(url.servers, [
    "nats://10.0.0.5:4222",
    "nats://10.0.0.6:4222",
  ]);
  assert.deepEqual(url.hosts, ["10.0.0.5:4222", "10.0.0.6:4222"]);
  assert.equal(url.user, "ops");
  assert.equal(url.pass, "p@ss:w0rd");
  assert.equal(url.tls, false);
  assert.equal(url.shown, "nats://ops:***@10.0.0.5:4222,10.0.0.6:4222");
});

Deno.test("parseFleetUrl() takes a token, tls://, IPv6 and repeated schemes", () => {
  const url = parseFleetUrl(
    "tls://s3cr3t-token@[::1]:4443,tls://fleet.example:4444/",
  );
  assert.equal(url.token, "s3cr3t-token");
  assert.equal(url.tls, true);
  assert.deepEqual(url.hosts, ["[::1]:4443", "fleet.example:4444"]);
  assert.equal(url.shown, "tls://***@[::1]:4443,fleet.example:4444");
  assert.ok(!url.shown.includes("s3cr3t"));
});

Deno.test("parseFleetUrl() refuses what is not a fleet URL with a UsageError that shows no secret", () => {
  const bad = [
    "",
    "http://ops:secret@host:4222",
    "nats://ops:secret@host:99999",
    "nats://ops:secret@host name:4222",
    "nats://host:4222,tls://other:4222",
    "nats://host:4222,ops:secret@other:4222",
    "nats://:secret@host",
  ];
  for (const text of bad) {
    assert.throws(() => parseFleetUrl(text), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.equal(error.exitCode, 2);
      assert.ok(!error.message.includes("secret"), error.message);
      return true;
    });
  }
});

Deno.test("maskFleetSecrets() masks passwords, tokens and query secrets in any text quoting a URL", () => {
  assert.equal(
    maskFleetSecrets(
      "dial nats://ops:hunter2@a:1 then tls://tok@b:2 and wss://x/?token=abc&user=u",
    ),
    "dial nats://ops:***@a:1 then tls://***@b:2 and wss://x/?token=***&user=u",
  );
});

Deno.test("readCredsFile() takes a NATS creds file and refuses anything else without quoting it", async () => {
  await withTempDir(async (dir) => {
    const good = `${dir}/user.creds`;
    await Deno.writeTextFile(
      good,
      "-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\nSUAM\n------END USER NKEY SEED------\n",
    );
    assert.match(await readCredsFile(good), /NKEY SEED/);
    const bad = `${dir}/not.creds`;
    await Deno.writeTextFile(bad, "password=hunter2\n");
    await assert.rejects(readCredsFile(bad), (error: Error) => {
      assert.ok(error instanceof UsageError);
      assert.ok(!error.message.includes("hunter2"));
      return true;
    });
    await assert.rejects(readCredsFile(`${dir}/missing.creds`), /Cannot read/);
  });
});
