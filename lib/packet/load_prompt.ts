/**
 * Loading one prompt file: its front matter checked against the manifest's
 * defaults and repos, its id, name, targets and contract.
 *
 * @module
 */

import { basename, isAbsolute, resolve } from "node:path";
import { parseContract } from "./contract.ts";
import type { PromptSpec, RepoConfig } from "./packet.ts";
import { parseRecovery, type RecoveryConfig } from "./recovery.ts";
import {
  invalid,
  optionalString,
  provider,
  readFile,
  refuseRenamedKeys,
  stringList,
  timeout,
} from "./_fields.ts";
import {
  AGENT_KEYS,
  type AgentBlock,
  agentBlock,
  agentOptions,
} from "./agent_options.ts";
import { refuseUnknownKeys } from "./known_keys.ts";
import { normalizePromptId } from "../shared/prompt_id.ts";
import { checkSimulateKeys } from "./simulate_keys.ts";
import { RECOVERY_KEYS } from "./recovery.ts";
import { parseBudget } from "./budget.ts";

const PROMPT_KEYS = [
  "id",
  "name",
  "phase",
  "targets",
  "depends_on",
  "verify",
  "simulate",
  "provider",
  "model",
  "recovery",
  "agent",
  "timeout_ms",
  "progress_timeout_ms",
  "budget",
];

/**
 * Keys of a block a key at the top of a manifest or prompt may have been
 * meant for (`max_steer` for `recovery.max_steers`).
 */
export const NESTED_KEYS: readonly string[] = [
  ...RECOVERY_KEYS.map((key) => `recovery.${key}`),
  ...AGENT_KEYS.map((key) => `agent.${key}`),
];

/** What a prompt inherits from its manifest. */
export interface ManifestDefaults {
  provider: string;
  model: string | null;
  recovery: RecoveryConfig;
  agent: AgentBlock | null;
  timeout_ms: number | null;
  progress_timeout_ms: number | null;
}

function nameFromBody(body: string, file: string): string {
  const heading = /^#\s+(.+?)\s*#*\s*$/m.exec(body);
  if (heading) return heading[1]!;
  const stem = basename(file).replace(/\.prompt\.md$/, "").replace(
    /^\d+_?/,
    "",
  );
  const words = stem.split(/[_\-\s]+/).filter(Boolean);
  const text = words.join(" ");
  return text ? text[0]!.toUpperCase() + text.slice(1) : basename(file);
}

/**
 * Loads one prompt file. Its `depends_on` is left raw, for the packet to
 * check against every prompt id.
 */
export async function loadPrompt(
  file: string,
  defaults: ManifestDefaults,
  repos: RepoConfig[],
  packetDir: string,
): Promise<PromptSpec & { raw_depends_on: unknown }> {
  const text = await readFile(packetDir, file, "prompt file");
  const { parseFrontMatter } = await import("./front_matter.ts");
  const { attributes, body } = parseFrontMatter(text, file);
  refuseRenamedKeys(attributes, file);
  refuseUnknownKeys(attributes, PROMPT_KEYS, file, { elsewhere: NESTED_KEYS });
  checkSimulateKeys(attributes.simulate, file);
  const prefix = /^(\d+)(?:_|\.|$)/.exec(basename(file))?.[1];
  const fromName = prefix === undefined ? null : normalizePromptId(prefix);
  let id: string | null = null;
  if (attributes.id !== undefined) {
    id = normalizePromptId(attributes.id);
    if (id === null) {
      invalid(
        file,
        `id must be a whole number such as "01", found ${
          JSON.stringify(attributes.id)
        }`,
      );
    }
    if (fromName !== null && fromName !== id) {
      invalid(
        file,
        `id "${id}" does not match the file name, which starts with "${prefix}"`,
      );
    }
  } else {
    id = fromName;
  }
  if (id === null) {
    invalid(
      file,
      "cannot tell the prompt id: name the file NN_slug.prompt.md or set id",
    );
  }
  const repoNames = repos.map((repo) => repo.name);
  const targets = stringList(attributes.targets, "targets", file) ?? [];
  for (const target of targets) {
    if (!repoNames.includes(target)) {
      invalid(
        file,
        `unknown target "${target}" (the packet declares ${
          repoNames.length ? repoNames.join(", ") : "no repos"
        })`,
      );
    }
  }
  const name = optionalString(attributes, "name", file) ??
    nameFromBody(body, file);
  const phase = attributes.phase ?? 1;
  if (typeof phase !== "number" || !Number.isInteger(phase)) {
    invalid(file, "phase must be a whole number");
  }
  const defaultRepo = repos.find((repo) => repo.default);
  const firstTarget = repos.find((repo) => repo.name === targets[0]);
  const promptTimeout = timeout(attributes.timeout_ms, file);
  const progressTimeout = timeout(
    attributes.progress_timeout_ms,
    file,
    "progress_timeout_ms",
  );
  const promptProvider =
    provider(optionalString(attributes, "provider", file)) ??
      defaults.provider;
  return {
    id,
    name,
    phase,
    file,
    targets,
    depends_on: [],
    raw_depends_on: attributes.depends_on,
    verify: parseContract(attributes.verify, file, repoNames),
    simulate: attributes.simulate ?? null,
    provider: promptProvider,
    model: optionalString(attributes, "model", file) ?? defaults.model,
    recovery: parseRecovery(attributes.recovery, defaults.recovery, file),
    agent: agentOptions(
      [defaults.agent, agentBlock(attributes.agent, file, invalid)],
      promptProvider,
      (path) => isAbsolute(path) ? path : resolve(packetDir, path),
      invalid,
    ),
    timeout_ms: promptTimeout === undefined
      ? defaults.timeout_ms
      : promptTimeout,
    progress_timeout_ms: progressTimeout === undefined
      ? defaults.progress_timeout_ms
      : progressTimeout,
    budget: parseBudget(attributes.budget, file),
    cwd: firstTarget?.path ?? defaultRepo?.path ?? packetDir,
    body,
  };
}
