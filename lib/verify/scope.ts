import { isAbsolute, relative, resolve, sep } from "node:path";
import type { PathEntry } from "../packet/contract.ts";

/** Where a prompt's contract entries resolve. */
export interface VerifyScope {
  /** The prompt's working directory: relative entries resolve here. */
  cwd: string;
  /** Every repo of the packet by name, with its absolute path. */
  repos: Record<string, string>;
  /** Absolute paths whose changes the verifier ignores (the state root). */
  ignore?: string[];
  /**
   * Paths already changed when the prompt started, per repo root, with their
   * fingerprints: `changed_paths_only` ignores them while they stay the same.
   */
  baseline?: Record<string, Record<string, string>>;
}

/** A path entry resolved against a scope. */
export interface ResolvedPath {
  /** The repo it belongs to, if any. */
  repo: string | undefined;
  /** The root it is relative to. */
  root: string;
  /** The absolute path. */
  absolute: string;
  /** The label used in reports. */
  label: string;
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The repo whose root equals or contains `path`, deepest first. */
export function repoOf(
  path: string,
  repos: Record<string, string>,
): string | undefined {
  let best: [string, string] | undefined;
  for (const [name, root] of Object.entries(repos)) {
    if (isInside(path, root) && (!best || root.length > best[1].length)) {
      best = [name, root];
    }
  }
  return best?.[0];
}

/** Resolves a path entry (`"a.md"`, `"app:a.md"`, `{repo, path}`). */
export function resolveEntry(
  entry: string | PathEntry,
  scope: VerifyScope,
): ResolvedPath {
  let repo: string | undefined;
  let path: string;
  if (typeof entry === "string") {
    const colon = entry.indexOf(":");
    const prefix = colon > 0 ? entry.slice(0, colon) : "";
    if (prefix && scope.repos[prefix] !== undefined) {
      repo = prefix;
      path = entry.slice(colon + 1);
    } else {
      path = entry;
    }
  } else {
    repo = entry.repo;
    path = entry.path;
  }
  const root = repo !== undefined ? scope.repos[repo]! : scope.cwd;
  const absolute = isAbsolute(path) ? path : resolve(root, path);
  const label = typeof entry === "string"
    ? entry
    : repo !== undefined
    ? `${repo}:${path}`
    : path;
  return { repo: repo ?? repoOf(root, scope.repos), root, absolute, label };
}

/** Tells whether `path` lies inside one of the ignored roots. */
export function isIgnored(path: string, scope: VerifyScope): boolean {
  return (scope.ignore ?? []).some((root) =>
    path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
  );
}
