/**
 * `fleet join`'s work: a sidecar bridge for each state root, following its
 * current run (and the next one when another starts), until stopped; with
 * `--once`, until each root's current run is over and published.
 *
 * @module
 */

import { controlPaths, type RunRef } from "../lib/control/paths.ts";
import { readSnapshotFile } from "../lib/control/snapshot.ts";
import { followedRunState } from "../lib/control/followed_run_state.ts";
import type { RunLocation } from "../lib/workspace/run_location.ts";
import { errorText } from "../lib/shared/errors.ts";
import type { CommandContext } from "./_context.ts";
import type { RunFleet } from "./_run_fleet.ts";
import { type FleetModule, fleetModule } from "./_fleet_flags.ts";
type Bridge = Awaited<ReturnType<FleetModule["Bridge"]["start"]>>;

/** How often a sidecar looks for a new run, or the end of its run. */
const LOOK_MS = 500;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Bridges the runs of the given state roots to the fleet. */
export async function joinRoots(
  context: CommandContext,
  locations: RunLocation[],
  fleet: RunFleet,
  options: { once: boolean; signal: AbortSignal },
): Promise<void> {
  const module = await fleetModule();
  const creds = fleet.choice.creds_file === null
    ? undefined
    : await module.readCredsFile(fleet.choice.creds_file);
  const warn = (message: string) =>
    void context.stderr.line(`warning: ${message}`).catch(() => {});
  await Promise.all(locations.map(async (location) => {
    const real = await Deno.realPath(location.state_root).catch(() =>
      location.state_root
    );
    const names = {
      node: module.nodeName(fleet.node ?? undefined),
      root: await module.rootName(real, location.workspace_id),
    };
    const start = (runId: string): Promise<Bridge> =>
      module.Bridge.start({
        url: fleet.choice.parsed,
        ...(creds === undefined ? {} : { creds }),
        ...(fleet.choice.ca_file === null
          ? {}
          : { caFile: fleet.choice.ca_file }),
        stateRoot: location.state_root,
        packetDir: location.packet_dir,
        runId,
        ...names,
        replicas: fleet.replicas,
        warn,
        sidecar: true,
      });
    await joinRoot(context, location, start, options, warn);
  }));
}

async function joinRoot(
  context: CommandContext,
  location: RunLocation,
  start: (runId: string) => Promise<Bridge>,
  options: { once: boolean; signal: AbortSignal },
  warn: (message: string) => void,
): Promise<void> {
  const paths = controlPaths(location.state_root);
  let current = null as { ref: RunRef; bridge: Bridge } | null;
  const end = async (): Promise<void> => {
    if (current === null) return;
    const { ref, bridge } = current;
    current = null;
    const report = await bridge.finish({ graceMs: 2_000 });
    await context.stdout.line(
      report.complete
        ? `published run ${ref.run_id} up to event ${report.published_seq}`
        : `left run ${ref.run_id} at event ${report.published_seq} of ${report.last_seq} (the fleet did not take the rest)`,
    );
  };
  try {
    while (!options.signal.aborted) {
      const snapshot = await readSnapshotFile(paths.snapshot, paths.root)
        .catch((error) => {
          warn(errorText(error));
          return null;
        });
      if (snapshot === null && options.once) {
        await context.stdout.line(
          `no run in state root ${location.state_root}: nothing to join`,
        );
        return;
      }
      if (snapshot !== null && snapshot.run_id !== current?.ref.run_id) {
        await end();
        const bridge = await start(snapshot.run_id);
        current = {
          ref: { state_root: location.state_root, run_id: snapshot.run_id },
          bridge,
        };
        await context.stdout.line(
          `joined run ${snapshot.run_id} as fleet:${bridge.names.node}/${bridge.names.root}/${snapshot.run_id}`,
        );
      }
      if (options.once && current !== null) {
        const now = await followedRunState(current.ref).catch(() => null);
        if (now !== null && now.state !== "running") return;
      }
      await sleep(LOOK_MS, options.signal);
    }
  } finally {
    await end();
  }
}
