/**
 * Loading a packet: the manifest, its prompts, their contracts and the
 * recovery settings, checked and normalised.
 *
 * @module
 */

import { basename, isAbsolute, join, resolve } from "node:path";
import { elidePath, NotFoundError, UsageError } from "../shared/errors.ts";
import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import { DEFAULT_VIEW } from "../shared/view.ts";
import { type Contract, parseContract } from "./contract.ts";
import { parseFrontMatter } from "./front_matter.ts";
import {
  DEFAULT_RECOVERY,
  parseRecovery,
  type RecoveryConfig,
} from "./recovery.ts";

/** The manifest's fixed file name. */
export const MANIFEST_FILE = "prompt_runner_packet.md";

/** A repository a packet works in. */
export interface RepoConfig {
  /** The repo's name, used by `targets` and contract entries. */
  name: string;
  /** The repo's absolute path. */
  path: string;
  /** Whether prompts without `targets` work here. */
  default: boolean;
}

/** One prompt of a packet, with its settings resolved. */
export interface PromptSpec {
  /** The id, two digits or more (`"01"`). */
  id: string;
  /** A human name. */
  name: string;
  /** The phase number (display and selection only). */
  phase: number;
  /** The prompt file's absolute path. */
  file: string;
  /** The repos the prompt works in; the first is its working directory. */
  targets: string[];
  /** Ids of prompts that must complete first. */
  depends_on: string[];
  /** The contract from the packet (amendments are applied by the runner). */
  verify: Contract;
  /** The simulated provider's script, if any. */
  simulate: unknown;
  /** The provider that runs this prompt. */
  provider: string;
  /** The model, or `null` for the provider's default. */
  model: string | null;
  /** The recovery settings (packet settings with the prompt's overrides). */
  recovery: RecoveryConfig;
  /** Tools the agent may use, or `null` for the provider's default. */
  allowed_tools: string[] | null;
  /** The agent's permission mode, or `null` for the provider's default. */
  permission_mode: string | null;
  /** How long one provider session may run, in milliseconds (`null`: no limit). */
  timeout_ms: number | null;
  /** The working directory: the first target's path, else the default repo, else the packet. */
  cwd: string;
  /** The text sent to the agent: the file after its front matter. */
  body: string;
}

/** A loaded packet. */
export interface Packet {
  /** The packet directory's absolute path. */
  dir: string;
  /** The manifest's absolute path. */
  manifest_file: string;
  /** The packet's name (the directory name when the manifest has none). */
  name: string;
  /** The default provider. */
  provider: string;
  /** The default model, or `null` for the provider's default. */
  model: string | null;
  /** The repos, sorted by name. */
  repos: RepoConfig[];
  /** The packet's recovery settings. */
  recovery: RecoveryConfig;
  /** The view a run starts with. */
  view: ViewSettings;
  /** The prompts, in id order. */
  prompts: PromptSpec[];
  /** Things worth telling the user that do not stop a run (unknown keys). */
  warnings: string[];
}

const MANIFEST_KEYS = [
  "name",
  "provider",
  "model",
  "repos",
  "recovery",
  "log_mode",
  "tool_output",
  "thinking",
  "diff",
  "allowed_tools",
  "permission_mode",
  "timeout",
  "prompt_dir",
];
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
  "allowed_tools",
  "permission_mode",
  "timeout",
];
const PROVIDER_ALIASES: Record<string, string> = {
  simulation: "simulated",
  cursor_agent: "cursor",
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(file: string, problem: string): never {
  throw new UsageError(`Invalid packet file "${file}": ${problem}`, {
    code: "INVALID_PACKET",
  });
}

function optionalString(
  attrs: Record<string, unknown>,
  key: string,
  file: string,
): string | null {
  const value = attrs[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.trim() === "") {
    invalid(file, `${key} must be a non-empty string`);
  }
  return value.trim();
}

function stringList(
  value: unknown,
  key: string,
  file: string,
): string[] | null {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    if (typeof item !== "string" || item.trim() === "") {
      invalid(file, `${key} must be a list of non-empty strings`);
    }
  }
  return list.map((item: string) => item.trim());
}

function timeout(value: unknown, file: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (
    typeof value === "string" &&
    ["unbounded", "infinity", "infinite", "none"].includes(value)
  ) {
    return null;
  }
  if (typeof value === "number" && Number.isInteger(value) && value > 0) {
    return value;
  }
  invalid(
    file,
    `timeout must be a positive number of milliseconds or "unbounded", found ${
      JSON.stringify(value)
    }`,
  );
}

function provider(value: string | null): string | null {
  if (value === null) return null;
  const name = value.toLowerCase();
  return PROVIDER_ALIASES[name] ?? name;
}

/**
 * Normalises a prompt id: a whole number, written with at least two digits.
 *
 * @param value An id as written (`1`, `"1"`, `"007"`).
 * @returns The normalised id (`"01"`, `"07"`), or `null` when it is not a
 * whole number.
 *
 * @example Usage
 * ```ts
 * import { normalizePromptId } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * assert.equal(normalizePromptId(3), "03");
 * assert.equal(normalizePromptId("007"), "07");
 * assert.equal(normalizePromptId("../x"), null);
 * ```
 */
