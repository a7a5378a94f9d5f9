/**
 * A confined call on a fleet run (`callConfined` with a fleet, issue 21):
 * a dashboard action on a fleet run runs in a worker confined exactly as
 * the control command on that fleet TARGET is (`fleetScope`): it may
 * connect to the fleet's servers and nothing else, read its creds file
 * and no other, and write nothing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { callConfined } from "../../commands/control/_confined.ts";
import { fleetScope, planControl } from "../../commands/control/_scope.ts";
import { status } from "../../commands/control/status.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import type { ProbeRequest } from "../_helpers/confined_probe_worker.ts";
import { ROOT } from "../_helpers/run_cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const PROBE = new URL("../_helpers/confined_probe_worker.ts", import.meta.url);

function listen(): { listener: Deno.Listener; address: string } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  return { listener, address: `127.0.0.1:${port}` };
}

Deno.test("callConfined() on a fleet run reaches the fleet's servers only, reads no file but its creds, and writes nothing", async () => {
  await withTempDir(async (dir) => {
    const fleet = listen();
    const other = listen();
    try {
      const creds = join(dir, "fleet.creds");
      await Deno.writeTextFile(creds, "creds\n");
      const url = `nats://ops:pw@${fleet.address}`;
      const choice = {
        url,
        parsed: parseFleetUrl(url),
        creds_file: creds,
        ca_file: null,
      };
      const readme = join(ROOT, "README.md");
      const canary = join(dir, "canary");
      const answers = await callConfined(
        "a probe",
        PROBE,
        { fleet: choice },
        true,
        {
          connect: [fleet.address, other.address],
          read: [creds, readme],
          write: [canary, join(dir, "fleet.creds")],
        } satisfies ProbeRequest,
      );
      assert.deepEqual(answers, {
        [`connect ${fleet.address}`]: "ok",
        [`connect ${other.address}`]: "NotCapable",
        [`read ${creds}`]: "ok",
        [`read ${readme}`]: "NotCapable",
        [`write ${canary}`]: "NotCapable",
        [`write ${join(dir, "fleet.creds")}`]: "NotCapable",
      });
      assert.equal(await Deno.readTextFile(creds), "creds\n");
      await assert.rejects(Deno.stat(canary), Deno.errors.NotFound);
    } finally {
      fleet.listener.close();
      other.listener.close();
    }
  });
});

Deno.test("a control command on a fleet TARGET and a confined call on that fleet get one scope (fleetScope)", async () => {
  const url = "nats://ops:pw@10.0.0.5:4222,10.0.0.6";
  const planned = await planControl(
    "status",
    status,
    ["fleet:m1/ws/run-1", "--fleet", url, "--fleet-creds", "ops.creds"],
    { cwd: "/srv" },
  );
  assert.notEqual(planned, "help");
  if (planned === "help") return;
  const scope = await fleetScope({
    url,
    parsed: parseFleetUrl(url),
    creds_file: "/srv/ops.creds",
    ca_file: null,
  });
  assert.deepEqual(
    { read: planned.read, write: planned.write, net: planned.net },
    scope,
  );
  assert.deepEqual(scope.net, ["10.0.0.5:4222", "10.0.0.6:4222"]);
  assert.deepEqual(scope.write, []);
  assert.deepEqual(
    scope.read.filter((path) => path !== "/etc/passwd"),
    ["/srv/ops.creds"],
  );
});
