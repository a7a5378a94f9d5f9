/**
 * The verify contract model: clause names, entry shapes and their checks.
 *
 * @module
 */

import { errorText, UsageError } from "../shared/errors.ts";
import { nearestKey, refuseUnknownKeys } from "./known_keys.ts";
import { isRecord } from "../shared/is_record.ts";

/** The verify clauses this version enforces, in report order. */
export const CLAUSES = [
  "files_exist",
  "files_absent",
  "contains",
  "matches",
  "commands",
  "changed_paths_only",
] as const;

/** A verify clause name. */
export type Clause = typeof CLAUSES[number];

/** A path entry: a path relative to the prompt's scope, or in a named repo. */
export interface PathEntry {
  /** The path, relative to the repo (or the prompt's scope), or absolute. */
  path: string;
  /** The repo the path belongs to; the prompt's scope when absent. */
  repo?: string;
}

/** A `contains` entry: the file must contain `text` literally. */
export interface ContainsEntry extends PathEntry {
  /** The text the file must contain. */
  text: string;
}

/** A `matches` entry: the file must match the regular expression `pattern`. */
export interface MatchesEntry extends PathEntry {
  /** A JavaScript regular expression, without flags. */
  pattern: string;
}

/** A `commands` entry: an argv that must exit 0. Never run through a shell. */
export interface CommandEntry {
  /** The executable: a name looked up on PATH, or a path. */
  exec: string;
  /** The arguments. */
  args?: string[];
  /** How long the command may run, in milliseconds (default 30000). */
  timeout_ms?: number;
  /** The working directory, relative to the repo (or the prompt's scope). */
  cwd?: string;
  /** The repo whose root `cwd` is relative to. */
  repo?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Text the combined output must contain. */
  stdout_contains?: string;
}

/** A verify contract: each clause holds a list of entries. */
export interface Contract {
  /** Paths that must exist. */
  files_exist?: (string | PathEntry)[];
  /** Paths that must not exist. */
  files_absent?: (string | PathEntry)[];
  /** Files that must contain a text. */
  contains?: ContainsEntry[];
  /** Files that must match a pattern. */
  matches?: MatchesEntry[];
  /** Commands that must exit 0. */
  commands?: CommandEntry[];
  /** The only paths the prompt may change (per repo). */
  changed_paths_only?: (string | PathEntry)[];
}

/** The keys of each clause's entries (written as mappings). */
const ENTRY_KEYS: Record<Clause, readonly string[]> = {
  files_exist: ["path", "repo"],
  files_absent: ["path", "repo"],
  changed_paths_only: ["path", "repo"],
  contains: ["path", "text", "repo"],
  matches: ["path", "pattern", "repo"],
  commands: [
    "exec",
    "args",
    "timeout_ms",
    "cwd",
    "repo",
    "env",
    "stdout_contains",
  ],
};

/** The default timeout of a verify command, in milliseconds. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/** Tells whether a name is a known clause. */
export function isClause(name: string): name is Clause {
  return (CLAUSES as readonly string[]).includes(name);
}

type Fail = (message: string) => never;

function checkKeys(
  entry: Record<string, unknown>,
  allowed: readonly string[],
  fail: Fail,
): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.includes(key)) {
      fail(`unknown key "${key}" (expected ${allowed.join(", ")})`);
    }
  }
}

function checkString(value: unknown, what: string, fail: Fail): string {
  if (typeof value !== "string" || value.trim() === "") {
    fail(`${what} must be a non-empty string`);
  }
  return value as string;
}

function checkRepo(
  entry: Record<string, unknown>,
  repos: readonly string[],
  fail: Fail,
): void {
  if (entry.repo === undefined) return;
  const repo = checkString(entry.repo, "repo", fail);
  if (!repos.includes(repo)) {
    fail(
      `unknown repo "${repo}" (the packet declares ${
        repos.length ? repos.join(", ") : "no repos"
      })`,
    );
  }
}

function checkPathEntry(
  entry: unknown,
  repos: readonly string[],
  fail: Fail,
): string | PathEntry {
  if (typeof entry === "string") return checkString(entry, "a path", fail);
  if (!isRecord(entry)) fail("an entry must be a path or {path, repo}");
  const record = entry as Record<string, unknown>;
  checkKeys(record, ENTRY_KEYS.files_exist, fail);
  checkString(record.path, "path", fail);
  checkRepo(record, repos, fail);
  return record as unknown as PathEntry;
}

function checkContains(
  entry: unknown,
  repos: readonly string[],
  fail: Fail,
): ContainsEntry {
  if (!isRecord(entry)) fail("an entry must be {path, text}");
  const record = entry as Record<string, unknown>;
  checkKeys(record, ENTRY_KEYS.contains, fail);
  checkString(record.path, "path", fail);
  if (typeof record.text !== "string" || record.text === "") {
    fail("text must be a non-empty string");
  }
  checkRepo(record, repos, fail);
  return record as unknown as ContainsEntry;
}

