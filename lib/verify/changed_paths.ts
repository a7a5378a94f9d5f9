/**
 * The `changed_paths_only` clause, and the git status reading it shares with
 * the runner's "did the workspace change" test.
 *
 * @module
 */

import { join, relative } from "node:path";
import type { PathEntry } from "../packet/contract.ts";
import type { VerifyItem } from "./report.ts";
import { isIgnored, repoOf, resolveEntry, type VerifyScope } from "./scope.ts";
import { runProcess } from "../shared/run_process.ts";

/** The changed paths of a git work tree, each with a fingerprint. */
export type GitChanges =
  | { ok: true; top: string; changes: Record<string, string> }
  | { ok: false; error: string };

const GIT_TIMEOUT_MS = 30_000;

async function fingerprint(path: string, code: string): Promise<string> {
  try {
    const info = await Deno.lstat(path);
    return `${code}:${info.size}:${info.mtime?.getTime() ?? 0}`;
  } catch {
    return `${code}:gone`;
  }
}

/**
 * Reads `git status` of the work tree containing `dir`: every changed,
 * staged or untracked path (relative to the top of the work tree), with a
 * fingerprint that changes when the file does.
 *
 * Requires `--allow-run` and `--allow-read` permissions.
 */
export async function readGitChanges(dir: string): Promise<GitChanges> {
  const top = await runProcess("git", {
    args: ["-C", dir, "rev-parse", "--show-toplevel"],
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (top.state !== "exited" || top.code !== 0) {
    const why = top.state === "not_found"
      ? "git is not installed"
      : top.stderr.trim() || `git exited with ${top.code ?? top.state}`;
    return { ok: false, error: `cannot read git status of ${dir}: ${why}` };
  }
  const root = top.stdout.trim();
  const status = await runProcess("git", {
    args: ["-C", root, "status", "--porcelain=v1", "-z", "-uall"],
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (status.state !== "exited" || status.code !== 0) {
    return {
      ok: false,
      error: `cannot read git status of ${root}: ${
        status.stderr.trim() || status.state
      }`,
    };
  }
  const changes: Record<string, string> = {};
  const fields = status.stdout.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const code = field.slice(0, 2);
    const path = field.slice(3);
    changes[path] = await fingerprint(join(root, path), code);
    // A rename or copy is followed by its source path.
    if (code.includes("R") || code.includes("C")) {
      const source = fields[++i];
      if (source) changes[source] = `${code}:source`;
    }
  }
  return { ok: true, top: root, changes };
}

async function realPath(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

function allowedBy(path: string, allowed: string[]): boolean {
  return allowed.some((entry) =>
    entry === "" || entry === "/" || entry === path ||
    (entry.endsWith("/")
      ? path.startsWith(entry)
      : path.startsWith(`${entry}/`))
  );
}

/**
 * Checks, per repo, that every path changed in the work tree is one the
 * contract allows. Paths already changed when the prompt started (the
 * scope's baseline) are ignored while they stay unchanged.
 */
export async function checkChangedPaths(
  entries: (string | PathEntry)[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const groups = new Map<string, { repo?: string; allowed: string[] }>();
  for (const entry of entries) {
    const target = resolveEntry(entry, scope);
    const key = target.repo !== undefined
      ? scope.repos[target.repo]!
      : target.root;
    const group = groups.get(key) ??
      {
        ...(target.repo === undefined ? {} : { repo: target.repo }),
        allowed: [],
      };
    group.allowed.push(
      target.absolute + (/[/]$/.test(target.label) ? "/" : ""),
    );
    groups.set(key, group);
  }
  const items: VerifyItem[] = [];
  for (const [root, group] of groups) {
    const repo = group.repo ?? repoOf(root, scope.repos);
    const base = {
      clause: "changed_paths_only" as const,
      label: repo ?? root,
      ...(repo === undefined ? {} : { repo }),
    };
    const git = await readGitChanges(root);
    if (!git.ok) {
      items.push({ ...base, status: "fault", reason: git.error });
      continue;
    }
    // git names the real work tree: resolve symlinks on our side too.
    const realRoot = await realPath(root);
    const allowed = group.allowed.map((path) =>
      join(relative(git.top, realRoot), relative(root, path)) +
      (path.endsWith("/") ? "/" : "")
    ).map((path) => path === "." ? "" : path);
    const ignore = await Promise.all((scope.ignore ?? []).map(realPath));
    const baseline = scope.baseline?.[git.top] ?? {};
    const changed = Object.entries(git.changes)
      .filter(([path, print]) =>
        !isIgnored(join(git.top, path), { ...scope, ignore }) &&
        baseline[path] !== print
      )
      .map(([path]) => path)
      .sort();
    const disallowed = changed.filter((path) => !allowedBy(path, allowed));
    items.push({
      ...base,
      status: disallowed.length ? "fail" : "pass",
      reason: disallowed.length
        ? `disallowed: ${disallowed.join(", ")} (allowed: ${
          allowed.join(", ")
        })`
        : changed.length
        ? `ok: ${changed.length} changed path(s), all allowed`
        : "ok: nothing changed",
      changed_paths: changed,
    });
  }
  return items;
}
