/**
 * A fleet for the dashboard's fleet tests (`serve --fleet`): a real
 * `nats-server` with a password, two real `run --fleet` processes from two
 * state roots (long simulated runs), and a real `serve --fleet` process.
 *
 * @module
 */

import { join } from "node:path";
import { type FleetRun, openFleetClient, rootName } from "../../mod.ts";
import { NatsServers } from "./nats.ts";
import { type LiveRun, startRun } from "./live_run.ts";
import { waitFor } from "./run_cli.ts";
import { serve, type ServeProcess } from "./serve_process.ts";
import { longPrompt, makePacket, type TempPacket } from "./temp_packet.ts";

/** The fleet's password: no page, stream or log line may show it. */
export const PASSWORD = "fleet-s3cret-pw";

/** A fleet with a password, two live runs in it, and a dashboard on it. */
export interface ServedFleet extends AsyncDisposable {
  /** The fleet's server. */
  servers: NatsServers;
  /** Its URL, the password in it. */
  url: string;
  packets: TempPacket[];
  runs: LiveRun[];
  /** The fleet's runs, by state root (the packets' order). */
  fleetRuns: FleetRun[];
  dashboard: ServeProcess;
  /** Every body the test read from the dashboard. */
  seen: string[];
  /** GETs a path with the dashboard's cookie; the body is kept in `seen`. */
  get(path: string): Promise<{ status: number; body: string }>;
}

export async function servedFleet(
  serveArgs: string[] = [],
): Promise<ServedFleet> {
  const servers = await NatsServers.start(1, {
    extra: `authorization { user: ops, password: "${PASSWORD}" }`,
  });
  const url = `nats://ops:${PASSWORD}@127.0.0.1:${servers.nodes[0]!.port}`;
  const packets: TempPacket[] = [];
  const runs: LiveRun[] = [];
  let dashboard: ServeProcess | null = null;
  const cleanup = async (): Promise<void> => {
    await dashboard?.[Symbol.asyncDispose]();
    for (const run of runs) await run[Symbol.asyncDispose]();
    for (const packet of packets) await packet[Symbol.asyncDispose]();
    await servers[Symbol.asyncDispose]();
  };
  try {
    for (let i = 0; i < 2; i++) {
      const packet = await makePacket({
        git: false,
        prompts: { "01_work.prompt.md": longPrompt(2_000, 60) },
      });
      packets.push(packet);
      runs.push(
        startRun(packet.dir, ["--fleet", url, "--fleet-node", `node${i}`]),
      );
    }
    const roots = await Promise.all(
      packets.map(async (p) =>
        await rootName(join(await Deno.realPath(p.dir), ".prompt_runner"), null)
      ),
    );
    const fleetRuns = await waitFor("both runs in the fleet", async () => {
      await using client = await openFleetClient({ url });
      const listed = await client.runs();
      const found = roots.map((root) =>
        listed.find((run) => run.root === root && run.status === "running")
      );
      return found.every((run) => run !== undefined)
        ? found as FleetRun[]
        : null;
    });
    dashboard = await serve([
      "--fleet",
      url,
      "--author",
      "tester",
      ...serveArgs,
    ]);
    const served = dashboard;
    const seen: string[] = [];
    return {
      servers,
      url,
      packets,
      runs,
      fleetRuns,
      dashboard,
      seen,
      async get(path: string): Promise<{ status: number; body: string }> {
        const response = await fetch(`${served.origin}${path}`, {
          headers: { cookie: served.cookie },
          redirect: "manual",
        });
        const body = await response.text();
        seen.push(body);
        return { status: response.status, body };
      },
      [Symbol.asyncDispose]: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** A fleet run's page path. */
export function runPath(run: FleetRun): string {
  return `/run/${encodeURIComponent(`fleet:${run.node}.${run.root}`)}/${
    encodeURIComponent(run.run_id)
  }`;
}
