/**
 * Probing git work trees for changes, so the runner can tell whether an
 * attempt changed anything.
 *
 * @module
 */

import { join, sep } from "node:path";
import { readGitChanges } from "../verify/changed_paths.ts";

/** The changed paths of each work tree a prompt touches, by top directory. */
export type GitProbe = Record<string, Record<string, string>>;

function ignored(path: string, ignore: string[]): boolean {
  return ignore.some((root) => path === root || path.startsWith(root + sep));
}

/**
 * Reads the git status of each root's work tree. Roots outside git are left
 * out: the runner then judges changes by the verifier's evidence alone.
 */
export async function probeGitChanges(
  roots: string[],
  ignore: string[],
): Promise<GitProbe> {
  const probe: GitProbe = {};
  for (const root of new Set(roots)) {
    const git = await readGitChanges(root);
    if (!git.ok || probe[git.top]) continue;
    const changes: Record<string, string> = {};
    for (const [path, print] of Object.entries(git.changes)) {
      if (!ignored(join(git.top, path), ignore)) changes[path] = print;
    }
    probe[git.top] = changes;
  }
  return probe;
}

/** Tells whether anything differs between two probes. */
export function probesDiffer(
  before: GitProbe,
  after: GitProbe,
): boolean {
  for (const top of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[top] ?? {};
    const b = after[top] ?? {};
    const paths = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const path of paths) if (a[path] !== b[path]) return true;
  }
  return false;
}