export function normalizePromptId(value: unknown): string | null {
  let digits: string;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    digits = String(value);
  } else if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) {
    digits = String(Number(value.trim()));
  } else {
    return null;
  }
  return digits.padStart(2, "0");
}

function parseRepos(
  raw: unknown,
  dir: string,
  file: string,
): RepoConfig[] {
  if (raw === undefined || raw === null) return [];
  const entries: [string, unknown][] = [];
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (!isRecord(item) || typeof item.name !== "string") {
        invalid(file, "each entry of repos must have a name");
      }
      entries.push([item.name as string, item]);
    }
  } else if (isRecord(raw)) {
    entries.push(...Object.entries(raw));
  } else {
    invalid(file, "repos must be a mapping of name: {path, default}");
  }
  const repos: RepoConfig[] = [];
  for (const [name, value] of entries) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
      invalid(file, `repo name "${name}" must be letters, digits, _ . or -`);
    }
    const spec = typeof value === "string" ? { path: value } : value;
    if (!isRecord(spec) || typeof spec.path !== "string" || !spec.path) {
      invalid(file, `repo "${name}" needs a path`);
    }
    if (spec.default !== undefined && typeof spec.default !== "boolean") {
      invalid(file, `repo "${name}": default must be true or false`);
    }
    const path = spec.path as string;
    repos.push({
      name,
      path: isAbsolute(path) ? path : resolve(dir, path),
      default: spec.default === true,
    });
  }
  repos.sort((a, b) => a.name.localeCompare(b.name));
  const defaults = repos.filter((repo) => repo.default);
  if (defaults.length > 1) {
    invalid(
      file,
      `only one repo can be the default, found ${
        defaults.map((r) => r.name).join(", ")
      }`,
    );
  }
  if (defaults.length === 0 && repos.length === 1) repos[0]!.default = true;
  return repos;
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

async function readFile(path: string, what: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new NotFoundError(`Cannot find ${what} "${path}"`, {
        code: "PACKET_NOT_FOUND",
      });
    }
    throw new UsageError(
      `Cannot read ${what} "${path}": ${(error as Error).message}`,
      { code: "INVALID_PACKET", cause: error },
    );
  }
}

interface ManifestDefaults {
  provider: string;
  model: string | null;
  recovery: RecoveryConfig;
  allowed_tools: string[] | null;
  permission_mode: string | null;
  timeout_ms: number | null;
}

async function loadPrompt(
  file: string,
  defaults: ManifestDefaults,
  repos: RepoConfig[],
  packetDir: string,
  warnings: string[],
): Promise<PromptSpec & { raw_depends_on: unknown }> {
  const text = await readFile(file, "prompt file");
  const { attributes, body } = parseFrontMatter(text, file);
  for (const key of Object.keys(attributes)) {
    if (!PROMPT_KEYS.includes(key)) {
      warnings.push(`Ignoring unknown key "${key}" in "${file}"`);
    }
  }
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
  const promptTimeout = timeout(attributes.timeout, file);
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
    provider: provider(optionalString(attributes, "provider", file)) ??
      defaults.provider,
    model: optionalString(attributes, "model", file) ?? defaults.model,
    recovery: parseRecovery(attributes.recovery, defaults.recovery, file),
    allowed_tools:
      stringList(attributes.allowed_tools, "allowed_tools", file) ??
        defaults.allowed_tools,
    permission_mode: optionalString(attributes, "permission_mode", file) ??
      defaults.permission_mode,
    timeout_ms: promptTimeout === undefined
      ? defaults.timeout_ms
      : promptTimeout,
    cwd: firstTarget?.path ?? defaultRepo?.path ?? packetDir,
    body,
  };
}

function resolveDependencies(
  prompts: (PromptSpec & { raw_depends_on: unknown })[],
): void {
  const ids = new Set(prompts.map((prompt) => prompt.id));
  for (const prompt of prompts) {
    const raw = prompt.raw_depends_on;
    const list = raw === undefined || raw === null
      ? []
      : Array.isArray(raw)
      ? raw
      : [raw];
    for (const item of list) {
      const id = normalizePromptId(item);
      if (id === null) {
        invalid(
          prompt.file,
          `depends_on entries must be prompt ids, found ${
            JSON.stringify(item)
          }`,
        );
      }
      if (id === prompt.id) {
        invalid(prompt.file, "a prompt cannot depend on itself");
      }
      if (!ids.has(id)) {
        invalid(prompt.file, `depends_on names unknown prompt "${id}"`);
      }
      if (!prompt.depends_on.includes(id)) prompt.depends_on.push(id);
    }
  }
}

function compareIds(a: string, b: string): number {
  return Number(a) - Number(b) || a.localeCompare(b);
}

