/**
 * Looking up a provider by the name a packet uses.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import type { Provider, SessionRequest } from "./provider.ts";
import { createSimulatedProvider } from "./simulated.ts";
import { createCliProvider } from "./cli_provider.ts";
import { claudeProfile } from "./claude.ts";
import { codexProfile } from "./codex.ts";
import { geminiProfile } from "./gemini.ts";
import { ampProfile } from "./amp.ts";
import { acpProvider, geminiAcpProvider } from "./acp.ts";
import { codexAppServerProvider } from "./codex_app_server.ts";

/**
 * A provider with several transports (`agent.transport`): each session is
 * started or resumed on the transport its request names, else the first.
 */
function byTransport(
  name: string,
  transports: [string, Provider][],
): Provider {
  const lanes = new Map(transports);
  const [fallback] = transports[0]!;
  const pick = (request: SessionRequest): Provider =>
    lanes.get(request.agent.transport ?? fallback) ?? lanes.get(fallback)!;
  return {
    name,
    defaultModel: lanes.get(fallback)!.defaultModel,
    start: (request) => pick(request).start(request),
    resume: (meta, request) => pick(request).resume(meta, request),
  };
}

const PROVIDERS: Record<string, () => Provider> = {
  claude: () => createCliProvider(claudeProfile),
  codex: () =>
    byTransport("codex", [
      ["app_server", codexAppServerProvider],
      ["exec", createCliProvider(codexProfile)],
    ]),
  gemini: () =>
    byTransport("gemini", [
      ["acp", geminiAcpProvider],
      ["stream_json", createCliProvider(geminiProfile)],
    ]),
  amp: () => createCliProvider(ampProfile),
  acp: () => acpProvider,
};

/** Providers this version can drive. */
export const AVAILABLE_PROVIDERS: readonly string[] = [
  "simulated",
  ...Object.keys(PROVIDERS),
];

const PLANNED = ["cursor", "antigravity"];

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
  const make = Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
  if (make) return make();
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