function checkMatches(
  entry: unknown,
  repos: readonly string[],
  fail: Fail,
): MatchesEntry {
  if (!isRecord(entry)) fail("an entry must be {path, pattern}");
  const record = entry as Record<string, unknown>;
  checkKeys(record, ENTRY_KEYS.matches, fail);
  checkString(record.path, "path", fail);
  const pattern = checkString(record.pattern, "pattern", fail);
  try {
    new RegExp(pattern);
  } catch (error) {
    fail(
      `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${
        errorText(error)
      }`,
    );
  }
  checkRepo(record, repos, fail);
  return record as unknown as MatchesEntry;
}

function checkCommand(
  entry: unknown,
  repos: readonly string[],
  fail: Fail,
): CommandEntry {
  if (typeof entry === "string") {
    fail(
      `a command must be {exec, args}, not the shell string ${
        JSON.stringify(entry)
      }: commands are never run through a shell`,
    );
  }
  if (!isRecord(entry)) fail("a command must be {exec, args}");
  const record = entry as Record<string, unknown>;
  checkKeys(record, ENTRY_KEYS.commands, fail);
  checkString(record.exec, "exec", fail);
  if (
    record.args !== undefined &&
    (!Array.isArray(record.args) ||
      !record.args.every((arg) => typeof arg === "string"))
  ) {
    fail("args must be a list of strings");
  }
  if (
    record.timeout_ms !== undefined &&
    (!Number.isInteger(record.timeout_ms) || (record.timeout_ms as number) <= 0)
  ) {
    fail("timeout_ms must be a positive integer");
  }
  if (record.cwd !== undefined) checkString(record.cwd, "cwd", fail);
  if (
    record.env !== undefined &&
    (!isRecord(record.env) ||
      !Object.values(record.env).every((v) => typeof v === "string"))
  ) {
    fail("env must be a mapping of strings");
  }
  if (
    record.stdout_contains !== undefined &&
    typeof record.stdout_contains !== "string"
  ) {
    fail("stdout_contains must be a string");
  }
  checkRepo(record, repos, fail);
  return record as unknown as CommandEntry;
}

/**
 * Checks one entry of a clause and returns it typed.
 *
 * @param clause The clause the entry belongs to.
 * @param entry The entry, as parsed from YAML or JSON.
 * @param repos The repo names the packet declares.
 * @returns The entry, unchanged but typed.
 * @throws {Error} with the problem in plain words when the entry is malformed.
 */
export function checkEntry(
  clause: Clause,
  entry: unknown,
  repos: readonly string[],
): unknown {
  const fail: Fail = (message) => {
    throw new Error(message);
  };
  switch (clause) {
    case "files_exist":
    case "files_absent":
    case "changed_paths_only":
      return checkPathEntry(entry, repos, fail);
    case "contains":
      return checkContains(entry, repos, fail);
    case "matches":
      return checkMatches(entry, repos, fail);
    case "commands":
      return checkCommand(entry, repos, fail);
  }
}

/**
 * Checks a `verify:` mapping and returns it as a {@linkcode Contract} with
 * every clause as a list.
 *
 * @param raw The value of the `verify:` key (absent means an empty contract).
 * @param file The file the contract came from, named in errors.
 * @param repos The repo names the packet declares.
 * @returns The contract.
 * @throws {UsageError} naming the file, the clause and the problem; an
 * unknown key by its dotted path (`verify.commands[0].timout_ms`), with the
 * nearest known key as its hint.
 */
export function parseContract(
  raw: unknown,
  file: string,
  repos: readonly string[],
): Contract {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) {
    throw new UsageError(
      `Invalid verify contract in "${file}": expected a mapping of clauses`,
      { code: "INVALID_PACKET" },
    );
  }
  const contract: Record<string, unknown[]> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!isClause(name)) {
      const near = nearestKey(name, CLAUSES);
      throw new UsageError(
        `Unknown verify clause "${name}" in "${file}": known clauses are ${
          CLAUSES.join(", ")
        }`,
        {
          code: "UNKNOWN_CLAUSE",
          ...(near === null ? {} : { hint: `Did you mean "verify.${near}"?` }),
        },
      );
    }
    const entries = Array.isArray(value) ? value : [value];
    contract[name] = entries.map((entry, index) => {
      if (isRecord(entry)) {
        refuseUnknownKeys(entry, ENTRY_KEYS[name], file, {
          at: `verify.${name}[${index}]`,
        });
      }
      try {
        return checkEntry(name, entry, repos);
      } catch (error) {
        throw new UsageError(
          `Invalid verify entry ${name}[${index}] in "${file}": ${
            errorText(error)
          }`,
          { code: "INVALID_PACKET" },
        );
      }
    });
  }
  return contract as Contract;
}

/**
 * Returns a short, stable label for a contract entry, used in reports and
 * contract diffs: the path for a path entry, `key=value` pairs otherwise.
 */
export function describeEntry(entry: unknown): string {
  if (typeof entry === "string") return entry;
  if (!isRecord(entry)) return JSON.stringify(entry);
  if (Object.keys(entry).length === 1 && typeof entry.path === "string") {
    return entry.path;
  }
  if (
    Object.keys(entry).length === 2 && typeof entry.path === "string" &&
    typeof entry.repo === "string"
  ) {
    return `${entry.repo}:${entry.path}`;
  }
  return Object.keys(entry).sort().map((key) => {
    const value = entry[key];
    return `${key}=${
      typeof value === "string" ? value : JSON.stringify(value)
    }`;
  }).join(" ");
}
