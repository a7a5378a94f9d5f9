/**
 * The run a control command acts on, in its worker: the state root's
 * current run, or the fleet run its fleet TARGET names (DESIGN §12), with
 * the contract target the contract commands take.
 *
 * @module
 */

import type { RunRef } from "../../lib/control/paths.ts";
import type { AmendTarget } from "../../lib/contract/contract_transport.ts";
import {
  type PacketRunLocation,
  runTargetOf,
} from "../../lib/workspace/run_location.ts";
import type { ControlInput } from "./_declare.ts";

import { type FleetModule, fleetModule } from "../_fleet_flags.ts";

/** A run a command acts on. */
export interface RunAt extends AsyncDisposable {
  /** The run. */
  ref: RunRef;
  /** Whether it is reached through a fleet. */
  fleet: boolean;
  /**
   * For a fleet run: whether the fleet stopped hearing from it while it
   * runs (`null` on files, where the run lock tells).
   */
  unreachable: boolean | null;
}

/** Opens a client of the fleet a command was pointed at. */
async function fleetClient(
  input: ControlInput<unknown>,
): ReturnType<FleetModule["openFleetClient"]> {
  const { fleet } = input.fleet!;
  return await (await fleetModule()).openFleetClient({
    url: fleet.parsed,
    ...(fleet.creds_file === null ? {} : { credsFile: fleet.creds_file }),
    ...(fleet.ca_file === null ? {} : { caFile: fleet.ca_file }),
  });
}

/**
 * The run a command acts on: the state root's current run, or the fleet
 * run its TARGET names.
 *
 * @throws {NotFoundError} when there is none; a fleet's errors (exit 4
 * when it cannot be reached, 2 or 3 for a TARGET that matches several
 * runs or none).
 */
export async function runAt(input: ControlInput<unknown>): Promise<RunAt> {
  if (input.fleet === null) {
    const { currentRun } = await import("../../lib/control/current_run.ts");
    return {
      ref: await currentRun(input.location.state_root),
      fleet: false,
      unreachable: null,
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
  }
  const client = await fleetClient(input);
  try {
    const run = await client.resolve(input.fleet.target);
    return {
      ref: client.ref(run),
      fleet: true,
      unreachable: run.status === "unreachable",
      [Symbol.asyncDispose]: () => client.close(),
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/**
 * The contract target a contract command acts on: the packet and state
 * root, or the fleet run its TARGET names.
 */
export async function contractAt(
  input: ControlInput<unknown>,
): Promise<{ target: AmendTarget } & AsyncDisposable> {
  if (input.fleet === null) {
    return {
      target: runTargetOf(input.location as PacketRunLocation),
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
  }
  const run = await runAt(input);
  return {
    target: {
      transport: run.ref
        .transport as FleetModule["FleetTransport"]["prototype"],
      state_root: run.ref.state_root,
    },
    [Symbol.asyncDispose]: () => run[Symbol.asyncDispose](),
  };
}
