/**
 * Requests that reach a run through the fleet (issue 21): a request taken
 * from the work queue and written, whose runner is killed before the
 * message is acknowledged, is applied exactly once after the resume; and
 * hostile messages on `pr.req.<key>` are refused by the plane with a logged
 * reason, acknowledged, and the run survives them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { listDir, readJsonl, startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import type { FleetLink } from "../../lib/fleet/_link.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import {
  REQUESTS_STREAM,
  requestSubject,
} from "../../lib/fleet/fleet_names.ts";

const ignore = NATS_SERVER === null;

/** The key of a fleet run, once the fleet lists it. */
async function keyOf(url: string, runId: string): Promise<string> {
  return await waitFor(`run ${runId} in the fleet`, async () => {
    const ls = await runCli(["fleet", "ls", "--json", "--fleet", url]);
    return ls.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l))
      .find((run) => run.run_id === runId)?.key as string | undefined;
  });
}

/** Waits until a run's work queue holds nothing (every message acknowledged). */
async function queueEmpty(link: FleetLink, key: string): Promise<void> {
  await waitFor(
    "the work queue to be empty",
    async () =>
      await link.nextMessage(REQUESTS_STREAM, requestSubject(key), 1) === null,
  );
}

Deno.test({
  name:
    "a fleet request redelivered after its file was written but before its ack (the runner killed there, then resumed) is applied exactly once",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const url = servers.url();
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(60, 40) },
    });
    const fleet = ["--fleet", url, "--fleet-node", "m1"];
    const first = startRun(packet.dir, [...fleet, "--run-id", "run-r"], {
      fault: "fleet_request_written",
    });
    await first.until((e) => e.type === "tool_call_started");
    const key = await keyOf(url, "run-r");
    const sent = await runCli([
      "control",
      "view",
      "fleet:run-r",
      "--tool-output",
      "full",
      ...fleet.slice(0, 2),
    ]);
    assert.equal(sent.code, 0, sent.stderr);
    const requestId = /\(request (\S+)\)/.exec(sent.stdout)![1]!;
    const killed = await first.finish();
    assert.equal(killed.signal, "SIGKILL", killed.stderr);
    // The file is durable; the message was never acknowledged.
    assert.ok(
      (await listDir(join(packet.stateRoot, "control", "requests")))
        .includes(`${requestId}.json`),
    );
    await using link = {
      link: await openLink({
        url: parseFleetUrl(url),
        name: "t",
        timeoutMs: 3000,
      }),
      async [Symbol.asyncDispose](): Promise<void> {
        await this.link.close();
      },
    };
    assert.notEqual(
      await link.link.nextMessage(REQUESTS_STREAM, requestSubject(key), 1),
      null,
      "the message waits for its ack",
    );

    const second = startRun(packet.dir, [...fleet, "--resume"]);
    // The resumed runner's bridge takes the redelivery and acks it.
    await queueEmpty(link.link, key);
    const done = await second.finish();
    assert.equal(done.code, 0, done.stderr);

    const receipts =
      (await listDir(join(packet.stateRoot, "control", "outcomes")))
        .filter((name) => name.startsWith(requestId));
    assert.deepEqual(receipts, [`${requestId}.json`]);
    const entries = (await readJsonl(
      join(packet.stateRoot, "control", "log.jsonl"),
    )).filter((e) => e.request_id === requestId);
    assert.deepEqual(entries.map((e) => e.outcome), ["applied"]);
    assert.deepEqual(
      await listDir(join(packet.stateRoot, "control", "requests")),
      [],
    );
  },
});

Deno.test({
  name:
    "hostile messages on pr.req.<key> (not JSON, too big, another run's id, an unknown command) are refused with a logged reason and acknowledged, and the run survives",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const url = servers.url();
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(60, 30) },
    });
    await using run = startRun(packet.dir, [
      "--fleet",
      url,
      "--fleet-node",
      "m1",
      "--run-id",
      "run-h",
    ]);
    await run.until((e) => e.type === "tool_call_started");
    const key = await keyOf(url, "run-h");
    const link = await openLink({
      url: parseFleetUrl(url),
      name: "hostile",
      timeoutMs: 3_000,
    });
    try {
      const request = (id: string, fields: Record<string, unknown>) =>
        JSON.stringify({
          v: 1,
          id,
          command: "set_view",
          params: { thinking: "hide" },
          run_id: "run-h",
          author: "mallory",
          issued_at: new Date().toISOString(),
          ...fields,
        });
      const hostile = [
        "{not json at all",
        request("hostile-big", { params: { pad: "x".repeat(100_000) } }),
        request("hostile-other", { run_id: "someone-elses-run" }),
        request("hostile-cmd", { command: "launch_missiles" }),
      ];
      for (const body of hostile) {
        const answer = await link.request(
          requestSubject(key),
          new TextEncoder().encode(body),
          { timeoutMs: 5_000 },
        );
        assert.match(new TextDecoder().decode(answer.data), /"seq":\d+/);
      }
      await queueEmpty(link, key);
      const rejected = await waitFor("four logged refusals", async () => {
        const log = (await readJsonl(
          join(packet.stateRoot, "control", "log.jsonl"),
        )).filter((e) => e.outcome === "rejected");
        return log.length >= 4 ? log : null;
      });
      const reasons = rejected.map((e) => String(e.reason)).sort();
      assert.equal(reasons.length, 4, JSON.stringify(rejected));
      assert.ok(reasons.some((r) => /^not JSON/.test(r)), reasons.join("\n"));
      assert.ok(reasons.some((r) => /too large/.test(r)), reasons.join("\n"));
      assert.ok(
        reasons.some((r) => /targets run someone-elses-run/.test(r)),
        reasons.join("\n"),
      );
      assert.ok(
        reasons.some((r) => /unknown command "launch_missiles"/.test(r)),
        reasons.join("\n"),
      );
    } finally {
      await link.close();
    }
    const done = await run.finish();
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.events.at(-1)?.type, "run_finished");
  },
});
