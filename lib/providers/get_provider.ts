/**
 * Looking up a provider by the name a packet uses.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import type { Provider } from "./provider.ts";
import { createSimulatedProvider } from "./simulated.ts";

/** Providers this version can drive. */
export const AVAILABLE_PROVIDERS: readonly string[] = ["simulated"];

const PLANNED = ["claude", "codex", "gemini", "amp", "cursor", "antigravity"];

/**
 * Returns the provider a packet names.
 *
 * @param name The provider's name (`simulated`, …).
 * @returns The provider.
 * @throws {UsageError} when the name is unknown or its adapter is not in
 * this version.
 *
 * @example Usage
 * ```ts
 * import { getProvider } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(getProvider("simulated").name, "simulated");
 * assert.throws(() => getProvider("nonsense"));
 * ```
 */
export function getProvider(name: string): Provider {
  if (name === "simulated") return createSimulatedProvider();
  if (PLANNED.includes(name)) {
    throw new UsageError(
      `Provider "${name}" is not available in this version: available providers are ${
        AVAILABLE_PROVIDERS.join(", ")
      }`,
      {
        code: "PROVIDER_UNAVAILABLE",
        hint:
          "Set provider: simulated in the packet, or pass --provider simulated",
      },
    );
  }
  throw new UsageError(
    `Unknown provider "${name}": expected one of ${
      [...AVAILABLE_PROVIDERS, ...PLANNED].join(", ")
    }`,
    { code: "UNKNOWN_PROVIDER" },
  );
}
