/**
 * Loading a packet: the manifest, its prompts, their contracts and the
 * recovery settings, checked and normalised.
 *
 * @module
 */

import { basename, isAbsolute, join, resolve } from "node:path";
import {
  elidePath,
  errorText,
  NotFoundError,
  StateError,
  UsageError,
} from "../shared/errors.ts";
import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import { DEFAULT_VIEW } from "../shared/view.ts";
import {
  invalid,
  optionalString,
  provider,
  refuseRenamedKeys,
  timeout,
} from "./_fields.ts";
import { agentBlock } from "./agent_options.ts";
import { refuseUnknownKeys } from "./known_keys.ts";
import {
  loadPrompt,
  type ManifestDefaults,
  NESTED_KEYS,
} from "./load_prompt.ts";
import {
  MANIFEST_FILE,
  type Packet,
  type PromptSpec,
  type RepoConfig,
} from "./packet.ts";
import { inPacket, insidePacket, readPacketFile } from "./packet_files.ts";
import { comparePromptIds, normalizePromptId } from "../shared/prompt_id.ts";
import { DEFAULT_RECOVERY, parseRecovery } from "./recovery.ts";
import { isRecord } from "../shared/is_record.ts";
import { parseBudget } from "./budget.ts";
import { parseNotifyBlock } from "./notify_block.ts";

export {
  MANIFEST_FILE,
  type Packet,
  type PromptSpec,
  type RepoConfig,
} from "./packet.ts";
export { normalizePromptId } from "../shared/prompt_id.ts";

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
  "agent",
  "timeout_ms",
  "progress_timeout_ms",
  "budget",
  "prompt_dir",
  "notify",
];
/** The keys of a repo: `name: {path, default}`, or `{name, path, default}` in a list. */
const REPO_KEYS = ["path", "default"];

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
      const { name, ...spec } = item;
      entries.push([name as string, spec]);
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
    if (isRecord(spec)) {
      refuseUnknownKeys(spec, REPO_KEYS, file, { at: `repos.${name}` });
    }
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

/**
 * The entries of the prompt directory, reached without following a link;
 * none when it does not exist.
 */
function listPromptDir(
  root: string,
  promptDir: string,
  manifestFile: string,
): Deno.DirEntry[] {
  try {
    return inPacket(root, promptDir, (here) => here.list());
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    if (error instanceof StateError && error.code === "NOT_A_DIRECTORY") {
      invalid(manifestFile, `"${promptDir}" is not a directory`);
    }
    throw error;
  }
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
 * that is not a mapping, an unknown key at any level (named by its dotted
 * path, the nearest known key as its hint), an unknown clause, a duplicate
 * id, an id that does not match its file name, a `prompt_dir` outside the
 * packet; the message names the file and the problem.
 * @throws {LinkRefusedError} when the manifest, the prompt directory or a
 * prompt file is a link (the packet directory itself may be one): a packet
 * is read only inside its directory, never through a link.
 *
 * @example Usage
 * ```ts
 * import { loadPacket } from "./mod.ts";
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
        errorText(error).replace(/:.*$/, "")
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
  // Below the packet directory nothing is read through a link.
  const text = await readPacketFile(realRoot, manifestFile, "manifest");
  if (text === null) {
    throw new NotFoundError(
      `Cannot find packet "${elidePath(dir)}": it has no ${MANIFEST_FILE}`,
      {
        code: "PACKET_NOT_FOUND",
        hint:
          "A packet is a directory with prompt_runner_packet.md and prompts/",
      },
    );
  }
  // Imported here, not at the top: the YAML parser is the dearest module to
  // load, and commands that never read a packet should not pay for it.
  const { parseFrontMatter } = await import("./front_matter.ts");
  const { attributes } = parseFrontMatter(text, manifestFile);
  refuseRenamedKeys(attributes, manifestFile);
  refuseUnknownKeys(attributes, MANIFEST_KEYS, manifestFile, {
    elsewhere: NESTED_KEYS,
  });
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
    invalid(manifestFile, errorText(error));
  }
  const defaults: ManifestDefaults = {
    provider: provider(optionalString(attributes, "provider", manifestFile)) ??
      "claude",
    model: optionalString(attributes, "model", manifestFile),
    recovery,
    agent: agentBlock(attributes.agent, manifestFile, invalid),
    timeout_ms: timeout(attributes.timeout_ms, manifestFile) ?? null,
    progress_timeout_ms: timeout(
      attributes.progress_timeout_ms,
      manifestFile,
      "progress_timeout_ms",
    ) ?? null,
  };
  const promptDirName =
    optionalString(attributes, "prompt_dir", manifestFile) ??
      "prompts";
  const promptDir = resolve(realRoot, promptDirName);
  if (!insidePacket(realRoot, promptDir)) {
    invalid(
      manifestFile,
      `prompt_dir must name a directory inside the packet, found "${promptDirName}"`,
    );
  }
  const files: string[] = [];
  for (const entry of listPromptDir(realRoot, promptDir, manifestFile)) {
    if (entry.name.endsWith(".prompt.md") && !entry.name.startsWith(".")) {
      files.push(join(promptDir, entry.name));
    }
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
    prompts.push(await loadPrompt(file, defaults, repos, realRoot));
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
  prompts.sort((a, b) => comparePromptIds(a.id, b.id));
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
    budget: parseBudget(attributes.budget, manifestFile),
    notify: parseNotifyBlock(attributes.notify, manifestFile, realRoot),
    prompts: prompts.map(({ raw_depends_on: _, ...prompt }) => prompt),
    warnings: [],
  };
}
