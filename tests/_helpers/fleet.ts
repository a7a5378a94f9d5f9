/**
 * The fleet's side of the client-contract tests: runs played by in-process
 * planes in real state roots, each published by a real bridge to a real
 * `nats-server`, and read and steered through the fleet transport only.
 *
 * @module
 */

import { join } from "node:path";
import type { ControlPlane } from "../../lib/control/plane.ts";
import type { AmendTarget } from "../../lib/contract/contract_transport.ts";
import { acquireRunLock, type RunLock } from "../../lib/shared/run_lock.ts";
import { Bridge } from "../../lib/fleet/bridge.ts";
import {
  type FleetClient,
  openFleetClient,
} from "../../lib/fleet/fleet_client.ts";
import { openLink } from "../../lib/fleet/_load.ts";
import type { FleetLink } from "../../lib/fleet/_link.ts";
import {
  CONTRACTS_BUCKET,
  EVENTS_STREAM,
  eventsSubject,
  REQUESTS_STREAM,
  requestSubject,
} from "../../lib/fleet/fleet_names.ts";
import { parseFleetUrl } from "../../lib/fleet/fleet_url.ts";
import type { ClientHarness } from "./client_contract.ts";
import { NatsServers } from "./nats.ts";
import { makeControlRoot, promptStart } from "./plane.ts";
import { makePacket, promptFile, type TempPacket } from "./temp_packet.ts";

/** Waits for a condition, with a generous deadline. */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How soon a silent run reads as unreachable in these tests. */
const STALE_MS = 3_000;

interface OpenRun {
  plane: ControlPlane;
  lock: RunLock;
  bridge: Bridge;
  key: string;
  /** Its run_finished was recorded: the bridge publishes nothing after it. */
  finished?: boolean;
}

/** A fleet harness for the client-contract tests, on one fresh server. */
export async function fleetHarness(): Promise<ClientHarness> {
  const servers = await NatsServers.start(1);
  const url = parseFleetUrl(servers.url());
  const root = await makeControlRoot();
  const packets: TempPacket[] = [];
  const runs = new Map<string, OpenRun>();
  let client: FleetClient | null = null;
  let link: FleetLink | null = null;
  const cleanup = async () => {
    for (const run of runs.values()) {
      await run.bridge.stop();
      await run.lock.release();
    }
    await client?.close();
    await link?.close();
    for (const packet of packets) await packet[Symbol.asyncDispose]();
    await root[Symbol.asyncDispose]();
    await servers[Symbol.asyncDispose]();
  };
  try {
    client = await openFleetClient({ url, staleMs: STALE_MS });
    link = await openLink({ url, name: "harness", timeoutMs: 3_000 });
  } catch (error) {
    await cleanup();
    throw error;
  }
  const transport = client.transport;
  const node = "m1";
  const home = "r-home";
  const address = `fleet:${node}/${home}`;
  const runOf = (runId: string) => {
    const run = runs.get(runId);
    if (run === undefined) throw new Error(`run ${runId} is not open`);
    return run;
  };
  const bridgeFor = (
    stateRoot: string,
    packetDir: string | null,
    runId: string,
    rootName: string,
  ) =>
    Bridge.start({
      url,
      stateRoot,
      packetDir,
      runId,
      node,
      root: rootName,
      replicas: 1,
      warn: () => {},
    });
  /** Waits until the bridge took every request of the run from the queue. */
  const queueTaken = async (key: string) => {
    await eventually(
      "the bridge took the queued requests",
      async () =>
        await link!.nextMessage(REQUESTS_STREAM, requestSubject(key), 1)
          .catch(() => "error") === null,
    );
  };
  return {
    address,
    transport,
    ref: (runId) => ({ state_root: address, run_id: runId, transport }),
    async open(runId): Promise<void> {
      const plane = await root.open(runId);
      const lock = await acquireRunLock(root.stateRoot, runId);
      await plane.promptStarted(promptStart());
      const bridge = await bridgeFor(root.stateRoot, null, runId, home);
      runs.set(runId, { plane, lock, bridge, key: bridge.names.key });
      await eventually(
        "the fleet has the run",
        async () =>
          (await transport.readSnapshot(`${address}/${runId}`)) !== null,
      );
    },
    async observe(event): Promise<void> {
      // Recorded, as far as the fleet goes, once the fleet has it.
      const run = runOf(event.run_id);
      await run.plane.observe(event);
      if (run.finished) return;
      run.finished = event.type === "run_finished";
      await eventually(
        `the fleet has event ${event.seq}`,
        async () =>
          ((await link!.lastMessage(EVENTS_STREAM, eventsSubject(run.key)))
            ?.msgId ?? "") === `${event.run_id}:${event.seq}`,
      );
    },
    async boundary(runId): Promise<void> {
      const run = runOf(runId);
      await queueTaken(run.key);
      await run.plane.boundary({ idle: true });
    },
    async close(runId, status): Promise<void> {
      const { plane, lock, bridge } = runOf(runId);
      await plane.close(status);
      await lock.release();
      await bridge.finish();
      runs.delete(runId);
    },
    async die(runId): Promise<void> {
      // As after a SIGKILL: the plane stops where it is, and so does its
      // bridge (the runner's own): the fleet stops hearing from the run.
      const { plane, lock, bridge } = runOf(runId);
      await plane.abandon();
      await bridge.stop();
      const record = await Deno.readTextFile(root.paths.lock);
      await lock.release();
      await Deno.writeTextFile(root.paths.lock, record);
      runs.delete(runId);
    },
    async contractTarget(): Promise<AmendTarget> {
      const packet = await makePacket({
        git: false,
        prompts: {
          "01_notes.prompt.md": promptFile("verify: {files_exist: [NOTES.md]}"),
        },
      });
      packets.push(packet);
      const runId = "run-contract";
      await Deno.mkdir(packet.stateRoot, { recursive: true });
      const contractRoot = join(packet.stateRoot);
      const { openPlane } = await import("../../lib/control/plane.ts");
      const { runInfo } = await import("./plane.ts");
      const plane = await openPlane(
        contractRoot,
        runInfo(runId, contractRoot, { packet_dir: packet.dir }),
      );
      const lock = await acquireRunLock(contractRoot, runId);
      await plane.promptStarted(promptStart());
      const bridge = await bridgeFor(
        contractRoot,
        packet.dir,
        runId,
        "r-contract",
      );
      runs.set(runId, { plane, lock, bridge, key: bridge.names.key });
      await eventually(
        "the fleet has the run and its contract",
        async () =>
          await link!.kvGet(CONTRACTS_BUCKET, `${bridge.names.key}.01`) !==
            null &&
          await transport.readSnapshot(`fleet:${node}/r-contract/${runId}`) !==
            null,
      );
      return { transport, state_root: `fleet:${node}/r-contract/${runId}` };
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await cleanup();
    },
  };
}
