/**
 * Looking up a provider by the name a packet uses.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import type { Provider } from "./provider.ts";
import { createSimulatedProvider } from "./simulated.ts";
import type { CliProfile } from "./cli_profile.ts";
import { createCliProvider } from "./cli_provider.ts";
import { claudeProfile } from "./claude.ts";
import { codexProfile } from "./codex.ts";
import { geminiProfile } from "./gemini.ts";
import { ampProfile } from "./amp.ts";

const PROFILES: Record<string, CliProfile | null> = {
  claude: claudeProfile,
  codex: codexProfile,
  gemini: geminiProfile,
  amp: ampProfile,
};

/** Providers this version can drive. */
export const AVAILABLE_PROVIDERS: readonly string[] = [
  "simulated",
  ...Object.keys(PROFILES).filter((name) => PROFILES[name] !== null),
];

const PLANNED = [
  ...Object.keys(PROFILES).filter((name) => PROFILES[name] === null),
  "cursor",
  "antigravity",
];

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
  const profile = PROFILES[name];
  if (profile) return createCliProvider(profile);
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