/**
 * Loads a packet directory: its manifest (`prompt_runner_packet.md`) and its
 * prompts (`prompts/NN_slug.prompt.md`), with front matter checked, ids
 * normalised, contracts parsed and recovery settings merged.
 *
 * Requires `--allow-read` permission, and `--allow-env=LOG_TOKENS,LOG_STREAM`
 * (two debug switches the YAML parser reads).
 *
 * @param dir The packet directory.
 * @returns The packet, prompts in id order.
 * @throws {NotFoundError} when the directory or its manifest does not exist.
 * @throws {UsageError} when a file is malformed: bad YAML, a front matter
 * that is not a mapping, an unknown clause, a duplicate id, an id that does
 * not match its file name; the message names the file and the problem.
 *
 * @example Usage
 * ```ts
 * import { loadPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nname: hello\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_greet.prompt.md`,
 *   "---\nverify:\n  files_exist: [HELLO.md]\n---\nWrite HELLO.md.\n",
 * );
 * const packet = await loadPacket(dir);
 * assert.equal(packet.prompts[0]?.id, "01");
 * assert.deepEqual(packet.prompts[0]?.verify, { files_exist: ["HELLO.md"] });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadPacket(dir: string): Promise<Packet> {
  const root = resolve(dir);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root);
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      throw new NotFoundError(
        `Cannot find packet "${elidePath(dir)}": no such directory`,
        {
          code: "PACKET_NOT_FOUND",
        },
      );
    }
    throw new UsageError(
      `Cannot use packet "${elidePath(dir)}": ${
        (error as Error).message.replace(/:.*$/, "")
      }`,
      { code: "PACKET_UNUSABLE", cause: error },
    );
  }
  if (!info.isDirectory) {
    throw new NotFoundError(
      `Cannot load packet "${elidePath(dir)}": not a directory`,
      {
        code: "PACKET_NOT_FOUND",
      },
    );
  }
  const realRoot = await Deno.realPath(root);
  const manifestFile = join(realRoot, MANIFEST_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(manifestFile);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new NotFoundError(
        `Cannot find packet "${elidePath(dir)}": it has no ${MANIFEST_FILE}`,
        {
          code: "PACKET_NOT_FOUND",
          hint:
            "A packet is a directory with prompt_runner_packet.md and prompts/",
        },
      );
    }
    throw error;
  }
  const warnings: string[] = [];
  const { attributes } = parseFrontMatter(text, manifestFile);
  for (const key of Object.keys(attributes)) {
    if (!MANIFEST_KEYS.includes(key)) {
      warnings.push(`Ignoring unknown key "${key}" in "${manifestFile}"`);
    }
  }
  const repos = parseRepos(attributes.repos, realRoot, manifestFile);
  const recovery = parseRecovery(
    attributes.recovery,
    DEFAULT_RECOVERY,
    manifestFile,
  );
  const viewInput: Record<string, unknown> = {};
  for (const key of ["log_mode", "tool_output", "thinking", "diff"]) {
    if (attributes[key] !== undefined) viewInput[key] = attributes[key];
  }
  let view: ViewSettings;
  try {
    view = {
      ...DEFAULT_VIEW,
      ...parseViewSettings(viewInput, { allowEmpty: true }),
    };
  } catch (error) {
    invalid(manifestFile, (error as Error).message);
  }
  const defaults: ManifestDefaults = {
    provider: provider(optionalString(attributes, "provider", manifestFile)) ??
      "claude",
    model: optionalString(attributes, "model", manifestFile),
    recovery,
    allowed_tools: stringList(
      attributes.allowed_tools,
      "allowed_tools",
      manifestFile,
    ),
    permission_mode: optionalString(
      attributes,
      "permission_mode",
      manifestFile,
    ),
    timeout_ms: timeout(attributes.timeout, manifestFile) ?? null,
  };
  const promptDirName =
    optionalString(attributes, "prompt_dir", manifestFile) ??
      "prompts";
  const promptDir = resolve(realRoot, promptDirName);
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(promptDir)) {
      if (entry.name.endsWith(".prompt.md") && !entry.name.startsWith(".")) {
        files.push(join(promptDir, entry.name));
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (files.length === 0) {
    invalid(
      manifestFile,
      `no prompts found in "${promptDir}" (expected NN_slug.prompt.md files)`,
    );
  }
  files.sort();
  const prompts = [];
  for (const file of files) {
    prompts.push(await loadPrompt(file, defaults, repos, realRoot, warnings));
  }
  const seen = new Map<string, string>();
  for (const prompt of prompts) {
    const other = seen.get(prompt.id);
    if (other !== undefined) {
      invalid(
        prompt.file,
        `duplicate prompt id "${prompt.id}" (also used by "${other}")`,
      );
    }
    seen.set(prompt.id, prompt.file);
  }
  resolveDependencies(prompts);
  prompts.sort((a, b) => compareIds(a.id, b.id));
  return {
    dir: realRoot,
    manifest_file: manifestFile,
    name: optionalString(attributes, "name", manifestFile) ??
      basename(realRoot),
    provider: defaults.provider,
    model: defaults.model,
    repos,
    recovery,
    view,
    prompts: prompts.map(({ raw_depends_on: _, ...prompt }) => prompt),
    warnings,
  };
}
