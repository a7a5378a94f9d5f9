/**
 * `prompt_runner watch fleet:…`: a run published to a real nats-server is
 * watched from the fleet alone (the watcher may not read its state root):
 * one that completed ends the watch with 0, one whose budget stopped it
 * with 6 (attention), its reason in the last sample.
 */

import assert from "node:assert/strict";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

const QUICK = promptFile(`simulate:
  attempts:
    - messages: ["done"]
      usage: {input_tokens: 10, output_tokens: 1, cost_usd: 0.001}`);

const SPENDER = promptFile(`simulate:
  attempts:
    - repeat: 5
      messages: ["spending"]
      usage: {input_tokens: 10, output_tokens: 1, cost_usd: 0.02}`);

Deno.test({
  name:
    "watch with a fleet TARGET samples the run from the fleet: 0 for a completed run, 6 for one a budget stopped",
  ignore: NATS_SERVER === null,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const fleet = servers.url();
    await using quick = await makePacket({
      prompts: { "01_quick.prompt.md": QUICK },
    });
    await using spender = await makePacket({
      manifest: "budget: {max_cost_usd: 0.03}",
      prompts: { "01_spend.prompt.md": SPENDER },
    });
    for (
      const [packet, id] of [[quick, "fw-ok"], [spender, "fw-spent"]] as const
    ) {
      await using run = startRun(packet.dir, [
        "--fleet",
        fleet,
        "--run-id",
        id,
      ]);
      await run.finish();
    }
    await waitFor("both runs in the fleet, finished", async () => {
      const ls = await runCli(["fleet", "ls", "--json", "--fleet", fleet]);
      const runs = ls.stdout.trim().split("\n").filter(Boolean).map((l) =>
        JSON.parse(l)
      );
      return runs.length === 2 &&
          runs.every((r) => r.status === "completed" || r.status === "failed")
        ? runs
        : null;
    });
    const blind = {
      denoFlags: [`--deny-read=${quick.root},${spender.root}`],
    };
    const ok = await runCli(
      ["watch", "fleet:fw-ok", "--fleet", fleet, "--json"],
      blind,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout.trim()).status, "completed");
    const spent = await runCli(
      ["watch", "fleet:fw-spent", "--fleet", fleet, "--json"],
      blind,
    );
    assert.equal(spent.code, 6, spent.stderr);
    const last = JSON.parse(spent.stdout.trim().split("\n").at(-1)!);
    assert.equal(last.violation.reason, "attention");
    assert.equal(last.attention.reason, "budget_exhausted");
    const mixed = await runCli([
      "watch",
      "fleet:fw-ok",
      "--fleet",
      fleet,
      "--state-root",
      quick.stateRoot,
    ]);
    assert.equal(mixed.code, 2);
  },
});
