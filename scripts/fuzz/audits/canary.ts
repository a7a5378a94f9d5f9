/**
 * The canary: a directory outside the state root that links point into,
 * compared byte for byte before and after.
 *
 * @module
 */

import { join, relative } from "node:path";
import { sha256 } from "../../_harness/mod.ts";

/** One entry of a directory tree, as compared before and after. */
export interface TreeEntry {
  /** `file`, `dir`, `link` or `other`. */
  kind: string;
  /** Permission bits. */
  mode: number | null;
  /** Modification time (ms). */
  mtime: number | null;
  /** A file's content digest, a link's target. */
  content: string | null;
}

/** Records a directory tree without following links: every entry's kind, mode, mtime and content. */
export async function snapshotTree(
  dir: string,
): Promise<Map<string, TreeEntry>> {
  const tree = new Map<string, TreeEntry>();
  const walk = async (path: string): Promise<void> => {
    const info = await Deno.lstat(path);
    const rel = relative(dir, path) || ".";
    const base = { mode: info.mode, mtime: info.mtime?.getTime() ?? null };
    if (info.isSymlink) {
      tree.set(rel, {
        kind: "link",
        ...base,
        content: await Deno.readLink(path),
      });
    } else if (info.isFile) {
      tree.set(rel, {
        kind: "file",
        ...base,
        content: await sha256(await Deno.readFile(path)),
      });
    } else if (info.isDirectory) {
      tree.set(rel, { kind: "dir", ...base, content: null });
      for await (const entry of Deno.readDir(path)) {
        await walk(join(path, entry.name));
      }
    } else {
      tree.set(rel, { kind: "other", ...base, content: null });
    }
  };
  await walk(dir);
  return tree;
}

/** Every difference between two snapshots of a tree. */
export function compareTrees(
  before: ReadonlyMap<string, TreeEntry>,
  after: ReadonlyMap<string, TreeEntry>,
): string[] {
  const problems: string[] = [];
  for (const [path, old] of before) {
    const now = after.get(path);
    if (now === undefined) {
      problems.push(`${path}: removed`);
      continue;
    }
    for (const key of ["kind", "mode", "mtime", "content"] as const) {
      // A directory's mtime is its listing's: a new or removed entry shows below.
      if (key === "mtime" && old.kind === "dir") continue;
      if (old[key] !== now[key]) {
        problems.push(`${path}: ${key} changed (${old[key]} → ${now[key]})`);
      }
    }
  }
  for (const path of after.keys()) {
    if (!before.has(path)) problems.push(`${path}: new`);
  }
  return problems;
}

export async function makeCanary(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, "dir", "sub"), { recursive: true });
  await Deno.mkdir(join(dir, "empty"));
  await Deno.writeTextFile(join(dir, "secret.txt"), "canary: do not touch\n");
  await Deno.writeTextFile(join(dir, "dir", "inner.txt"), "inner canary\n");
  await Deno.writeTextFile(join(dir, "dir", "sub", "deep.json"), "{}\n");
  await Deno.writeTextFile(join(dir, "log.jsonl"), "");
  await Deno.writeTextFile(join(dir, "hardlink-target.txt"), "hard canary\n");
}
