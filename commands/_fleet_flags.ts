/**
 * The flags and variables that name a fleet (DESIGN §12): `--fleet URL`
 * (else `PROMPT_RUNNER_FLEET`) and `--fleet-creds FILE` (else
 * `PROMPT_RUNNER_FLEET_CREDS`), and `PROMPT_RUNNER_FLEET_CA`, a CA
 * certificate for `tls://` servers signed by a private CA. Shared by every
 * command that takes a fleet TARGET, `run` and `fleet`.
 *
 * @module
 */

// Files, not the barrels: every control command plans with this.
import { resolve } from "../lib/shared/posix_path.ts";
import { UsageError } from "../lib/shared/errors.ts";
import { type FleetUrl, parseFleetUrl } from "../lib/fleet/fleet_url.ts";
import type { FlagSpec } from "./_args.ts";
import { importCommand } from "./_dispatch.ts";

/** The fleet code (`lib/fleet/mod.ts`). */
export type FleetModule = typeof import("../lib/fleet/mod.ts");

/**
 * Loads the fleet code, by a specifier built at run time: a command that
 * reaches no fleet never loads it (nor the NATS client behind it).
 */
export function fleetModule(): Promise<FleetModule> {
  return importCommand<FleetModule>("../lib/fleet/mod.ts");
}

/** The flags that name a fleet. */
export const FLEET_FLAGS = {
  fleet: { type: "string" },
  "fleet-creds": { type: "string" },
} as const satisfies Record<string, FlagSpec>;

/** A fleet as a command was told to reach it (plain data: it crosses to a worker). */
export interface FleetChoice {
  /** The URL as given (its secrets included: never shown). */
  url: string;
  /** The URL's servers, credentials and masked form. */
  parsed: FleetUrl;
  /** A NATS creds file (absolute), or `null`. */
  creds_file: string | null;
  /** A CA certificate file (absolute), or `null`. */
  ca_file: string | null;
}

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fleet the flags (else the environment) name, or `null` when none.
 *
 * @throws {UsageError} for a malformed URL, or creds without a URL.
 */
export function fleetChoice(
  values: Record<string, unknown>,
  cwd: string,
): FleetChoice | null {
  const url = (values.fleet as string | undefined) ??
    env("PROMPT_RUNNER_FLEET");
  const creds = (values["fleet-creds"] as string | undefined) ??
    env("PROMPT_RUNNER_FLEET_CREDS");
  if (url === undefined) {
    if (values["fleet-creds"] !== undefined) {
      throw new UsageError("--fleet-creds needs a fleet: give --fleet URL", {
        hint: "Or set PROMPT_RUNNER_FLEET",
      });
    }
    return null;
  }
  const ca = env("PROMPT_RUNNER_FLEET_CA");
  return {
    url,
    parsed: parseFleetUrl(url),
    creds_file: creds === undefined ? null : resolve(cwd, creds),
    ca_file: ca === undefined ? null : resolve(cwd, ca),
  };
}

/**
 * The fleet a fleet TARGET is reached through.
 *
 * @throws {UsageError} when none is named.
 */
export function requireFleet(
  values: Record<string, unknown>,
  cwd: string,
  target: string,
): FleetChoice {
  const choice = fleetChoice(values, cwd);
  if (choice === null) {
    throw new UsageError(
      `The fleet TARGET ${
        JSON.stringify(target)
      } needs a fleet: give --fleet URL`,
      { code: "NO_FLEET", hint: "Or set PROMPT_RUNNER_FLEET=nats://host:port" },
    );
  }
  return choice;
}

/** The help lines of the fleet flags. */
export const FLEET_HELP = {
  fleet: "The fleet a fleet:… TARGET is in (nats://[user:pass@]host:port,\n" +
    "… or tls://…; default: $PROMPT_RUNNER_FLEET)",
  "fleet-creds":
    "A NATS creds file for the fleet (default:\n$PROMPT_RUNNER_FLEET_CREDS)",
} as const;

/**
 * Opens a client of the fleet a fleet TARGET is in, for a command that
 * reads the run from the fleet alone (`status`, `watch`).
 *
 * @throws {UsageError} without a fleet, or with a flag that names a state
 * root (`--state-root`, `--workspace`, `--packet`): the TARGET names its run.
 */
export async function openTargetFleet(
  values: Record<string, unknown>,
  cwd: string,
  target: string,
): Promise<import("../lib/fleet/mod.ts").FleetClient> {
  for (const flag of ["state-root", "workspace", "packet"]) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `A fleet TARGET names its run: --${flag} does not go with ${target}`,
      );
    }
  }
  const fleet = requireFleet(values, cwd, target);
  const { openFleetClient } = await fleetModule();
  return await openFleetClient({
    url: fleet.parsed,
    ...(fleet.creds_file === null ? {} : { credsFile: fleet.creds_file }),
    ...(fleet.ca_file === null ? {} : { caFile: fleet.ca_file }),
  });
}
