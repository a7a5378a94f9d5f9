/**
 * A run that joins a fleet (DESIGN §12): which fleet (`--fleet`, else
 * `PROMPT_RUNNER_FLEET`, else the workspace file's `fleet:`), under which
 * names, and its bridge, started in a worker once the run's plane is open
 * and told to finish when the run is over. The fleet code is loaded only
 * for such a run.
 *
 * @module
 */

import type { OpenPlane } from "../lib/runner/run_options.ts";
import { UsageError } from "../lib/shared/errors.ts";
import { parseFleetUrl } from "../lib/fleet/fleet_url.ts";
import {
  type FleetChoice,
  fleetChoice,
  type FleetModule,
  fleetModule,
} from "./_fleet_flags.ts";
import type { FlagSpec } from "./_args.ts";

/** The flags `run` takes for a fleet. */
export const RUN_FLEET_FLAGS = {
  fleet: { type: "string" },
  "fleet-creds": { type: "string" },
  "fleet-node": { type: "string" },
  "fleet-replicas": { type: "string" },
} as const satisfies Record<string, FlagSpec>;

/** The fleet a run joins. */
export interface RunFleet {
  choice: FleetChoice;
  /** The node name given (`null`: the host name). */
  node: string | null;
  replicas: number;
}

/**
 * The fleet a run joins, or `null`.
 *
 * @throws {UsageError} for a malformed URL, node or replica count, or a
 * fleet flag without a fleet.
 */
export function runFleetOf(
  values: Record<string, unknown>,
  cwd: string,
  workspaceFleet: string | undefined,
): RunFleet | null {
  let choice = fleetChoice(values, cwd);
  if (choice === null && workspaceFleet !== undefined) {
    choice = fleetChoice({ ...values, fleet: workspaceFleet }, cwd);
  }
  const node = values["fleet-node"] as string | undefined;
  const replicasText = values["fleet-replicas"] as string | undefined;
  if (choice === null) {
    if (node !== undefined || replicasText !== undefined) {
      throw new UsageError(
        `--${
          node !== undefined ? "fleet-node" : "fleet-replicas"
        } needs a fleet: give --fleet URL`,
        { hint: "Or set PROMPT_RUNNER_FLEET, or fleet: in the workspace file" },
      );
    }
    return null;
  }
  if (node !== undefined && !/[A-Za-z0-9]/.test(node)) {
    throw new UsageError(
      `Invalid --fleet-node ${
        JSON.stringify(node)
      }: name it with letters, digits, '_' or '-'`,
    );
  }
  const replicas = replicasText === undefined ? 1 : Number(replicasText);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) {
    throw new UsageError(
      `Invalid --fleet-replicas ${
        JSON.stringify(replicasText)
      }: expected 1 to 5 (NATS keeps at most 5 replicas)`,
    );
  }
  return { choice, node: node ?? null, replicas };
}

/** A run's bridge: the plane that starts it, and its end. */
export interface RunFleetBridge {
  /** Opens the run's plane, then starts its bridge. */
  plane: OpenPlane;
  /** The run is over: the bridge publishes the rest, then ends. */
  finish(): Promise<void>;
}

/**
 * Wraps a plane opener so the run's bridge starts once the plane is open
 * (the run's id and state root are known then).
 */
export async function bridgeRun(
  open: OpenPlane,
  fleet: RunFleet,
  options: {
    workspaceId: string | null;
    warn: (message: string) => Promise<void>;
    hint: (message: string) => Promise<void>;
  },
): Promise<RunFleetBridge> {
  const module = await fleetModule();
  const url = fleet.choice.parsed;
  const creds = fleet.choice.creds_file === null
    ? undefined
    : await module.readCredsFile(fleet.choice.creds_file);
  let bridge: ReturnType<FleetModule["startRunBridge"]> | null = null;
  let where: { stateRoot: string; runId: string } | null = null;
  const plane: OpenPlane = async (stateRoot, info, planeOptions) => {
    const opened = await open(stateRoot, info, planeOptions);
    const real = await Deno.realPath(stateRoot).catch(() => stateRoot);
    bridge = module.startRunBridge({
      url,
      ...(creds === undefined ? {} : { creds }),
      ...(fleet.choice.ca_file === null
        ? {}
        : { caFile: fleet.choice.ca_file }),
      stateRoot,
      packetDir: info.packet_dir,
      runId: info.run_id,
      node: module.nodeName(fleet.node ?? undefined),
      root: await module.rootName(real, options.workspaceId),
      replicas: fleet.replicas,
      warn: (message) => void options.warn(message),
    });
    where = { stateRoot, runId: info.run_id };
    return opened;
  };
  return {
    plane,
    async finish(): Promise<void> {
      if (bridge === null || where === null) return;
      const report = await bridge.finish();
      if (report === null || report.complete) return;
      await options.hint(
        `the fleet's copy of run ${where.runId} stops at event ${report.published_seq} of ${report.last_seq}; 'prompt_runner fleet join ${where.stateRoot} --once --fleet URL' publishes the rest`,
      );
    },
  };
}

/** Parses a workspace file's fleet URL early, for its error. */
export function checkWorkspaceFleet(url: string | undefined): void {
  if (url !== undefined) parseFleetUrl(url);
}
