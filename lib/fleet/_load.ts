/**
 * Opening a fleet connection: loads the NATS client (`_nats.ts`) on first
 * use only, by a computed specifier (the runtime loads the module graph of
 * every literal `import()` at start-up, which would make every command pay
 * for it), and words a failure as DESIGN §12 does.
 *
 * @module
 */

import { errorText, StateError } from "../shared/errors.ts";
import type { FleetLink, LinkOptions } from "./_link.ts";
import { type FleetUrl, maskFleetSecrets } from "./fleet_url.ts";

export type { LinkOptions };

type NatsModule = typeof import("./_nats.ts");

let loaded: Promise<NatsModule> | null = null;

/**
 * Imports a module of this folder by a specifier built at run time: the
 * runtime does not load it (nor the NATS client behind it) at start-up.
 */
async function importHere<T>(path: string): Promise<T> {
  return await import(new URL(path, import.meta.url).href);
}

/** Loads the NATS client's adapter, once. */
function natsModule(): Promise<NatsModule> {
  loaded ??= importHere<NatsModule>("./_nats.ts");
  return loaded;
}

/** The error a fleet that cannot be reached (or refuses us) is. */
export function unreachableError(url: FleetUrl, cause: unknown): StateError {
  const detail = maskFleetSecrets(errorText(cause)).replace(/\s+/g, " ")
    .trim() || "no answer";
  return new StateError(`Cannot reach the fleet at ${url.shown}: ${detail}`, {
    code: "FLEET_UNREACHABLE",
    hint:
      "Check the URL, that a server listens there with JetStream (-js), and the credentials",
    cause,
  });
}

/**
 * Connects to a fleet.
 *
 * @throws {StateError} `FLEET_UNREACHABLE` (exit 4) when no server answers,
 * or the servers refuse the credentials.
 */
export async function openLink(options: LinkOptions): Promise<FleetLink> {
  const nats = await natsModule();
  try {
    return await nats.openNatsLink(options);
  } catch (error) {
    throw error instanceof StateError
      ? error
      : unreachableError(options.url, error);
  }
}
