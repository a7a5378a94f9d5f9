/**
 * The operator's `workspace.yml`: a workspace id, an optional packet
 * binding, repo path overrides and an optional state root (DESIGN §10),
 * checked strictly. Every error names the file, the key and its line.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "../shared/posix_path.ts";
import { NotFoundError, UsageError } from "../shared/errors.ts";
import { MANIFEST_FILE } from "../packet/packet.ts";
import { defaultWorkspaceRoot, type StateHomeOptions } from "./state_home.ts";
import type { NotifyRule } from "../shared/notify_rule.ts";
import { parseNotifyRules } from "../notify/notify_rules.ts";

/** A workspace id: `[a-z0-9][a-z0-9._-]{0,63}`. */
export const WORKSPACE_ID: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const KEYS = ["id", "packet", "repos", "state_root", "fleet", "notify"];

/** A loaded `workspace.yml`, every path absolute. */
export interface WorkspaceFile {
  /** The workspace id. */
  id: string;
  /** The workspace file itself. */
  file: string;
  /** The bound packet directory, or `null` when the file binds none. */
  packet: string | null;
  /** Repo name → the path that replaces the packet's. */
  repos: Record<string, string>;
  /** The state root: `state_root`, else the default under the state home. */
  state_root: string;
  /** The fleet its runs join (`fleet:`, DESIGN §12), or `null`. */
  fleet: string | null;
  /** Its `notify:` rules, applied in addition to the packet's. */
  notify: NotifyRule[];
}

/**
 * The line of a key in a workspace file, when the file can still be read
 * (for messages about a file loaded earlier).
 */
export async function workspaceKeyLine(
  file: string,
  key: readonly string[],
): Promise<number | undefined> {
  try {
    const { parseYamlFile } = await import("../packet/front_matter.ts");
    return parseYamlFile(await Deno.readTextFile(file), file).lineOf(key);
  } catch {
    return undefined;
  }
}

/** Tells whether `name` is a well-formed workspace id. */
export function isWorkspaceId(name: string): boolean {
  return WORKSPACE_ID.test(name);
}

/** Whether `path` is `dir` or below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

async function kindOf(path: string): Promise<"dir" | "file" | null> {
  try {
    return (await Deno.stat(path)).isDirectory ? "dir" : "file";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof Deno.errors.NotADirectory) return null;
    throw error;
  }
}

/**
 * Reads and checks a workspace file. Relative paths in it are relative to
 * the file's directory: the directory of the file it links to, when it is
 * a symbolic link.
 *
 * @param path The file (relative to `options.cwd`).
 * @param options The directory `path` is relative to, and the environment
 * the default state root comes from.
 * @throws {NotFoundError} (`WORKSPACE_NOT_FOUND`) when the file, its packet
 * or a repo path does not exist.
 * @throws {UsageError} (`INVALID_WORKSPACE`) for invalid YAML, an unknown
 * key, a bad id, a packet that is not a packet, or a value of the wrong type.
 */
export async function loadWorkspaceFile(
  path: string,
  options: StateHomeOptions & { cwd: string },
): Promise<WorkspaceFile> {
  const file = resolve(options.cwd, path);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      throw new NotFoundError(`Cannot find workspace file "${file}"`, {
        code: "WORKSPACE_NOT_FOUND",
      });
    }
    if (error instanceof Deno.errors.IsADirectory) {
      throw new UsageError(
        `Cannot read workspace file "${file}": it is a directory`,
        {
          code: "INVALID_WORKSPACE",
          hint: "Name the workspace.yml file itself",
        },
      );
    }
    throw error;
  }
  const { parseYamlFile } = await import("../packet/front_matter.ts");
  const yaml = parseYamlFile(text, file, "workspace file");
  const at = (key: readonly string[]): string => {
    const line = yaml.lineOf(key);
    return `"${file}"${line === undefined ? "" : `, line ${line}`}, key "${
      key.join(".")
    }"`;
  };
  const invalid = (key: readonly string[], detail: string): never => {
    throw new UsageError(`Invalid workspace file ${at(key)}: ${detail}`, {
      code: "INVALID_WORKSPACE",
    });
  };
  const missing = (key: readonly string[], what: string): never => {
    throw new NotFoundError(
      `Invalid workspace file ${at(key)}: ${what} does not exist`,
      { code: "WORKSPACE_NOT_FOUND" },
    );
  };
  const value = yaml.value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(
      `Invalid workspace file "${file}", line 1: expected a mapping with an id, found ${
        value === null ? "nothing" : Array.isArray(value) ? "a list" : "a value"
      }`,
      { code: "INVALID_WORKSPACE" },
    );
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) {
      invalid([key], `unknown key (allowed: ${KEYS.join(", ")})`);
    }
  }
  if (raw.id === undefined) {
    throw new UsageError(
      `Invalid workspace file "${file}", line 1, key "id": the id is missing`,
      { code: "INVALID_WORKSPACE" },
    );
  }
  if (typeof raw.id !== "string" || !isWorkspaceId(raw.id)) {
    invalid(
      ["id"],
      `${
        JSON.stringify(raw.id)
      } is not a workspace id: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64`,
    );
  }
  const id = raw.id as string;
  // Beside the file itself: a workspace.yml linked from elsewhere means
  // what it says where it lives.
  const base = dirname(await Deno.realPath(file));
  const pathOf = (key: readonly string[], given: unknown): string => {
    if (typeof given !== "string" || given.trim() === "") {
      invalid(key, "expected a path");
    }
    const text = given as string;
    return isAbsolute(text) ? resolve(text) : resolve(base, text);
  };
  let packet: string | null = null;
  if (raw.packet !== undefined && raw.packet !== null) {
    packet = pathOf(["packet"], raw.packet);
    const kind = await kindOf(packet);
    if (kind === null) missing(["packet"], `the packet "${packet}"`);
    if (
      kind !== "dir" || (await kindOf(resolve(packet, MANIFEST_FILE))) === null
    ) {
      invalid(
        ["packet"],
        `"${packet}" is not a packet directory (it has no ${MANIFEST_FILE})`,
      );
    }
    packet = await Deno.realPath(packet);
  }
  const repos: Record<string, string> = {};
  if (raw.repos !== undefined && raw.repos !== null) {
    if (typeof raw.repos !== "object" || Array.isArray(raw.repos)) {
      invalid(["repos"], "expected a mapping of repo name: path");
    }
    for (const [name, given] of Object.entries(raw.repos as object)) {
      const key = ["repos", name];
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
        invalid(key, "a repo name is letters, digits, '_', '.' or '-'");
      }
      const repo = pathOf(key, given);
      const kind = await kindOf(repo);
      if (kind === null) missing(key, `the repo path "${repo}"`);
      if (kind !== "dir") invalid(key, `"${repo}" is not a directory`);
      repos[name] = await Deno.realPath(repo);
    }
  }
  const stateRoot = raw.state_root === undefined || raw.state_root === null
    ? defaultWorkspaceRoot(id, options)
    : pathOf(["state_root"], raw.state_root);
  let fleet: string | null = null;
  if (raw.fleet !== undefined && raw.fleet !== null) {
    if (
      typeof raw.fleet !== "string" || !/^(nats|tls):\/\/\S+$/i.test(raw.fleet)
    ) {
      invalid(["fleet"], "expected a fleet URL: nats://host:port or tls://…");
    }
    fleet = raw.fleet as string;
  }
  const notify = parseNotifyRules(raw.notify, {
    dir: base,
    fail: (key, detail) => invalid(key.split("."), detail),
  });
  return { id, file, packet, repos, state_root: stateRoot, fleet, notify };
}
